"""urikey.RedisSeenSet against real redis-servers started (and stopped) here:
claims across clients, our client and a redis-py client on one set, and bad
input as exceptions naming the set."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator

import pytest
from redis_servers import redis_server

import urikey


@pytest.fixture
def url() -> Iterator[str]:
    with redis_server() as port:
        yield f"redis://127.0.0.1:{port}/0"


def cli(url: str, *args: str) -> str:
    port = url.rsplit(":", 1)[1].split("/")[0]
    out = subprocess.run(
        ["redis-cli", "-p", port, *args], check=True, capture_output=True, text=True
    )
    return out.stdout


URLS = [f"http://h{i % 5}.example/p/{i}" for i in range(3000)]


def test_add_claims_and_contains_looks_up(url: str) -> None:
    s = urikey.RedisSeenSet(url, "crawl", name="basic", expected_keys=10_000)
    assert s.add(["http://a.com/x", "HTTP://A.com:80/x", "/rel", None]) == [
        True,
        False,
        False,
        False,
    ]
    assert s.contains(["http://a.com/x#top", "http://b.com/"]) == [True, False]
    assert s.add(["http://b.com/", "http://a.com/x"]) == [True, False]
    assert len(s) == 2
    fp = urikey.fingerprint("http://c.com/", "crawl")
    assert s.contains_fingerprints([fp]) == [False]
    assert s.add_fingerprints([fp, fp]) == [True, False]
    assert s.add(["http://c.com/"]) == [False]
    info = s.info()
    assert info["keys"] == 3 and info["name"] == "basic" and info["config"] == "crawl"
    assert info["compared_bits"] >= 80 and info["buckets_over_intset"] == 0
    assert "RedisSeenSet" in repr(s)


def test_claims_are_exactly_once_across_threads(url: str) -> None:
    won: list[list[str]] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def client(rotation: int) -> None:
        s = urikey.RedisSeenSet(url, "crawl", name="fleet")
        mine = URLS[rotation:] + URLS[:rotation]
        start.wait()
        got = []
        for i in range(0, len(mine), 250):
            batch = mine[i : i + 250]
            got += [u for u, new in zip(batch, s.add(batch), strict=True) if new]
        with lock:
            won.append(got)

    threads = [threading.Thread(target=client, args=(r * 700,)) for r in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = sorted(u for w in won for u in w)
    assert claimed == sorted(URLS)


def test_a_redis_py_client_shares_the_set(url: str) -> None:
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(url)
    ours = urikey.RedisSeenSet(url, "crawl", name="shared")
    theirs = urikey.RedisSeenSet(client, "crawl", name="shared")
    assert theirs.add(URLS[:100]) == [True] * 100
    assert ours.add(URLS[50:150]) == [False] * 50 + [True] * 50
    assert theirs.add(URLS[140:160]) == [False] * 10 + [True] * 10
    assert theirs.contains(URLS[:200]) == [True] * 160 + [False] * 40
    assert len(theirs) == len(ours) == 160
    assert theirs.info()["keys"] == 160
    # A client that decodes responses works too.
    decoding = urikey.RedisSeenSet(
        redis.Redis.from_url(url, decode_responses=True), "crawl", name="shared"
    )
    assert decoding.add(URLS[159:161]) == [False, True]
    # Another configuration is refused through redis-py as well.
    with pytest.raises(ValueError, match=r"`crawl`.*`rfc`"):
        urikey.RedisSeenSet(client, "rfc", name="shared")


def test_bad_input_raises_naming_the_set_never_the_password(url: str) -> None:
    urikey.RedisSeenSet(url, "crawl", name="cfg")
    with pytest.raises(ValueError, match=r"`crawl`.*`rfc`"):
        urikey.RedisSeenSet(url, "rfc", name="cfg")
    with pytest.raises(ConnectionError, match=r"127\.0\.0\.1:1/0") as e:
        urikey.RedisSeenSet("redis://me:hunter2@127.0.0.1:1/0", "crawl")
    assert "hunter2" not in str(e.value)
    with pytest.raises(ValueError, match="TLS"):
        urikey.RedisSeenSet("rediss://127.0.0.1:1/0")
    with pytest.raises(TypeError):
        urikey.RedisSeenSet(42)  # type: ignore[arg-type]
    cli(url, "RPUSH", "taken:meta", "x")
    with pytest.raises(OSError, match="taken:meta"):
        urikey.RedisSeenSet(url, "crawl", name="taken")
    s = urikey.RedisSeenSet(url, "crawl", name="fps")
    with pytest.raises(ValueError, match="fingerprint 1 is 3 bytes"):
        s.add_fingerprints([bytes(16), b"abc"])
    assert len(s) == 0
    cli(url, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    with pytest.raises(ValueError, match="allkeys-lru"):
        urikey.RedisSeenSet(url, "crawl", name="evicting")


def test_a_wrong_password_is_a_connection_error() -> None:
    with redis_server("--requirepass", "right") as port:
        with pytest.raises(ConnectionError, match="credentials") as e:
            urikey.RedisSeenSet(f"redis://:wrong@127.0.0.1:{port}/0")
        assert "wrong@" not in str(e.value)
        s = urikey.RedisSeenSet(f"redis://:right@127.0.0.1:{port}/0")
        assert s.add(["http://a.com/"]) == [True]


def test_out_of_memory_is_an_error_and_nothing_is_reported_seen_falsely() -> None:
    with redis_server("--maxmemory", "3mb", "--maxmemory-policy", "noeviction") as port:
        s = urikey.RedisSeenSet(f"redis://127.0.0.1:{port}/0", "crawl")
        first = URLS[:100]
        assert s.add(first) == [True] * 100
        many = [f"http://x.example/{i}" for i in range(60_000)]
        with pytest.raises(OSError, match="out of memory"):
            s.add(many)
        assert s.contains(first) == [True] * 100
        # Part of the batch may be in: each such key is in the set, none other.
        held = s.contains(many)
        assert len(s) == 100 + sum(held)
