"""urikey.SeenStore: the seen-store of ``urikey dedup --state`` from Python."""

from __future__ import annotations

import errno
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


def test_os_errors_carry_errno_and_filename(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError) as caught:
        urikey.SeenStore(blocker / "seen")
    assert caught.value.errno == errno.ENOTDIR
    assert caught.value.filename == str(blocker / "seen")


def test_store_errors_name_the_store_and_no_command(tmp_path: Path) -> None:
    # A store that cannot be used says which one, as `filename` where the
    # file system has an errno for it, and how to go on in words that hold
    # for Python (no `urikey state ...`).
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as caught:
        urikey.SeenStore(missing, create=False)
    assert caught.value.errno == errno.ENOENT
    assert caught.value.filename == str(missing)
    assert "opening it to write makes one" in str(caught.value)

    path = tmp_path / "seen"
    writer = urikey.SeenStore(path)
    with pytest.raises(BlockingIOError, match="locked") as locked:
        urikey.SeenStore(path)
    assert locked.value.errno == errno.EAGAIN
    assert locked.value.filename == str(path)
    writer.add(["http://a.example/"])
    writer.commit()
    writer.close()

    (run,) = path.glob("run-*.ukr")
    data = bytearray(run.read_bytes())
    data[len(data) // 2] ^= 0xFF
    run.write_bytes(bytes(data))
    with pytest.raises(OSError, match="damaged") as damaged:
        urikey.SeenStore(path, readonly=True).contains(["http://a.example/"])
    assert str(run) in str(damaged.value)
    for error in (caught, locked, damaged):
        assert "urikey state" not in str(error.value)


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


def test_fingerprints_and_urls_feed_one_store(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    options = {"enable": ["sort-query"], "lenient": True}
    canon = urikey.Canonicalizer("crawl", **options)  # type: ignore[arg-type]
    a, b = "http://a.example/?y&x", "http://b.example/"
    with urikey.SeenStore(path, "crawl", **options) as store:  # type: ignore[arg-type]
        fp_a = urikey.fingerprint(a, "crawl", **options)  # type: ignore[arg-type]
        assert fp_a == canon.fingerprint(a)
        other = bytes(range(16))
        assert store.add_fingerprints([fp_a, other, fp_a]) == [True, True, False]
        # The URL's key is the fingerprint just added, and the other way round.
        assert store.add(["HTTP://A.example/?x&y", b]) == [False, True]
        assert store.contains_fingerprints(iter([canon.fingerprint(b), bytes(16)])) == [
            True,
            False,
        ]
        assert len(store) == 3
    with urikey.SeenStore(path, "crawl", **options) as store:  # type: ignore[arg-type]
        assert store.contains([a, b]) == [True, True]
        assert store.contains_fingerprints([other, fp_a]) == [True, True]
        assert store.add_fingerprints([]) == []


def test_fingerprints_must_be_16_bytes(tmp_path: Path) -> None:
    with urikey.SeenStore(tmp_path / "seen") as store:
        with pytest.raises(ValueError, match="fingerprint 1 is 20 bytes long, not 16"):
            store.add_fingerprints([bytes(16), bytes(20)])
        with pytest.raises(ValueError, match="fingerprint 0 is 0 bytes long"):
            store.contains_fingerprints([b""])
        with pytest.raises(TypeError, match="fingerprint 1 is str"):
            store.add_fingerprints([bytes(16), "x" * 16])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="not one bytes"):
            store.add_fingerprints(bytes(16))  # type: ignore[arg-type]
        # A refused batch adds nothing.
        assert len(store) == 0
    d = urikey.Deduplicator()
    with pytest.raises(ValueError, match="fingerprint 0 is 15 bytes long"):
        d.add_fingerprints([bytes(15)])
    assert d.add_fingerprints([urikey.fingerprint("http://a.example/")]) == [True]
    assert d.add(["HTTP://a.example:80/"]) == [False]
