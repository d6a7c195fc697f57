"""`Deduplicator` and `dedup_file` against `urikey dedup`."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import PROFILES, SAMPLE, sample_lines

import urikey


def cli_dedup(cli: Path, tmp: Path, *args: str) -> tuple[bytes, dict[str, object]]:
    stats = tmp / "stats.json"
    out = subprocess.run(
        [str(cli), "dedup", str(SAMPLE), "--quiet", "--stats-json", str(stats), *args],
        check=True,
        capture_output=True,
    ).stdout
    return out, json.loads(stats.read_text())


@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
@pytest.mark.parametrize("profile", PROFILES)
def test_deduplicator_across_batches_equals_one_dedup(
    cli: Path, tmp_path: Path, profile: str, lenient: bool
) -> None:
    args = ["--profile", profile, "--emit", "original"] + (["--lenient"] if lenient else [])
    want, _ = cli_dedup(cli, tmp_path, *args)
    lines = sample_lines()
    d = urikey.Deduplicator(profile, lenient=lenient)
    kept: list[str] = []
    # Uneven batches, lists and Arrow arrays mixed.
    for i, start in enumerate(range(0, len(lines), 7000)):
        batch = lines[start : start + 7000]
        if i % 2:
            mask = d.add(pa.array(batch)).to_pylist()
        else:
            mask = d.add(batch)
        kept.extend(line for line, new in zip(batch, mask, strict=True) if new)
    got = "".join(line + "\n" for line in kept).encode()
    assert got == want
    assert len(d) == len(kept)


@pytest.mark.parametrize("key", ["uri", "surt", "hash"])
@pytest.mark.parametrize("profile", PROFILES)
def test_dedup_file_equals_the_cli(cli: Path, tmp_path: Path, profile: str, key: str) -> None:
    want, want_stats = cli_dedup(
        cli,
        tmp_path,
        "--profile",
        profile,
        "--key",
        key,
        "--lenient",
        "--rejects",
        str(tmp_path / "cli-rejects.txt"),
    )
    out = tmp_path / "out.txt"
    rejects = tmp_path / "rejects.txt"
    stats = urikey.dedup_file(SAMPLE, out, profile=profile, key=key, lenient=True, rejects=rejects)
    assert out.read_bytes() == want
    assert rejects.read_bytes() == (tmp_path / "cli-rejects.txt").read_bytes()
    assert set(stats) == set(want_stats)
    for name in ["lines", "bytes", "blank", "invalid", "invalid_by_reason", "unique", "duplicates"]:
        assert stats[name] == want_stats[name], name  # type: ignore[literal-required]
    assert stats["duplicate_ratio"] == pytest.approx(want_stats["duplicate_ratio"], abs=1e-6)
    assert set(stats["phases"]) == set(want_stats["phases"])
    assert all(v >= 0 for v in stats["phases"].values())
    spent = sum(v for k, v in stats["phases"].items() if k != "other_seconds")
    assert spent <= stats["wall_seconds"]


def test_dedup_file_options(cli: Path, tmp_path: Path) -> None:
    tsv = tmp_path / "in.tsv"
    tsv.write_text("".join(f"{i}\t{u}\n" for i, u in enumerate(sample_lines()[:5000])))
    want = subprocess.run(
        [
            str(cli),
            "dedup",
            str(tsv),
            str(tsv),
            "--field",
            "2",
            "--emit",
            "original",
            "--profile",
            "crawl",
            "--quiet",
            "--threads",
            "1",
        ],
        check=True,
        capture_output=True,
    ).stdout
    out = tmp_path / "out.tsv"
    stats = urikey.dedup_file(
        [tsv, str(tsv)], out, field=2, emit="original", profile="crawl", threads=1
    )
    assert out.read_bytes() == want
    assert stats["threads"] == 1
    with pytest.raises(ValueError, match="emit"):
        urikey.dedup_file(tsv, out, emit="both")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        urikey.dedup_file(tmp_path / "missing.txt", tmp_path / "never.txt")
    assert not (tmp_path / "never.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.tsv", "out.tsv"]


def test_deduplicator_memory_limit_refuses_a_batch_whole() -> None:
    urls = [f"http://example.com/{i}" for i in range(200_000)]
    sized = urikey.Deduplicator()
    sized.add(urls[:50_000])
    assert sized.memory_limit is None or sized.memory_limit > 1 << 20  # the machine's share
    d = urikey.Deduplicator(memory_limit=sized.memory_bytes)
    assert d.memory_limit == sized.memory_bytes
    assert all(d.add(urls[:50_000]))
    held = (len(d), d.memory_bytes)
    assert not any(d.add(urls[:50_000]))  # known keys are never refused
    with pytest.raises(MemoryError, match=r"memory limit .*dedup_file"):
        d.add(pa.array(urls))
    assert (len(d), d.memory_bytes) == held
    assert d.add([urls[0], urls[150_000]]) == [False, True]  # nothing of the refused batch stayed
    assert urikey.Deduplicator(memory_limit="2G").memory_limit == 2 << 30
    with pytest.raises(ValueError, match="not a size"):
        urikey.Deduplicator(memory_limit="lots")
    with pytest.raises(ValueError, match="negative"):
        urikey.Deduplicator(memory_limit=-1)
    with pytest.raises(TypeError, match="memory_limit"):
        urikey.Deduplicator(memory_limit=True)


def test_deduplicator_expected_keys_size_the_set_once() -> None:
    urls = [f"http://example.com/{(i * 7) % 300_000}" for i in range(450_000)]
    plain = urikey.Deduplicator()
    told = urikey.Deduplicator(expected_keys=1_200_000)
    sizes = set()
    for start in range(0, len(urls), 10_000):
        batch = urls[start : start + 10_000]
        assert told.add(batch) == plain.add(batch)
        sizes.add(told.memory_bytes)
    assert len(told) == len(plain) == 300_000
    # Grown to the expected size at its first growth, in the first batch,
    # and not again; sized for four times the keys it got, it ends larger.
    assert len(sizes) == 1
    assert told.memory_bytes > plain.memory_bytes
    # An expectation past the memory limit is not used: grown by steps.
    capped = urikey.Deduplicator(expected_keys=1_200_000, memory_limit=plain.memory_bytes)
    for start in range(0, len(urls), 10_000):
        capped.add(urls[start : start + 10_000])
    assert capped.memory_bytes == plain.memory_bytes
    with pytest.raises(ValueError, match="negative"):
        urikey.Deduplicator(expected_keys=-1)


@pytest.mark.parametrize("keys", [2**40, 2**59, 2**63 - 1])
def test_deduplicator_expected_keys_past_any_memory_are_ignored(keys: int) -> None:
    # Such a size once made the table's size search loop for ever.
    for limit in [None, 2**64 - 1]:
        d = urikey.Deduplicator(expected_keys=keys, memory_limit=limit)
        assert d.add(["http://a/", "HTTP://A/", "http://b/"]) == [True, False, True]
        assert d.memory_bytes < 64 << 20


def test_dedup_file_paths_as_str_bytes_and_pathlike(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"http://a/\nhttp://a/\nhttp://b/\n")
    out = tmp_path / "out.txt"
    for given in [str(src), bytes(src), src, [src, str(src)]]:
        out.unlink(missing_ok=True)
        urikey.dedup_file(given, bytes(out), rejects=tmp_path / "rejects.txt")
        assert out.read_bytes() == b"http://a/\nhttp://b/\n"
    # A file name that is not UTF-8 (read back with surrogate escapes).
    odd = os.fsdecode(bytes(tmp_path) + b"/in-\xff.txt")
    Path(odd).write_bytes(b"http://c/\n")
    assert urikey.dedup_file(odd, out)["unique"] == 1


def test_dedup_file_unencodable_or_failing_paths_raise(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"http://a/\n")
    out = tmp_path / "out.txt"
    # A lone surrogate has no file system encoding: an exception, never a
    # panic, wherever the path is given.
    for kwargs in [
        {"inputs": "\ud800", "output": out},
        {"inputs": ["\ud800"], "output": out},
        {"inputs": src, "output": "\ud800.txt"},
        {"inputs": src, "output": out, "rejects": "\ud800"},
        {"inputs": src, "output": out, "temp_dir": "\ud800"},
    ]:
        with pytest.raises(UnicodeEncodeError):
            urikey.dedup_file(**kwargs)  # type: ignore[arg-type]

    class Failing:
        def __fspath__(self) -> str:
            raise ZeroDivisionError("no path")

    with pytest.raises(ZeroDivisionError):
        urikey.dedup_file(Failing(), out)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="inputs must be a path"):
        urikey.dedup_file(5, out)  # type: ignore[arg-type]
    assert not out.exists()


def test_dedup_file_errors_are_the_errno_subclasses(tmp_path: Path) -> None:
    # Issue 33, item 5: what a Python user catches by type, with errno,
    # strerror and filename set as Python's own open() sets them.
    src = tmp_path / "in.txt"
    src.write_bytes(b"http://a/\n")
    out = tmp_path / "out.txt"
    missing = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError) as e:
        urikey.dedup_file(missing, out)
    assert (e.value.errno, e.value.strerror) == (errno.ENOENT, os.strerror(errno.ENOENT))
    assert e.value.filename == str(missing)
    assert str(e.value) == f"[Errno 2] No such file or directory: {str(missing)!r}"
    with pytest.raises(FileNotFoundError) as e:
        urikey.dedup_file([src, missing], out)
    assert e.value.filename == str(missing)
    with pytest.raises(IsADirectoryError) as e:
        urikey.dedup_file(tmp_path, out)
    assert (e.value.errno, e.value.filename) == (errno.EISDIR, str(tmp_path))
    # The output's directory is missing, or the output is a directory.
    with pytest.raises(FileNotFoundError) as e:
        urikey.dedup_file(src, tmp_path / "no-dir" / "out.txt")
    assert e.value.filename == str(tmp_path / "no-dir" / "out.txt")
    with pytest.raises(IsADirectoryError) as e:
        urikey.dedup_file(src, tmp_path)
    assert e.value.filename == str(tmp_path)
    with pytest.raises(FileNotFoundError) as e:
        urikey.dedup_file(src, out, rejects=tmp_path / "no-dir" / "rejects.txt")
    assert e.value.filename == str(tmp_path / "no-dir" / "rejects.txt")
    # A failed run leaves no output under its name.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]
    if os.geteuid() != 0:  # root reads anything
        src.chmod(0)
        try:
            with pytest.raises(PermissionError) as e:
                urikey.dedup_file(src, out)
            assert e.value.filename == str(src)
        finally:
            src.chmod(0o644)
    # A corrupt compressed input has no errno: a plain OSError naming it.
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage")
    with pytest.raises(OSError, match=r"bad\.gz") as e:
        urikey.dedup_file(bad, out)
    assert e.value.filename == str(bad)


def test_type_errors_name_the_argument(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"http://a/\n")
    out = tmp_path / "out.txt"
    with pytest.raises(TypeError, match=r"^inputs must be a path .* not int$"):
        urikey.dedup_file(5, out)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^inputs\[1\] must be a path .* not int$"):
        urikey.dedup_file([src, 5], out)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="output"):
        urikey.dedup_file(src, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rejects"):
        urikey.dedup_file(src, out, rejects=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="profile"):
        urikey.dedup_file(src, out, profile=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^enable must be a str or a list of str"):
        urikey.Canonicalizer(enable=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^disable must be .* not int$"):
        urikey.Deduplicator(disable=["sort-query", 1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="memory_limit"):
        urikey.Deduplicator(memory_limit=[1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="base"):
        urikey.Deduplicator(base=5)  # type: ignore[arg-type]
    assert not out.exists()


def test_dedup_file_refuses_rejects_that_would_replace_an_input_or_the_output(
    tmp_path: Path,
) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"http://a/\nbad url\n")
    out = tmp_path / "out.txt"
    for rejects in [src, tmp_path / "." / "in.txt", out]:
        with pytest.raises(ValueError, match="names an input or the output"):
            urikey.dedup_file(src, out, rejects=rejects)
    assert src.read_bytes() == b"http://a/\nbad url\n"
    assert not out.exists()


def test_dedup_file_spills_under_a_memory_limit(cli: Path, tmp_path: Path) -> None:
    want, _ = cli_dedup(cli, tmp_path, "--profile", "crawl")
    spill = tmp_path / "spill"
    spill.mkdir()
    out = tmp_path / "out.txt"
    stats = urikey.dedup_file(SAMPLE, out, profile="crawl", memory_limit=0, temp_dir=spill)
    assert out.read_bytes() == want
    assert stats["unique"] == want.count(b"\n")
    assert list(spill.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_keyboard_interrupt_leaves_no_output(tmp_path: Path) -> None:
    # The input is a pipe that stays open, so the run cannot end by itself.
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "out.txt"
    code = f"import urikey; urikey.dedup_file({str(fifo)!r}, {str(out)!r})"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    try:
        with open(fifo, "wb") as pipe:
            block = "".join(f"http://example.com/{i}\n" for i in range(200_000)).encode()
            for _ in range(5):
                pipe.write(block)
            pipe.flush()
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode != 0
    assert b"KeyboardInterrupt" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fifo"]
