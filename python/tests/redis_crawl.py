"""A crawl shared by several Scrapy processes through Redis, on a local site
whose links spell each page's URL many ways; used by test_redis_crawl.py and
scripts/bench-redis.

The site (`CrawlSite`) serves pages `/p/<i>/~page?x=1&y=2` for i below
`pages`. Each page links to `LINKS` others (the next page, so that every page
is reachable, and pseudo-random ones), each link in a spelling drawn from
`spellings()`: scheme case, an absolute or a relative reference, dot
segments, percent-encoded unreserved characters (`%70` for `p`, `%7e` and
`%7E` for `~`, `%31` for `1`), query order, a fragment, and the default port
`:80` when the site listens on port 80. All of them are one URL under
urikey's crawl profile with `sort-query`; the server resolves each spelling
by its own rules (unquoting, dot segments, sorting the query) and logs every
request it receives with the worker that sent it (its User-Agent), so the
fetches of each page are counted from the access log.

`run_workers` starts Scrapy processes (`scrapy_redis_crawl.py`) under
scrapy-redis's scheduler and waits for them; `kill_after` SIGKILLs one once
the site has served that many pages, and starts it again.
"""

from __future__ import annotations

import json
import os
import posixpath
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

WORKER = Path(__file__).with_name("scrapy_redis_crawl.py")
LINKS = 8
PAGE = re.compile(r"^/p/(\d+)/~page$")
QUERY = [("x", "1"), ("y", "2")]
SPIDER = "site"
# The page number the access log gives the home page.
HOME = -1


def spellings(i: int, base: str, default_port: bool) -> list[str]:
    """Ways to write the URL of page i (`base` is `http://127.0.0.1:PORT`)."""
    host = base.removeprefix("http://")
    digits = "".join(f"%{ord(c):02X}" for c in str(i))
    out = [
        f"/p/{i}/~page?x=1&y=2",
        f"{base}/p/{i}/~page?y=2&x=1",
        f"HTTP://{host}/p/{i}/~page?x=1&y=2",
        f"hTTp://{host}/p/{i}/%7epage?y=2&x=1",
        f"{base}/p/./{i}/%7Epage?x=1&y=2",
        f"{base}/q/../p/{i}/~page?x=1&y=2#top",
        f"{base}/%70/{i}/~page?x=%31&y=2",
        f"/p/{digits}/~page?y=2&x=1",
        f"HTTP://{host}/p/{i}/x/../~page?x=1&y=2#{i}",
        f"//{host}/p/{i}/./~page?y=2&x=1",
        f"../../p/{i}/~page?x=1&y=2",
    ]
    if default_port:
        out.append(f"http://{host}:80/p/{i}/~page?x=1&y=2")
    return out


def page_of(target: str) -> int | None:
    """The page a request target names, by the server's own rules, or None."""
    parts = urlsplit(target)
    path = posixpath.normpath(unquote(parts.path))
    match = PAGE.match(path)
    if match is None or sorted(parse_qsl(parts.query, keep_blank_values=True)) != QUERY:
        return None
    return int(match.group(1))


@dataclass
class Fetch:
    worker: str
    page: int | None
    target: str


@dataclass
class CrawlSite:
    """The site, served by a thread of this process on 127.0.0.1."""

    pages: int
    port: int = 0
    seed: int = 44
    log: list[Fetch] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site.serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = _bind(Handler, self.port)
        self.port = int(self.server.server_address[1])
        self.base = "http://127.0.0.1" if self.port == 80 else f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def links(self, i: int) -> list[str]:
        rng = random.Random(self.seed * 1_000_003 + i)
        targets = [(i + 1) % self.pages] + [rng.randrange(self.pages) for _ in range(LINKS - 1)]
        return [rng.choice(spellings(t, self.base, self.port == 80)) for t in targets]

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        worker = handler.headers.get("User-Agent", "")
        page: int | None = HOME
        links = [spellings(i, self.base, False)[0] for i in range(min(10, self.pages))]
        if handler.path != "/":
            page = page_of(handler.path)
            links = self.links(page) if page is not None else []
        with self._lock:
            self.log.append(Fetch(worker, page, handler.path))
        status = 200 if page is not None else 404
        body = "".join(f'<a href="{link}">x</a>\n' for link in links).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def served_pages(self) -> int:
        with self._lock:
            return sum(1 for f in self.log if f.page is not None and f.page != HOME)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A worker SIGKILLed mid-request resets its connections: expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _bind(handler: type[BaseHTTPRequestHandler], port: int) -> ThreadingHTTPServer:
    """Port 80 when asked (port=80) and free, else any free port."""
    if port == 80:
        try:
            return _Server(("127.0.0.1", 80), handler)
        except OSError:
            port = 0
    return _Server(("127.0.0.1", port), handler)


@dataclass
class Worker:
    name: str
    process: subprocess.Popen[str]
    stats_path: Path
    log_path: Path

    def result(self) -> dict[str, Any]:
        if not self.stats_path.exists():
            return {}
        loaded: dict[str, Any] = json.loads(self.stats_path.read_text())
        return loaded


def start_worker(
    name: str, site: CrawlSite, redis_url: str, settings: dict[str, Any], directory: Path
) -> Worker:
    directory.mkdir(parents=True, exist_ok=True)
    stats_path = directory / f"{name}.stats.json"
    log_path = directory / f"{name}.log"
    stats_path.unlink(missing_ok=True)
    all_settings = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "SCHEDULER_PERSIST": True,
        "REDIS_URL": redis_url,
        "USER_AGENT": name,
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        # Scrapy's remote control listens on a port of its own: not wanted here.
        "REMOTE_CONTROL_ENABLED": False,
        "LOG_LEVEL": os.environ.get("CRAWL_LOG_LEVEL", "INFO"),
        "CONCURRENT_REQUESTS": 8,
        **settings,
    }
    log = log_path.open("a", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(WORKER), site.base, json.dumps(all_settings), str(stats_path)],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    log.close()
    return Worker(name, process, stats_path, log_path)


@dataclass
class CrawlResult:
    counts: Counter[int]
    home: int
    by_worker: Counter[str]
    not_found: list[str]
    stats: dict[str, dict[str, Any]]
    seconds: float
    killed_at: int | None = None


def run_workers(
    site: CrawlSite,
    redis_url: str,
    directory: Path,
    *,
    workers: int = 2,
    settings: dict[str, Any] | None = None,
    kill_after: int | None = None,
    timeout: float = 300.0,
) -> CrawlResult:
    """Runs `workers` Scrapy processes to the end of the crawl. With
    `kill_after`, the first one is SIGKILLed once the site served that many
    pages (counted from the start of this call) and started again."""
    settings = settings or {}
    start = time.monotonic()
    before = len(site.log)
    running = [
        start_worker(f"worker-{n}", site, redis_url, settings, directory) for n in range(workers)
    ]
    done: list[Worker] = []
    killed_at = None
    try:
        if kill_after is not None:
            victim = running[0]
            while site.served_pages() - before < kill_after:
                if victim.process.poll() is not None:
                    raise RuntimeError(
                        f"{victim.name} ended before the kill: see {victim.log_path}"
                    )
                if time.monotonic() - start > timeout:
                    raise TimeoutError("the crawl did not reach the kill point")
                time.sleep(0.005)
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait()
            killed_at = site.served_pages() - before
            running[0] = start_worker(victim.name, site, redis_url, settings, directory)
        for w in running:
            left = max(1.0, timeout - (time.monotonic() - start))
            w.process.wait(timeout=left)
            done.append(w)
    finally:
        for w in running:
            if w.process.poll() is None:
                w.process.kill()
                w.process.wait()
    for w in done:
        if w.process.returncode != 0:
            raise RuntimeError(
                f"{w.name} exited {w.process.returncode}: {w.log_path.read_text()[-3000:]}"
            )
    log = site.log[before:]
    return CrawlResult(
        counts=Counter(f.page for f in log if f.page is not None and f.page != HOME),
        home=sum(1 for f in log if f.page == HOME),
        by_worker=Counter(f.worker for f in log),
        not_found=[f.target for f in log if f.page is None],
        stats={w.name: w.result() for w in done},
        seconds=time.monotonic() - start,
        killed_at=killed_at,
    )
