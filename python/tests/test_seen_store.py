"""urikey.SeenStore: the seen-store of ``urikey dedup --state`` from Python."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import urikey


def test_add_commit_reopen(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    with urikey.SeenStore(path, "crawl") as store:
        assert store.add(["http://a.example/#x", "HTTP://A.example/", None, "bad url"]) == [
            True,
            False,
            False,
            False,
        ]
        # Added, not committed yet: seen all the same.
        assert store.add(["http://a.example/", "http://b.example/"]) == [False, True]
        assert store.contains(["http://b.example/", "http://c.example/"]) == [True, False]
        assert len(store) == 2
        assert store.commit() == 2
        assert store.add(["http://c.example/"]) == [True]
    # Left without an exception: committed, then closed.
    with urikey.SeenStore(path, "crawl", readonly=True) as store:
        assert len(store) == 3
        assert store.contains(["http://c.example/#f", "http://d.example/"]) == [True, False]
        with pytest.raises(ValueError, match="read-only"):
            store.commit()


def test_not_committed_is_not_durable(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    store = urikey.SeenStore(path)
    store.add(["http://a.example/"])
    store.commit()
    store.add(["http://b.example/"])
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.add(["http://c.example/"])
    with pytest.raises(RuntimeError):
        with urikey.SeenStore(path) as again:
            again.add(["http://c.example/"])
            raise RuntimeError("the block failed")
    assert urikey.SeenStore(path, readonly=True).contains(
        ["http://a.example/", "http://b.example/", "http://c.example/"]
    ) == [True, False, False]


def test_one_writer_and_configuration(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    writer = urikey.SeenStore(path, "crawl")
    with pytest.raises(OSError, match="locked"):
        urikey.SeenStore(path, "crawl")
    urikey.SeenStore(path, "crawl", readonly=True).close()
    writer.close()
    with pytest.raises(ValueError, match="crawl"):
        urikey.SeenStore(path, "rfc")
    with pytest.raises(OSError, match="not a seen-store"):
        urikey.SeenStore(tmp_path / "missing", create=False)


def test_same_answers_as_a_deduplicator(tmp_path: Path) -> None:
    urls = [f"http://h{i % 7}.example/p/{i % 50}" for i in range(300)] + ["hello", "a b"]
    path = tmp_path / "seen"
    with urikey.SeenStore(path) as store:
        first = store.add(urls[:100])
    # Across a commit and a reopening: one Deduplicator over all of it.
    with urikey.SeenStore(path) as store:
        second = store.add(urls[100:])
    assert first + second == urikey.Deduplicator().add(urls)


def test_arrow_batches(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    with urikey.SeenStore(tmp_path / "seen") as store:
        got = store.add(pa.array(["http://a.example/", None, "http://a.example/"]))
        assert got.to_pylist() == [True, False, False]
        assert store.contains(pa.array(["http://a.example/"])).to_pylist() == [True]


def test_threads_share_one_store(tmp_path: Path) -> None:
    store = urikey.SeenStore(tmp_path / "seen")
    results: list[list[bool]] = []

    def work(k: int) -> None:
        results.append(store.add([f"http://t.example/{i}" for i in range(k, k + 100)]))

    threads = [threading.Thread(target=work, args=(k * 50,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(sum(r) for r in results) == 250
    assert store.commit() == 250
    store.close()
