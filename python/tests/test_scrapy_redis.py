"""`urikey.scrapy.RedisDupeFilter` beside scrapy-redis's `RFPDupeFilter`,
on a real Redis server: the same key names, connection settings and log
messages, claims shared by filters in several processes, and a cluster."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from redis_servers import RedisCluster
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler
from scrapy_redis.dupefilter import RFPDupeFilter as TheirFilter

import urikey
from urikey.scrapy import RedisDupeFilter, RequestFingerprinter


def spider(redis_url: str, name: str = "books", **settings: object) -> Spider:
    crawler = get_crawler(Spider, {"REDIS_URL": redis_url, **settings})
    return Spider.from_crawler(crawler, name)


def test_from_spider_uses_scrapy_redis_key_names(redis_url: str) -> None:
    ours = RedisDupeFilter.from_spider(spider(redis_url))
    theirs = TheirFilter.from_spider(spider(redis_url))
    assert ours.key == theirs.key == "books:dupefilter"
    custom = {"SCHEDULER_DUPEFILTER_KEY": "crawl:%(spider)s:seen"}
    assert RedisDupeFilter.from_spider(spider(redis_url, **custom)).key == "crawl:books:seen"
    ours.request_seen(Request("http://a.com/"))
    info = ours.seen.info()
    assert info["name"] == "books:dupefilter"


def test_from_crawler_makes_a_one_time_key(redis_url: str) -> None:
    crawler = get_crawler(settings_dict={"REDIS_URL": redis_url})
    df = RedisDupeFilter.from_crawler(crawler)
    assert df.key.startswith("dupefilter:") and df.key[len("dupefilter:") :].isdigit()
    assert not df.request_seen(Request("http://a.com/"))
    df.close("finished")
    assert redis.Redis.from_url(redis_url).dbsize() == 0


def test_the_connection_follows_scrapy_redis_settings(redis_url: str) -> None:
    # REDIS_URL alone: urikey's own client, given the URL.
    assert RedisDupeFilter.from_spider(spider(redis_url)).server == redis_url
    # REDIS_HOST/REDIS_PORT/REDIS_PARAMS: scrapy-redis's redis-py client.
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    crawler = get_crawler(
        Spider,
        {"REDIS_HOST": "127.0.0.1", "REDIS_PORT": port, "REDIS_PARAMS": {"db": 0}},
    )
    df = RedisDupeFilter.from_spider(Spider.from_crawler(crawler, "books"))
    assert isinstance(df.server, redis.Redis)
    assert not df.request_seen(Request("http://a.com/?b&a"))
    # Both clients see the same set.
    assert RedisDupeFilter.from_spider(spider(redis_url)).request_seen(Request("http://a.com/?a&b"))


def test_fingerprints_are_urikey_keys(redis_url: str) -> None:
    df = RedisDupeFilter(redis_url, "s:dupefilter")
    urls = [
        "http://a.com/a/./b?y=1&x=2#f",
        "HTTP://A.com:80/a/b?x=2&y=1",
        "http://a.com/%61/b?x=2&y=1",
    ]
    assert [df.request_seen(Request(u)) for u in urls] == [False, True, True]
    assert (
        df.request_fingerprint(Request(urls[0]))
        == RequestFingerprinter().url_fingerprint(urls[0]).hex()
    )
    # A POST is another request; its body counts.
    assert not df.request_seen(Request(urls[0], method="POST", body=b"q=1"))
    assert not df.request_seen(Request(urls[0], method="POST", body=b"q=2"))
    assert df.request_seen(Request(urls[1], method="POST", body=b"q=2"))
    # The set holds the URL's key: the same RedisSeenSet, fed the URL, agrees.
    seen = urikey.RedisSeenSet(
        redis_url, "crawl", name="s:dupefilter", enable=["sort-query"], lenient=True
    )
    assert seen.contains(["http://a.com/a/b?x=2&y=1", "http://a.com/c"]) == [True, False]
    assert len(seen) == 3


def test_a_fingerprinter_of_other_options_is_refused(redis_url: str) -> None:
    RedisDupeFilter(redis_url, "s:dupefilter").request_seen(Request("http://a.com/"))
    other = RequestFingerprinter(profile="rfc", enable=[])
    with pytest.raises(ValueError, match="rfc"):
        RedisDupeFilter(redis_url, "s:dupefilter", fingerprinter=other)


def test_clear_and_close(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    df = RedisDupeFilter(redis_url, "s:dupefilter")
    df.request_seen(Request("http://a.com/"))
    client.set("unrelated", 1)
    df.clear()
    assert client.keys("*") == [b"unrelated"]
    assert not df.request_seen(Request("http://a.com/"))
    df.close("finished")
    assert client.keys("*") == [b"unrelated"]


@pytest.mark.parametrize("debug", [False, True])
def test_logs_as_scrapy_redis(
    caplog: pytest.LogCaptureFixture, redis_url: str, debug: bool
) -> None:
    client = redis.Redis.from_url(redis_url)
    messages = {}
    stats = {}
    filters = {
        "scrapy-redis": TheirFilter(client, "theirs", debug=debug),
        "urikey": RedisDupeFilter(redis_url, "ours", debug=debug),
    }
    for name, df in filters.items():
        sp = spider(redis_url)
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            for r in [
                Request("http://a.com/"),
                Request("http://a.com/", headers={"Referer": "http://r.com/"}),
            ] * 2:
                if df.request_seen(r):
                    df.log(r, sp)
        messages[name] = [
            (rec.levelno, rec.getMessage())
            for rec in caplog.records
            if rec.name in ("scrapy_redis.dupefilter", "urikey.scrapy")
        ]
        stats[name] = sp.crawler.stats.get_value("dupefilter/filtered")
    assert messages["urikey"] == messages["scrapy-redis"]
    assert len(messages["urikey"]) == (3 if debug else 1)
    # scrapy-redis's filter counts nothing; ours counts what Scrapy's filter counts.
    assert stats == {"scrapy-redis": None, "urikey": 3}


RACE = """
import sys
from scrapy import Request
from urikey.scrapy import RedisDupeFilter
url, order, out = sys.argv[1:4]
df = RedisDupeFilter(url, "race:dupefilter")
ids = list(range(3000))
if order == "down":
    ids.reverse()
new = [i for i in ids if not df.request_seen(Request(f"http://a.com/p{i}?b=1&a=2"))]
open(out, "w").write(" ".join(map(str, new)))
"""


def test_filters_in_several_processes_claim_each_request_once(
    redis_url: str, tmp_path: Path
) -> None:
    runs = []
    for n, order in enumerate(["up", "down", "up", "down"]):
        out = tmp_path / f"{n}.txt"
        runs.append(
            (subprocess.Popen([sys.executable, "-c", RACE, redis_url, order, str(out)]), out)
        )
    claimed: list[int] = []
    for process, out in runs:
        assert process.wait(timeout=120) == 0
        claimed += [int(i) for i in out.read_text().split()]
    assert sorted(claimed) == list(range(3000))


def test_on_a_cluster(redis_cluster: RedisCluster) -> None:
    from redis.cluster import RedisCluster as ClusterClient

    client = ClusterClient(host="127.0.0.1", port=redis_cluster.ports[0])
    try:
        df = RedisDupeFilter(client, "books:dupefilter")
        requests = [Request(f"http://a.com/p{i}") for i in range(2000)]
        assert not any(df.request_seen(r) for r in requests)
        assert all(df.request_seen(Request(r.url.upper().replace("/P", "/p"))) for r in requests)
        # The buckets spread over the three masters.
        assert all(node.command("DBSIZE") for node in redis_cluster.nodes)
    finally:
        client.close()
