"""The crawl formats of `urikey dedup --format` (docs/formats.md), checked
against independent readers: WAT outlinks resolved as RFC 3986 §5.2 says,
by the `rfc3986` package; the committed fixtures read back with pyarrow
and Python's own gzip and json."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import rfc3986
from conftest import ROOT

FORMATS = ROOT / "tests" / "data" / "formats"

# `URIReference.resolve_with` checks its base with the package's own
# deprecated `is_valid` (rfc3986 2.0): a warning per call, not ours to mend.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Please use rfc3986.validators.Validator:DeprecationWarning"
)


def warc_records(path: Path) -> list[tuple[dict[str, str], bytes]]:
    """The records of a (gzipped) WARC file: headers and block."""
    data = gzip.decompress(path.read_bytes())
    records = []
    pos = 0
    while True:
        while data.startswith(b"\r\n", pos):
            pos += 2
        if pos >= len(data):
            return records
        end = data.index(b"\r\n\r\n", pos)
        lines = data[pos:end].decode("utf-8").split("\r\n")
        assert lines[0].startswith("WARC/")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers["content-length"])
        block = data[end + 4 : end + 4 + length]
        records.append((headers, block))
        pos = end + 4 + length


def resolve(base: str, href: str) -> str | None:
    """RFC 3986 §5.2 (strict) by the rfc3986 package; None when the
    reference is not a valid URI-reference."""
    ref = rfc3986.uri_reference(href)
    # rfc3986 percent-encodes what may not stand in a component (`%` not
    # before two hex digits, non-ASCII): such a reference was not valid.
    if ref.unsplit() != href or not _valid(ref):
        return None
    return ref.resolve_with(rfc3986.uri_reference(base), strict=True).unsplit()


def _valid(ref: rfc3986.URIReference) -> bool:
    try:
        rfc3986.validators.Validator().check_validity_of(
            "scheme", "userinfo", "host", "port", "path", "query", "fragment"
        ).validate(ref)
    except rfc3986.exceptions.ValidationError:
        return False
    return True


def expected_links(path: Path) -> tuple[list[str], int]:
    """Every outlink of the WAT `path`, resolved, in order, and how many
    references are not valid."""
    links = []
    invalid = 0
    for headers, block in warc_records(path):
        if headers.get("warc-type") != "metadata":
            continue
        meta = json.loads(block)
        html = (
            meta.get("Envelope", {})
            .get("Payload-Metadata", {})
            .get("HTTP-Response-Metadata", {})
            .get("HTML-Metadata", {})
        )
        page = headers["warc-target-uri"]
        base = page
        if html.get("Head", {}).get("Base"):
            base = resolve(page, html["Head"]["Base"]) or page
        for link in html.get("Links", []):
            target = resolve(base, link["url"])
            if target is None:
                invalid += 1
            else:
                links.append(target)
    return links, invalid


def run_cli(cli: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, check=False)


def rfc3986_equivalent(got: str, want: str) -> bool:
    """True when urikey's `got` is rfc3986's `want` up to two things the
    package does besides §5.2: it uppercases percent-encodings while
    resolving (a §6.2.2.1 normalization), and a reference that climbs above
    the root of a one-segment base path (`../` or `../../` against
    `http://a/b`) leaves it an empty path where §5.2.4 gives `/` (as the
    RFC's own §5.4.1 `../../` against `http://a/b/c/d;p?q` is `http://a/`)."""
    if got == want:
        return True
    upper = re.compile(r"%[0-9a-fA-F]{2}")
    got, want = (upper.sub(lambda m: m.group(0).upper(), u) for u in (got, want))
    if got == want:
        return True
    g, w = rfc3986.uri_reference(got), rfc3986.uri_reference(want)
    return (
        w.authority is not None
        and not w.path
        and g.path == "/"
        and (g.scheme, g.authority, g.query, g.fragment)
        == (w.scheme, w.authority, w.query, w.fragment)
    )


def test_rfc3986_deviations_are_the_packages() -> None:
    base = rfc3986.uri_reference("http://a/b")
    climbed = rfc3986.uri_reference("../../").resolve_with(base, strict=True).unsplit()
    assert climbed == "http://a"  # §5.2.4: merge gives "/../../", which becomes "/"
    assert rfc3986_equivalent("http://a/", climbed)
    assert not rfc3986_equivalent("http://a/x", "http://a/y")


def test_wat_outlinks_resolve_as_rfc3986_says(cli: Path) -> None:
    wat = FORMATS / "sample.wat.gz"
    want, invalid = expected_links(wat)
    assert len(want) > 100
    # Every link, not deduplicated: `normalize` prints one key per link, and
    # under `--profile none` a key is the resolved URI as it is.
    got = run_cli(
        cli,
        "normalize",
        "--format",
        "wat",
        "--profile",
        "none",
        "--on-invalid",
        "skip",
        "-q",
        str(wat),
    )
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert len(lines) == len(want)
    mismatches = [(g, w) for g, w in zip(lines, want, strict=True) if not rfc3986_equivalent(g, w)]
    assert not mismatches[:10]
    exact = sum(1 for g, w in zip(lines, want, strict=True) if g == w)
    assert exact > 0.9 * len(want)
    # Every reference rfc3986 rejects, urikey reports.
    report = run_cli(
        cli, "normalize", "--format", "wat", "--profile", "none", "--on-invalid", "skip", str(wat)
    )
    assert len(report.stderr.splitlines()) >= min(invalid, 20)


def test_wat_emit_original_is_page_tab_link(cli: Path) -> None:
    wat = FORMATS / "sample.wat.gz"
    got = run_cli(cli, "dedup", "--profile", "none", "--emit", "original", "-q", str(wat))
    assert got.returncode == 0, got.stderr
    want, _ = expected_links(wat)
    firsts = list(dict.fromkeys(want))
    links = [line.split("\t")[1] for line in got.stdout.splitlines()]
    assert len(links) == len(firsts)
    assert all(rfc3986_equivalent(g, w) for g, w in zip(links, firsts, strict=True))


def test_parquet_and_cdxj_give_the_urls_pyarrow_and_json_read(cli: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    urls = pq.read_table(FORMATS / "sample.parquet", columns=["url"]).column("url").to_pylist()
    with gzip.open(FORMATS / "sample.cdxj.gz", "rt", encoding="utf-8") as f:
        cdxj = [json.loads(line.split(" ", 2)[2])["url"] for line in f]
    assert urls == cdxj
    for name in ("sample.parquet", "sample.cdxj.gz", "sample.cdx"):
        # One line per record; an invalid URL gives an empty line.
        got = run_cli(cli, "normalize", "--profile", "none", "-q", str(FORMATS / name))
        assert got.returncode == 0, got.stderr
        lines = got.stdout.splitlines()
        assert len(lines) == len(urls), name
        assert [u for u, g in zip(urls, lines, strict=True) if g] == [g for g in lines if g], name
        assert sum(1 for g in lines if g) > 0.9 * len(urls)


def test_dedup_file_format(tmp_path: Path, cli: Path) -> None:
    import urikey

    for name, fmt in [
        ("sample.cdxj.gz", "cdxj"),
        ("sample.parquet", "parquet"),
        ("sample.wat.gz", None),
    ]:
        out = tmp_path / f"{name}.out"
        stats = urikey.dedup_file(FORMATS / name, out, format=fmt)
        want = run_cli(cli, "dedup", "-q", str(FORMATS / name))
        assert out.read_text(encoding="utf-8") == want.stdout, name
        assert stats["unique"] == len(want.stdout.splitlines())
    # The engine's one set of option rules: Python's message is the CLI's.
    refused = run_cli(cli, "dedup", "--format", "csv", str(FORMATS / "sample.cdx"))
    assert refused.returncode == 2
    message = 'unknown format "csv" (one of: lines, cdxj, cdx, warc, wat, parquet, arc)'
    assert message in refused.stderr
    with pytest.raises(ValueError, match=re.escape(message)):
        urikey.dedup_file(FORMATS / "sample.cdx", tmp_path / "x", format="csv")


def gunzip_threads() -> int:
    """This process's threads named as the engine's gzip decoders (a thread
    that ends between the listing and the read is not counted)."""
    count = 0
    for comm in Path("/proc/self/task").glob("*/comm"):
        try:
            count += comm.read_text().startswith("urikey-gunzip")
        except OSError:  # ProcessLookupError, FileNotFoundError: it ended
            continue
    return count


def members_file(tmp_path: Path, count: int) -> Path:
    """A multi-member gzip of `count` members of 2,000 URLs (a third repeats)."""
    members = [
        gzip.compress(
            "".join(
                f"http://h{m}.example/{i % 1500}/{i * 7919 % 10007}\n" for i in range(2000)
            ).encode(),
            compresslevel=1,
            mtime=0,
        )
        for m in range(count)
    ]
    path = tmp_path / "members.gz"
    path.write_bytes(b"".join(members))
    return path


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_dedup_file_gzip_decoders_follow_threads(tmp_path: Path, cli: Path, threads: int) -> None:
    """`threads=` of `dedup_file` sets the gzip decoders as `--threads` does
    (the most seen at once while it runs), and the output is the CLI's."""
    import threading

    import urikey

    src = members_file(tmp_path, 400)
    out = tmp_path / "out.txt"
    failed: list[BaseException] = []

    def run() -> None:
        try:
            urikey.dedup_file(src, out, threads=threads)
        except BaseException as e:  # reported by the test thread
            failed.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    seen = 0
    while worker.is_alive():
        seen = max(seen, gunzip_threads())
        time.sleep(0.001)
    worker.join()
    assert not failed, failed
    assert seen == threads
    assert out.read_text(encoding="utf-8") == run_cli(cli, "dedup", "-q", str(src)).stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_dedup_file_reads_a_named_pipe(tmp_path: Path, cli: Path, threads: int) -> None:
    """A FIFO as the input, its writer done before the run reads (one gzip
    stream with one thread, windows decoded in parallel with two): every
    line is read."""
    import os
    import threading

    import urikey

    src = members_file(tmp_path, 40)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = tmp_path / "out.txt"
    failed: list[BaseException] = []

    def run() -> None:
        try:
            urikey.dedup_file(fifo, out, threads=threads, format="lines")
        except BaseException as e:  # reported by the test thread
            failed.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    with open(fifo, "wb") as w:
        w.write(src.read_bytes())
    worker.join(60)
    assert not worker.is_alive(), "the run still waits on its input"
    assert not failed, failed
    assert out.read_text(encoding="utf-8") == run_cli(cli, "dedup", "-q", str(src)).stdout
