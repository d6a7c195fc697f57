"""Python output identical to the CLI's on the committed sample."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from conftest import EDGE_CASES, PROFILES, SAMPLE, sample_lines

import urikey


def cli_keys(cli: Path, path: Path, *args: str) -> list[str | None]:
    """`urikey normalize` of every line; invalid lines become None."""
    run = subprocess.run(
        [str(cli), "normalize", *args, str(path)],
        check=True,
        capture_output=True,
    )
    out = run.stdout.decode("utf-8").split("\n")
    assert out[-1] == ""
    # An empty output line is an invalid (or empty) input line.
    return [key or None for key in out[:-1]]


@pytest.mark.parametrize("path", [SAMPLE, EDGE_CASES], ids=["sample", "edge-cases"])
@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
@pytest.mark.parametrize("profile", PROFILES)
def test_keys_equal_the_cli(cli: Path, path: Path, profile: str, lenient: bool) -> None:
    args = ["--profile", profile] + (["--lenient"] if lenient else [])
    want = cli_keys(cli, path, *args)
    lines = sample_lines(path)
    # An empty line has no key (the CLI prints an empty line for it too).
    c = urikey.Canonicalizer(profile, lenient=lenient)
    got = c.canonicalize_many(lines)
    got = [g if g != "" else None for g in got]
    assert got == want
    # One call at a time, the same.
    one = []
    for line in lines:
        try:
            one.append(urikey.canonicalize(line, profile, lenient=lenient) or None)
        except urikey.InvalidURIError:
            one.append(None)
    assert one == want
    # Arrow: pyarrow (utf8, large_utf8, string_view, chunked) and Polars.
    for array in [
        pa.array(lines, pa.string()),
        pa.array(lines, pa.large_string()),
        pa.array(lines, pa.string_view()),
    ]:
        out = c.canonicalize_many(array)
        assert isinstance(out, pa.Array)
        assert [v or None for v in out.to_pylist()] == want
    half = len(lines) // 2
    chunked = pa.chunked_array([lines[:half], [], lines[half:]])
    out = c.canonicalize_many(chunked)
    assert isinstance(out, pa.ChunkedArray)
    assert [len(ch) for ch in out.chunks] == [half, 0, len(lines) - half]
    assert [v or None for v in out.to_pylist()] == want
    series = c.canonicalize_many(pl.Series("url", lines))
    assert isinstance(series, pl.Series)
    assert series.name == "url"
    assert [v or None for v in series.to_list()] == want


@pytest.mark.parametrize("key", ["surt", "hash"])
@pytest.mark.parametrize("profile", PROFILES)
def test_key_formats_equal_the_cli(cli: Path, profile: str, key: str) -> None:
    want = cli_keys(cli, SAMPLE, "--profile", profile, "--key", key, "--lenient")
    c = urikey.Canonicalizer(profile, key=key, lenient=True)
    got = c.canonicalize_many(sample_lines())
    assert [g or None for g in got] == want


@pytest.mark.parametrize("profile", PROFILES)
def test_fingerprints_equal_key_hash(cli: Path, profile: str) -> None:
    want = cli_keys(cli, SAMPLE, "--profile", profile, "--key", "hash")
    lines = sample_lines()
    c = urikey.Canonicalizer(profile)
    fps = c.fingerprints(lines)
    assert [fp.hex() if fp else None for fp in fps] == want
    arrow = c.fingerprints(pa.array(lines))
    assert arrow.type == pa.binary(16)
    assert [fp.hex() if fp else None for fp in arrow.to_pylist()] == want
    for line, hexed in list(zip(lines, want, strict=True))[:2000]:
        if hexed is not None:
            fp = c.fingerprint(line)
            assert len(fp) == 16
            assert fp.hex() == hexed
            assert urikey.fingerprint(line, profile) == fp


def test_flags_equal_the_cli(cli: Path) -> None:
    args = ["--with", "sort-query,remove-query-params=utm_*;ref", "--without", "remove-fragment"]
    want = cli_keys(cli, SAMPLE, "--profile", "crawl", *args)
    c = urikey.Canonicalizer(
        "crawl",
        enable=["sort-query", "remove-query-params=utm_*;ref"],
        disable="remove-fragment",
    )
    assert [g or None for g in c.canonicalize_many(sample_lines())] == want
