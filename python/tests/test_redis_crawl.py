"""Real crawls shared through Redis: two Scrapy processes under
scrapy-redis's scheduler on a local site whose links spell each page's URL
many ways (redis_crawl.py), with `urikey.scrapy.RedisDupeFilter` and, beside
it, scrapy-redis's own filter; one worker SIGKILLed mid-crawl and started
again. The fetches are counted from the site's access log.

The site has `URIKEY_REDIS_CRAWL_PAGES` pages (default 400, so that CI stays
fast; scripts/bench-redis crawls 2,000).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis_crawl import LINKS, CrawlSite, run_workers
from redis_servers import RedisServer

import urikey

PAGES = int(os.environ.get("URIKEY_REDIS_CRAWL_PAGES", "400"))
WORKERS = 2
CONCURRENCY = 8
OURS: dict[str, Any] = {
    "DUPEFILTER_CLASS": "urikey.scrapy.RedisDupeFilter",
    "REQUEST_FINGERPRINTER_CLASS": "urikey.scrapy.RequestFingerprinter",
    "URIKEY_REDIS_EXPECTED_KEYS": PAGES * 2,
    "CONCURRENT_REQUESTS": CONCURRENCY,
}
THEIRS: dict[str, Any] = {
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    "CONCURRENT_REQUESTS": CONCURRENCY,
}


@pytest.fixture()
def site() -> Iterator[CrawlSite]:
    # Port 80 when it is free, so that links spelled with `:80` are the same URL.
    s = CrawlSite(PAGES, port=80)
    try:
        yield s
    finally:
        s.stop()


def seen_set(url: str) -> urikey.RedisSeenSet:
    return urikey.RedisSeenSet(
        url, "crawl", name="site:dupefilter", enable=["sort-query"], lenient=True
    )


def test_workers_fetch_every_page_once_through_urikey(
    site: CrawlSite, redis_url: str, tmp_path: Path
) -> None:
    result = run_workers(site, redis_url, tmp_path, workers=WORKERS, settings=OURS)
    assert not result.not_found
    assert set(result.counts) == set(range(PAGES))
    assert max(result.counts.values()) == 1
    assert result.home == 1
    # Both workers fetched.
    assert len(result.by_worker) == WORKERS, result.by_worker
    # Every request met the filter once: the start URL of each worker, the
    # home page's 10 links and every page's LINKS; all but PAGES + 1 were
    # duplicates, counted as Scrapy counts them.
    stats = result.stats.values()
    claims = WORKERS + min(10, PAGES) + PAGES * LINKS
    assert sum(s.get("scheduler/enqueued/redis", 0) for s in stats) == PAGES + 1
    assert sum(s.get("dupefilter/filtered", 0) for s in stats) == claims - PAGES - 1
    assert len(seen_set(redis_url)) == PAGES + 1


def test_scrapy_redis_filter_beside(site: CrawlSite, redis_url: str, tmp_path: Path) -> None:
    result = run_workers(site, redis_url, tmp_path, workers=WORKERS, settings=THEIRS)
    # Every page is fetched, and many more than once: w3lib's canonical URL
    # keeps dot segments, `:80` and an escaped `p` apart.
    assert set(result.counts) == set(range(PAGES))
    assert sum(result.counts.values()) > PAGES * 1.3
    client = redis.Redis.from_url(redis_url)
    assert client.type("site:dupefilter") == b"set"
    assert client.scard("site:dupefilter") == sum(result.counts.values()) + result.home


def test_a_killed_worker_fetches_nothing_twice(
    site: CrawlSite, redis_url: str, tmp_path: Path
) -> None:
    result = run_workers(
        site, redis_url, tmp_path, workers=WORKERS, settings=OURS, kill_after=PAGES // 3
    )
    assert result.killed_at is not None and result.killed_at < PAGES
    assert not result.not_found
    assert max(result.counts.values()) == 1
    # What the kill costs: the requests the killed worker had taken from the
    # queue (claimed, not yet fetched: at most CONCURRENT_REQUESTS) and the
    # links of responses it had not parsed yet, when no other page links
    # to them.
    missing = set(range(PAGES)) - set(result.counts)
    assert len(missing) <= 2 * CONCURRENCY, sorted(missing)
    assert len(result.by_worker) == WORKERS


def test_without_persist_the_scheduler_clears_the_set(
    site: CrawlSite, redis_node: RedisServer, redis_url: str, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(redis_url)
    result = run_workers(site, redis_url, tmp_path, workers=1, settings=OURS)
    assert max(result.counts.values()) == 1
    assert len(seen_set(redis_url)) == PAGES + 1
    result = run_workers(
        site, redis_url, tmp_path, workers=1, settings={**OURS, "SCHEDULER_PERSIST": False}
    )
    # The persisted set filtered even the start URL: nothing was fetched;
    # then the end of the crawl cleared the set and the queue.
    assert not result.counts and result.home == 0
    assert client.dbsize() == 0, client.keys("*")
