"""`urikey.scrapy.RequestFingerprinter` and `DupeFilter` with real Scrapy
requests, and real crawls of a local site (each in a process of its own)."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scrapy import Request, Spider
from scrapy.dupefilters import RFPDupeFilter
from scrapy.http import FormRequest
from scrapy.utils.request import RequestFingerprinter as ScrapyDefault
from scrapy.utils.test import get_crawler

import urikey
from urikey.scrapy import DupeFilter, RequestFingerprinter

CRAWL = Path(__file__).with_name("scrapy_crawl.py")
OURS = "urikey.scrapy.RequestFingerprinter"
PAGES = 12


def fingerprinter(**settings: object) -> RequestFingerprinter:
    crawler = get_crawler(
        settings_dict={
            "REQUEST_FINGERPRINTER_CLASS": "urikey.scrapy.RequestFingerprinter",
            **settings,
        }
    )
    fp = crawler.request_fingerprinter
    assert isinstance(fp, RequestFingerprinter)
    return fp


def test_used_by_a_crawler_and_equal_to_the_url_fingerprint() -> None:
    fp = fingerprinter()
    url = "http://example.com/a?b=2&a=1"
    got = fp.fingerprint(Request(url))
    assert len(got) == 16
    want = urikey.Canonicalizer("crawl", enable="sort-query", lenient=True).fingerprint(url)
    assert got == want


def test_merges_what_the_rfc_calls_equivalent() -> None:
    fp = fingerprinter()
    default = ScrapyDefault()
    same = [
        ("http://example.com/a?b=2&a=1#top", "http://example.com/a?a=1&b=2"),
        ("HTTP://Example.COM:80/a/./b/../c", "http://example.com/a/c"),
        ("https://example.com:443/", "https://example.com/"),
        ("http://example.com./x", "http://example.com/x"),
        ("http://example.com/%7Euser", "http://example.com/~user"),
    ]
    for a, b in same:
        assert fp.fingerprint(Request(a)) == fp.fingerprint(Request(b)), (a, b)
    # Scrapy's default merges the first two pairs too, but not the others.
    assert default.fingerprint(Request(same[0][0])) == default.fingerprint(Request(same[0][1]))
    assert default.fingerprint(Request(same[2][0])) != default.fingerprint(Request(same[2][1]))
    assert default.fingerprint(Request(same[3][0])) != default.fingerprint(Request(same[3][1]))


def test_keeps_apart_what_w3lib_merges() -> None:
    fp = fingerprinter()
    default = ScrapyDefault()
    apart = [
        ("http://example.com/?a", "http://example.com/?a="),
        ("http://example.com/p?q=a%20b", "http://example.com/p?q=a+b"),
        ("http://example.com/p?q=a,b", "http://example.com/p?q=a%2Cb"),
    ]
    for a, b in apart:
        assert fp.fingerprint(Request(a)) != fp.fingerprint(Request(b)), (a, b)
        assert default.fingerprint(Request(a)) == default.fingerprint(Request(b)), (a, b)


def test_method_and_body_count() -> None:
    fp = fingerprinter()
    url = "http://example.com/form"
    get = fp.fingerprint(Request(url))
    post = fp.fingerprint(Request(url, method="POST"))
    form1 = fp.fingerprint(FormRequest(url, formdata={"a": "1"}))
    form2 = fp.fingerprint(FormRequest(url, formdata={"a": "2"}))
    assert len({get, post, form1, form2}) == 4
    assert fp.fingerprint(FormRequest(url, formdata={"a": "1"})) == form1
    # Headers are ignored, as by Scrapy's default.
    assert fp.fingerprint(Request(url, headers={"X-A": "1"})) == get


def test_settings_choose_the_options() -> None:
    fp = fingerprinter(URIKEY_PROFILE="rfc", URIKEY_ENABLE=[], URIKEY_DISABLE=[])
    assert fp.fingerprint(Request("http://example.com/#a")) != fp.fingerprint(
        Request("http://example.com/#b")
    )
    fp = fingerprinter(URIKEY_ENABLE=["sort-query", "remove-query-params=utm_*"])
    assert fp.fingerprint(Request("http://example.com/?utm_source=x&id=1")) == fp.fingerprint(
        Request("http://example.com/?id=1")
    )
    with pytest.raises(ValueError, match="unknown profile"):
        fingerprinter(URIKEY_PROFILE="nope")


def test_verbatim_and_odd_urls_do_not_crash() -> None:
    fp = fingerprinter()
    a = fp.fingerprint(Request("http://example.com/a?b=1&a=2", meta={"verbatim_url": True}))
    b = fp.fingerprint(Request("http://example.com/a?a=2&b=1", meta={"verbatim_url": True}))
    assert a != b and len(a) == 16
    # Scrapy escapes what it can before a request exists; a URL still
    # invalid is fingerprinted from its exact text.
    odd = fp.url_fingerprint("http://[broken/")
    assert len(odd) == 16 and odd != fp.url_fingerprint("http://[broken/x")


def requests() -> list[Request]:
    """GETs, spellings of one URL, POSTs with and without bodies, verbatim
    URLs and a dont_filter duplicate."""
    a = "http://example.com/a?y=2&x=1"
    return [
        Request(a),
        Request("HTTP://Example.com:80/a?x=1&y=2#top"),
        Request("http://example.com/b"),
        Request(a, method="POST"),
        Request(a, method="POST"),
        FormRequest(a, formdata={"q": "1"}),
        FormRequest(a, formdata={"q": "1"}),
        FormRequest(a, formdata={"q": "2"}),
        Request(a, method="PUT", body=b"q=1"),
        Request(a, meta={"verbatim_url": True}),
        Request("http://example.com/a?x=1&y=2", meta={"verbatim_url": True}),
        Request("http://example.com/a?x=1&y=2", meta={"verbatim_url": True}),
        Request(a, dont_filter=True),
        Request("http://example.com/b#x"),
        Request("http://exa%mple.com/"),
        Request("http://exa%mple.com/"),
    ]


def decisions(df: Any, batch: list[Request]) -> list[bool]:
    """What the scheduler enqueues (`Scheduler.enqueue_request`'s rule)."""
    return [r.dont_filter or not df.request_seen(r) for r in batch]


@pytest.mark.parametrize("fingerprinter", [RequestFingerprinter, ScrapyDefault])
def test_same_decisions_as_rfpdupefilter(tmp_path: Path, fingerprinter: Any) -> None:
    want = decisions(RFPDupeFilter(fingerprinter=fingerprinter()), requests())
    if fingerprinter is RequestFingerprinter:
        assert want[:5] == [True, False, True, True, False]
    assert decisions(DupeFilter(fingerprinter=fingerprinter()), requests()) == want
    # On disk, across a pause after every request but the first few.
    half = 6
    (tmp_path / "rfp").mkdir()
    rfp = [RFPDupeFilter(str(tmp_path / "rfp"), fingerprinter=fingerprinter())]
    ours = [DupeFilter(tmp_path / "ours", fingerprinter=fingerprinter(), commit_every=4)]
    got_rfp, got = decisions(rfp[0], requests()[:half]), decisions(ours[0], requests()[:half])
    for r in requests()[half:]:
        rfp[-1].close("shutdown")
        ours[-1].close("shutdown")
        rfp.append(RFPDupeFilter(str(tmp_path / "rfp"), fingerprinter=fingerprinter()))
        ours.append(DupeFilter(tmp_path / "ours", fingerprinter=fingerprinter()))
        got_rfp += decisions(rfp[-1], [r])
        got += decisions(ours[-1], [r])
    assert got_rfp == want
    assert got == want


def test_jobdir_store_is_keyed_by_url(tmp_path: Path) -> None:
    df = DupeFilter(tmp_path, fingerprinter=fingerprinter())
    df.request_seen(Request("http://example.com/?b&a"))
    df.request_seen(Request("http://example.com/", method="POST"))
    df.close("finished")
    store = urikey.SeenStore(
        tmp_path / "urikey-seen", "crawl", enable="sort-query", lenient=True, readonly=True
    )
    assert store.contains(["http://EXAMPLE.com/?a&b", "http://example.com/"]) == [True, False]
    assert len(store) == 2


def test_a_store_of_other_options_or_fingerprinter_is_refused(tmp_path: Path) -> None:
    DupeFilter(tmp_path, fingerprinter=fingerprinter()).close("finished")
    with pytest.raises(ValueError, match="rfc"):
        DupeFilter(tmp_path, fingerprinter=fingerprinter(URIKEY_PROFILE="rfc"))
    with pytest.raises(ValueError, match="start a new JOBDIR"):
        DupeFilter(tmp_path, fingerprinter=ScrapyDefault())
    with pytest.raises(ValueError, match="commit_every"):
        DupeFilter(commit_every=0)


def test_commits_every_n_new_fingerprints(tmp_path: Path) -> None:
    df = DupeFilter(tmp_path, commit_every=3, commit_seconds=3600)
    for i in range(7):
        df.request_seen(Request(f"http://example.com/{i}"))
        df.request_seen(Request(f"http://example.com/{i}"))
    reader = urikey.SeenStore(
        tmp_path / "urikey-seen", "crawl", enable="sort-query", lenient=True, readonly=True
    )
    # Two commits of three; the seventh waits for the next commit or close().
    assert len(reader) == 6
    df.close("shutdown")
    assert (
        len(
            urikey.SeenStore(
                tmp_path / "urikey-seen", "crawl", enable="sort-query", lenient=True, readonly=True
            )
        )
        == 7
    )
    with pytest.raises(ValueError, match="closed"):
        df.request_seen(Request("http://example.com/"))


@pytest.mark.parametrize("debug", [False, True])
def test_logs_as_rfpdupefilter(caplog: pytest.LogCaptureFixture, debug: bool) -> None:
    messages = {}
    counts = {}
    for name, df in [("scrapy", RFPDupeFilter(debug=debug)), ("urikey", DupeFilter(debug=debug))]:
        crawler = get_crawler(Spider)
        spider = Spider.from_crawler(crawler, "s")
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            for r in [
                Request("http://a.com/"),
                Request("http://a.com/", headers={"Referer": "http://r.com/"}),
            ] * 2:
                if df.request_seen(r):
                    df.log(r, spider)
        messages[name] = [
            (rec.levelno, rec.getMessage())
            for rec in caplog.records
            if rec.name.endswith(("dupefilters", "urikey.scrapy"))
        ]
        counts[name] = crawler.stats.get_value("dupefilter/filtered")
    assert messages["urikey"] == messages["scrapy"]
    assert counts["urikey"] == counts["scrapy"] == 3
    assert len(messages["urikey"]) == (3 if debug else 1)


class Site(BaseHTTPRequestHandler):
    """Page i links to the next page, to itself spelled otherwise and to the
    home page; the home page links to every page. Paths served are logged."""

    served: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.served.append("GET " + self.path)
        if self.path == "/":
            links = [f"/p{i}" for i in range(PAGES)]
        else:
            i = int(self.path.strip("/p").split("?")[0] or 0)
            links = [f"/p{(i + 1) % PAGES}", f"/p{i}#again", f"/./p{i}", "/"]
        body = "".join(f'<a href="{link}">x</a>' for link in links).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.served.append(f"POST {self.path} {self.rfile.read(length).decode()}")
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture()
def site() -> Iterator[str]:
    Site.served = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def crawl(
    base: str, tmp_path: Path, interrupt_after: int | None = None, **settings: Any
) -> tuple[list[str], dict[str, Any], str]:
    """One crawl in a new process: what the site served, the crawl's stats and
    its log. With `interrupt_after`, Ctrl-C (SIGINT) once the site served that
    many requests: Scrapy's pause."""
    before = len(Site.served)
    stats_path = tmp_path / "stats.json"
    settings = {
        "REQUEST_FINGERPRINTER_CLASS": OURS,
        "DUPEFILTER_CLASS": "urikey.scrapy.DupeFilter",
        "CONCURRENT_REQUESTS": 1,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "DEBUG",
        **settings,
    }
    with subprocess.Popen(
        [sys.executable, str(CRAWL), base, json.dumps(settings), str(stats_path)],
        stderr=subprocess.PIPE,
        text=True,
    ) as run:
        if interrupt_after is not None:
            deadline = time.monotonic() + 30
            while len(Site.served) - before < interrupt_after and time.monotonic() < deadline:
                time.sleep(0.02)
            run.send_signal(signal.SIGINT)
        _, log = run.communicate(timeout=60)
    assert run.returncode == 0, log
    return Site.served[before:], json.loads(stats_path.read_text()), log


def test_a_paused_crawl_resumes_without_fetching_again(site: str, tmp_path: Path) -> None:
    job = str(tmp_path / "job")
    first, stats, log = crawl(site, tmp_path, JOBDIR=job, CLOSESPIDER_PAGECOUNT=5)
    assert stats["finish_reason"] == "closespider_pagecount"
    assert 5 <= len(first) < PAGES
    second, stats, log = crawl(site, tmp_path, JOBDIR=job)
    assert stats["finish_reason"] == "finished"
    # The start URL is dont_filter: fetched again; nothing else is.
    assert second.count("GET /") == 1
    assert not set(first) & (set(second) - {"GET /"})
    pages = {f"GET /p{i}" for i in range(PAGES)}
    assert pages <= set(first) | set(second)
    # One form posted once per body; the duplicate body was filtered.
    posts = [s for s in first + second if s.startswith("POST")]
    assert sorted(posts) == ["POST /form q=1", "POST /form q=2"]
    assert stats["dupefilter/filtered"] > 0
    assert log.count("Filtered duplicate request") == 1
    assert "(see DUPEFILTER_DEBUG to show all duplicates)" in log
    store = urikey.SeenStore(
        Path(job) / "urikey-seen", "crawl", enable="sort-query", lenient=True, readonly=True
    )
    # Every page, the home page, and two bodies of the form.
    assert len(store) == PAGES + 3


def test_a_crawl_paused_with_ctrl_c_resumes(site: str, tmp_path: Path) -> None:
    job = str(tmp_path / "job")
    first, stats, _ = crawl(site, tmp_path, interrupt_after=4, JOBDIR=job, DOWNLOAD_DELAY=0.1)
    assert stats["finish_reason"] == "shutdown"
    assert 4 <= len(first) < PAGES
    second, stats, _ = crawl(site, tmp_path, JOBDIR=job)
    assert stats["finish_reason"] == "finished"
    assert not set(first) & (set(second) - {"GET /"})
    assert {f"GET /p{i}" for i in range(PAGES)} <= set(first) | set(second)


def test_a_crawl_in_memory_with_debug_logging(site: str, tmp_path: Path) -> None:
    served, stats, log = crawl(site, tmp_path, DUPEFILTER_DEBUG=True)
    # The start URL is dont_filter, so not recorded: its first link back is fetched.
    assert served.count("GET /") == 2
    assert len(set(served)) == len(served) - 1 == PAGES + 3
    assert log.count("Filtered duplicate request") == stats["dupefilter/filtered"] > PAGES
    assert "no more duplicates will be shown" not in log
    assert not (tmp_path / "job").exists()


KILLED = """
import os, signal, sys
from scrapy import Request
from scrapy.dupefilters import RFPDupeFilter
from urikey.scrapy import DupeFilter, RequestFingerprinter
ours, rfp = sys.argv[1:3]
a = DupeFilter(ours, commit_every=3, commit_seconds=3600)
b = RFPDupeFilter(rfp, fingerprinter=RequestFingerprinter())
for i in range(7):
    a.request_seen(Request(f"http://example.com/{i}"))
    b.request_seen(Request(f"http://example.com/{i}"))
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_process_loses_what_it_did_not_commit(tmp_path: Path) -> None:
    ours, rfp = tmp_path / "ours", tmp_path / "rfp"
    rfp.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", KILLED, str(ours), str(rfp)], capture_output=True, check=False
    )
    assert run.returncode == -9, run.stderr
    after = [Request(f"http://example.com/{i}") for i in range(7)]
    # Two commits of three survive; the seventh is fetched again.
    resumed = DupeFilter(ours)
    assert [resumed.request_seen(r) for r in after] == [True] * 6 + [False]
    # Scrapy's file is written through a buffer of a few KiB: all seven are lost.
    df = RFPDupeFilter(str(rfp), fingerprinter=RequestFingerprinter())
    assert [df.request_seen(r) for r in after] == [False] * 7
