"""Scrapy's request fingerprinter and duplicate filters, keyed by urikey.

Use them with::

    REQUEST_FINGERPRINTER_CLASS = "urikey.scrapy.RequestFingerprinter"
    DUPEFILTER_CLASS = "urikey.scrapy.DupeFilter"

or, for workers sharing a crawl through scrapy-redis's scheduler (the
fingerprints in a ``urikey.RedisSeenSet``; docs/redis-crawl.md)::

    SCHEDULER = "scrapy_redis.scheduler.Scheduler"
    DUPEFILTER_CLASS = "urikey.scrapy.RedisDupeFilter"

The fingerprint (16 bytes) is built from the request's canonical URL, its
method and its body; headers are ignored, as in Scrapy's default:

* for a ``GET`` without a body it is the urikey fingerprint of the URL itself,
  so ``fingerprint(request).hex()`` equals what
  ``urikey normalize --key hash --profile crawl --with sort-query --lenient``
  prints for that URL, and a seen-set made elsewhere (``dedup_file`` with
  ``key="hash"``) matches the crawl's;
* otherwise it is the 128-bit BLAKE2b of that URL fingerprint, the method and
  the body.

The URL options come from the settings ``URIKEY_PROFILE`` (default
``"crawl"``), ``URIKEY_ENABLE`` (default ``["sort-query"]``, like w3lib's
query sorting) and ``URIKEY_DISABLE`` (default none); input is read
leniently. A URL that is still invalid is fingerprinted from its exact text.
Requests with ``meta["verbatim_url"]`` are fingerprinted from their exact URL
text too, as Scrapy's default does.

Compared with Scrapy's default (w3lib's ``canonicalize_url``), this merges
more URLs that RFC 3986 calls equivalent: default ports (``:80`` for http,
``:443`` for https), dot segments (``/a/./b/../c``), a trailing dot in the
host, and IPv4 and IPv6 spellings of the same address. It keeps apart what
the RFC does not call equivalent but w3lib merges: ``?a`` and ``?a=``,
``%20`` and ``+`` in the query, and reserved characters written plainly or
percent-encoded (``,`` and ``%2C``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit
from weakref import WeakKeyDictionary

from urikey import Canonicalizer, Deduplicator, InvalidURIError, SeenStore

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from urikey import RedisSeenSet

DEFAULT_PROFILE = "crawl"
DEFAULT_ENABLE: tuple[str, ...] = ("sort-query",)


def _blake(*parts: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        # Length-prefixed, so that no two part lists hash the same input.
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.digest()


class RequestFingerprinter:
    """Scrapy's ``REQUEST_FINGERPRINTER_CLASS``, keyed by urikey.

    Scrapy builds it with ``from_crawler``; the keyword arguments, when
    given, take the place of the settings ``URIKEY_PROFILE``,
    ``URIKEY_ENABLE`` and ``URIKEY_DISABLE``.

    Args:
        crawler: the crawler whose settings to read, or None (the defaults).
        profile: the profile (default ``"crawl"``).
        enable: flags to turn on (default ``["sort-query"]``).
        disable: flags of the profile to turn off (default none).

    Raises:
        ValueError: an unknown profile or flag.

    Example:
        >>> from scrapy import Request
        >>> fp = RequestFingerprinter()
        >>> a = fp.fingerprint(Request("http://example.com/a?b=2&a=1"))
        >>> a == fp.fingerprint(Request("HTTP://Example.com:80/a?a=1&b=2#top")), len(a)
        (True, 16)
    """

    def __init__(
        self,
        crawler: Crawler | None = None,
        *,
        profile: str | None = None,
        enable: list[str] | tuple[str, ...] | None = None,
        disable: list[str] | tuple[str, ...] | None = None,
    ) -> None:
        settings: Any = crawler.settings if crawler is not None else None
        if profile is None:
            profile = settings.get("URIKEY_PROFILE", DEFAULT_PROFILE) if settings else None
        if enable is None:
            enable = settings.getlist("URIKEY_ENABLE", list(DEFAULT_ENABLE)) if settings else None
        if disable is None:
            disable = settings.getlist("URIKEY_DISABLE", []) if settings else None
        # The keyword arguments of Canonicalizer and SeenStore.
        self._options: dict[str, Any] = {
            "profile": profile or DEFAULT_PROFILE,
            "enable": tuple(DEFAULT_ENABLE if enable is None else enable),
            "disable": tuple(disable or ()),
            "lenient": True,
        }
        self._canonicalizer = Canonicalizer(**self._options)
        self._cache: WeakKeyDictionary[Request, bytes] = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RequestFingerprinter:
        """The fingerprinter of a crawler, as Scrapy makes it.

        Args:
            crawler: the crawler, whose settings choose the options.

        Returns:
            A fingerprinter with the settings' options.

        Raises:
            ValueError: an unknown profile or flag in the settings.

        Example:
            >>> from scrapy.utils.test import get_crawler
            >>> crawler = get_crawler(settings_dict={"URIKEY_PROFILE": "rfc"})
            >>> fp = RequestFingerprinter.from_crawler(crawler)
            >>> url = "http://a.com/?b&a#x"
            >>> fp.url_fingerprint(url) == urikey.fingerprint(
            ...     url, "rfc", enable="sort-query", lenient=True
            ... )
            True
        """
        return cls(crawler)

    def url_fingerprint(self, url: str) -> bytes:
        """The 16-byte fingerprint of one URL.

        Args:
            url: the URL, read leniently.

        Returns:
            Its urikey fingerprint (``Canonicalizer.fingerprint`` with this
            fingerprinter's options), or, for a URL that is still invalid, the
            BLAKE2b of its exact text.

        Raises:
            TypeError: ``url`` is not a str.

        Example:
            >>> fp = RequestFingerprinter()
            >>> fp.url_fingerprint("http://a.com/?b&a") == fp.url_fingerprint("http://A.com/?a&b")
            True
        """
        try:
            return self._canonicalizer.fingerprint(url)
        except InvalidURIError:
            return _blake(b"verbatim", url.encode("utf-8", "surrogatepass"))

    def fingerprint(self, request: Request) -> bytes:
        """The fingerprint of a request, as Scrapy's dupefilter and cache use it.

        Args:
            request: a Scrapy request.

        Returns:
            16 bytes: the URL's fingerprint for a ``GET`` without a body
            (``url_fingerprint``), else the BLAKE2b of it, the method and the
            body. Cached per request.

        Raises:
            TypeError: the request's URL is not a str.

        Example:
            >>> from scrapy import Request
            >>> fp = RequestFingerprinter()
            >>> get = fp.fingerprint(Request("http://a.com/"))
            >>> get == fp.url_fingerprint("http://a.com/")
            True
            >>> get == fp.fingerprint(Request("http://a.com/", method="POST"))
            False
        """
        cached = self._cache.get(request)
        if cached is not None:
            return cached
        if request.meta.get("verbatim_url"):
            url_fp = _blake(b"verbatim", request.url.encode("utf-8", "surrogatepass"))
        else:
            url_fp = self.url_fingerprint(request.url)
        body = request.body or b""
        method = request.method.upper()
        if method == "GET" and not body:
            fp = url_fp
        else:
            fp = _blake(b"request", url_fp, method.encode("ascii", "replace"), body)
        self._cache[request] = fp
        return fp


DEFAULT_COMMIT_EVERY = 10_000
DEFAULT_COMMIT_SECONDS = 30.0
STORE_DIR = "urikey-seen"
# Names the fingerprinter whose fingerprints the store holds (JOBDIR/<this>).
FINGERPRINTER_FILE = "urikey-seen.fingerprinter"
_OURS = "urikey.scrapy.RequestFingerprinter"
# The messages of Scrapy's RFPDupeFilter, word for word: log watchers match them.
_LOG_EVERY = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
_LOG_FIRST = (
    "Filtered duplicate request: %(request)s - no more duplicates will be shown"
    " (see DUPEFILTER_DEBUG to show all duplicates)"
)


class _Fingerprinter(Protocol):
    def fingerprint(self, request: Request) -> bytes: ...


class DupeFilter:
    """Scrapy's ``DUPEFILTER_CLASS``: a request is a duplicate when its
    fingerprint was seen before, in this crawl or (with ``JOBDIR``) in an
    earlier run of the job.

    It makes the decisions of Scrapy's ``RFPDupeFilter`` with the same
    fingerprinter, logs as it does (the first duplicate at DEBUG with a hint
    about ``DUPEFILTER_DEBUG``, or every duplicate and its referer with
    ``DUPEFILTER_DEBUG = True``) and counts the ``dupefilter/filtered``
    stat. It has the methods of ``scrapy.dupefilters.BaseDupeFilter``
    without inheriting from it, so that importing ``urikey.scrapy`` needs no
    Scrapy.

    Where the fingerprints live:

    * with ``JOBDIR``, in a ``urikey.SeenStore`` at ``JOBDIR/urikey-seen/``
      (on disk, memory-mapped; about 15 bytes a fingerprint), so a paused
      job resumes knowing every request it saw. Fingerprints are committed
      every ``URIKEY_DUPEFILTER_COMMIT_EVERY`` new ones (default 10 000) or,
      at the next new one, once ``URIKEY_DUPEFILTER_COMMIT_SECONDS`` passed
      (default 30), and on ``close()`` (the end of the crawl, or a pause
      with Ctrl-C). A process killed uncleanly (SIGKILL, power loss) loses
      the fingerprints since the last commit, and the resumed run crawls
      those requests again when it meets them. Scrapy's ``requests.seen``
      has a window too: it is appended through a write buffer (the file
      system's block size, commonly 4 KiB: about 180 SHA1 fingerprints)
      that a killed process loses, and it is never synced, so power loss
      loses what the OS has not yet written. A commit here is synced.
    * without ``JOBDIR``, in memory, in a ``urikey.Deduplicator`` (about
      17 bytes a fingerprint, against about 90 for Scrapy's set of bytes).

    With ``urikey.scrapy.RequestFingerprinter`` (the intended setting) a
    ``GET``'s fingerprint is its URL's key, so the store is made with the
    fingerprinter's URL options and a store made with other options is
    refused with the store's ``ValueError`` naming both. Any other
    fingerprinter (Scrapy's default returns 20-byte SHA1 digests) is
    reduced to 16 bytes by BLAKE2b-128 of its fingerprint (two requests are
    mistaken for one with a probability of about n²/2¹²⁹ over n requests),
    and the store records which fingerprinter filled it
    (``JOBDIR/urikey-seen.fingerprinter``): resuming a job with another one
    is refused with a ``ValueError``, since its fingerprints would match
    none of the stored ones.

    Args:
        path: the job directory (``JOBDIR``), or None to keep the
            fingerprints in memory.
        debug: log every filtered request (``DUPEFILTER_DEBUG``).
        fingerprinter: the request fingerprinter (the crawler's);
            ``RequestFingerprinter()`` when None.
        commit_every: commit after this many new fingerprints.
        commit_seconds: commit at the first new fingerprint this many seconds
            after the last commit.

    Raises:
        ValueError: a store made with other options or by another
            fingerprinter, or a commit setting below 1 (0 for seconds).
        OSError: the store cannot be made, is damaged, or another process
            writes it.

    Example:
        >>> from scrapy import Request
        >>> df = DupeFilter()
        >>> [df.request_seen(Request(u)) for u in ["http://a.com/", "HTTP://a.com:80/"]]
        [False, True]
        >>> df = DupeFilter("job")
        >>> df.request_seen(Request("http://a.com/", method="POST", body=b"q=1"))
        False
        >>> df.close("shutdown")
        >>> DupeFilter("job").request_seen(Request("http://a.com/", method="POST", body=b"q=1"))
        True
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        debug: bool = False,
        *,
        fingerprinter: _Fingerprinter | None = None,
        commit_every: int = DEFAULT_COMMIT_EVERY,
        commit_seconds: float = DEFAULT_COMMIT_SECONDS,
    ) -> None:
        if commit_every < 1 or commit_seconds < 0:
            raise ValueError(
                f"commit_every must be 1 or more and commit_seconds 0 or more, "
                f"not {commit_every} and {commit_seconds}"
            )
        self.fingerprinter: _Fingerprinter = fingerprinter or RequestFingerprinter()
        self.debug = debug
        self.logdupes = True
        self.logger = logging.getLogger(__name__)
        self._ours = isinstance(self.fingerprinter, RequestFingerprinter)
        self._commit_every = commit_every
        self._commit_seconds = commit_seconds
        self._since_commit = 0
        self._last_commit = time.monotonic()
        self._store: SeenStore | None = None
        self._memory: Deduplicator | None = None
        if path is None:
            self._memory = Deduplicator()
        else:
            self._store = self._open_store(Path(path))

    def _open_store(self, jobdir: Path) -> SeenStore:
        fingerprinter = type(self.fingerprinter)
        name = _OURS if self._ours else f"{fingerprinter.__module__}.{fingerprinter.__qualname__}"
        kind = name if self._ours else f"{name} (hashed)"
        marker = jobdir / FINGERPRINTER_FILE
        jobdir.mkdir(parents=True, exist_ok=True)
        if marker.exists():
            recorded = marker.read_text(encoding="utf-8").strip()
            if recorded != kind:
                raise ValueError(
                    f"{jobdir / STORE_DIR} holds the fingerprints of {recorded}; "
                    f"this crawl uses {kind}: start a new JOBDIR"
                )
        else:
            marker.write_text(kind + "\n", encoding="utf-8")
        if self._ours:
            options = getattr(self.fingerprinter, "_options")  # noqa: B009
            return SeenStore(jobdir / STORE_DIR, **options)
        # Hashed fingerprints are no URL keys: any options do, always the same.
        return SeenStore(jobdir / STORE_DIR, "rfc")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DupeFilter:
        """The filter of a crawler, as Scrapy's scheduler makes it.

        Args:
            crawler: the crawler: its ``JOBDIR``, ``DUPEFILTER_DEBUG``,
                ``URIKEY_DUPEFILTER_COMMIT_EVERY`` and
                ``URIKEY_DUPEFILTER_COMMIT_SECONDS`` settings, and its
                request fingerprinter.

        Returns:
            The filter.

        Raises:
            ValueError: as the constructor.
            OSError: as the constructor.

        Example:
            >>> from scrapy.utils.test import get_crawler
            >>> crawler = get_crawler(settings_dict={
            ...     "REQUEST_FINGERPRINTER_CLASS": "urikey.scrapy.RequestFingerprinter",
            ...     "DUPEFILTER_CLASS": "urikey.scrapy.DupeFilter",
            ...     "JOBDIR": "job",
            ... })
            >>> df = DupeFilter.from_crawler(crawler)
            >>> df.close("finished")
            >>> sorted(p.name for p in Path("job").iterdir())
            ['urikey-seen', 'urikey-seen.fingerprinter']
        """
        settings = crawler.settings
        jobdir = settings.get("JOBDIR") or None
        return cls(
            jobdir,
            settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=crawler.request_fingerprinter,
            commit_every=settings.getint("URIKEY_DUPEFILTER_COMMIT_EVERY", DEFAULT_COMMIT_EVERY),
            commit_seconds=settings.getfloat(
                "URIKEY_DUPEFILTER_COMMIT_SECONDS", DEFAULT_COMMIT_SECONDS
            ),
        )

    def _fingerprint(self, request: Request) -> bytes:
        fp = self.fingerprinter.fingerprint(request)
        return fp if self._ours else _blake(b"fingerprint", fp)

    def request_seen(self, request: Request) -> bool:
        """Whether the request was seen before; it is seen from now on.

        Args:
            request: a Scrapy request (``dont_filter`` is the scheduler's
                business: it does not ask then).

        Returns:
            True when a request with its fingerprint was seen before.

        Raises:
            ValueError: the filter was closed.
            OSError: a commit could not be written.
            MemoryError: the in-memory set passed its memory limit.

        Example:
            >>> from scrapy import Request
            >>> df = DupeFilter()
            >>> df.request_seen(Request("http://a.com/?b&a")), df.request_seen(Request("http://a.com/?a&b"))
            (False, True)
        """
        fp = self._fingerprint(request)
        if self._store is None:
            if self._memory is None:
                raise ValueError("the DupeFilter is closed")
            return not self._memory.add_fingerprints([fp])[0]
        if not self._store.add_fingerprints([fp])[0]:
            return True
        self._since_commit += 1
        if (
            self._since_commit >= self._commit_every
            or time.monotonic() - self._last_commit >= self._commit_seconds
        ):
            self._commit()
        return False

    def _commit(self) -> None:
        if self._store is not None:
            self._store.commit()
        self._since_commit = 0
        self._last_commit = time.monotonic()

    def open(self) -> None:
        """Called by the scheduler when the spider opens; nothing to do (the
        store is opened by the constructor, so a bad ``JOBDIR`` fails first).

        Returns:
            None.

        Raises:
            Nothing.

        Example:
            >>> DupeFilter().open()
        """

    def close(self, reason: str) -> None:
        """Commits the fingerprints (with ``JOBDIR``) and releases the store.

        Args:
            reason: why the spider closed (``"finished"``, ``"shutdown"``
                for a pause, ...); every reason commits.

        Returns:
            None.

        Raises:
            OSError: the commit could not be written.

        Example:
            >>> from scrapy import Request
            >>> df = DupeFilter("job")
            >>> df.request_seen(Request("http://a.com/"))
            False
            >>> df.close("finished")
            >>> len(urikey.SeenStore("job/urikey-seen", "crawl", enable="sort-query", lenient=True))
            1
        """
        store, self._store, self._memory = self._store, None, None
        if store is not None:
            try:
                store.commit()
            finally:
                store.close()

    def log(self, request: Request, spider: Spider) -> None:
        """Logs a filtered request and counts it in the ``dupefilter/filtered``
        stat, as Scrapy's ``RFPDupeFilter`` does.

        Args:
            request: the duplicate.
            spider: the spider (its crawler's stats count it).

        Returns:
            None.

        Raises:
            AttributeError: a spider without a crawler.

        Example:
            >>> from scrapy import Request, Spider
            >>> from scrapy.utils.test import get_crawler
            >>> spider = Spider.from_crawler(get_crawler(Spider), "s")
            >>> DupeFilter().log(Request("http://a.com/"), spider)
            >>> spider.crawler.stats.get_value("dupefilter/filtered")
            1
        """
        if self.debug:
            from scrapy.utils.request import referer_str

            args = {"request": request, "referer": referer_str(request)}
            self.logger.debug(_LOG_EVERY, args, extra={"spider": spider})
        elif self.logdupes:
            self.logdupes = False
            self.logger.debug(_LOG_FIRST, {"request": request}, extra={"spider": spider})
        spider.crawler.stats.inc_value("dupefilter/filtered")


# scrapy-redis's key names (scrapy_redis.defaults): the scheduler's filter key,
# and the one-time key of a filter made for Scrapy's own scheduler.
SCHEDULER_DUPEFILTER_KEY = "%(spider)s:dupefilter"
STANDALONE_DUPEFILTER_KEY = "dupefilter:%(timestamp)s"
# scrapy-redis's filter messages, word for word (they differ from Scrapy's:
# no colon in the first one, no referer in the debug one).
_REDIS_LOG_EVERY = "Filtered duplicate request: %(request)s"
_REDIS_LOG_FIRST = (
    "Filtered duplicate request %(request)s - no more duplicates will be shown"
    " (see DUPEFILTER_DEBUG to show all duplicates)"
)


def _redis_connection(settings: Any) -> Any:
    """What `RedisSeenSet` connects with: ``REDIS_URL`` itself when it is the
    only connection setting (urikey's own pipelining client), else the
    redis-py client scrapy-redis makes from ``REDIS_HOST``, ``REDIS_PORT``,
    ``REDIS_PARAMS`` and the rest (its ``get_redis_from_settings``)."""
    url = settings.get("REDIS_URL")
    if url and not settings.getdict("REDIS_PARAMS"):
        return url
    from scrapy_redis.connection import get_redis_from_settings

    return get_redis_from_settings(settings)


def _redis_py_client(server: Any) -> tuple[Any, bool]:
    """A redis-py client for ``server`` (a URL or a client) and whether this
    function made it (then the caller closes it). A URL of a cluster node
    gives a cluster client, which reaches every master."""
    if not isinstance(server, str):
        return server, False
    import redis
    from redis.cluster import RedisCluster

    # urikey's own parameter; redis-py would take it for a connection option.
    parts = urlsplit(server)
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "name"])
    url = urlunsplit(parts._replace(query=query))
    client = redis.Redis.from_url(url)
    try:
        cluster = client.info("cluster").get("cluster_enabled") == 1
    except BaseException:
        client.close()
        raise
    if cluster:
        client.close()
        return RedisCluster.from_url(url), True
    return client, True


def _delete_set(server: Any, name: str) -> int:
    """Deletes the keys of the RedisSeenSet ``name`` (its meta,
    ``NAME:meta``, and its buckets, ``NAME:LEVEL:{TAG}REST``) on every
    master, and nothing else; returns how many."""
    client, made = _redis_py_client(server)
    ours = re.compile(re.escape(name).encode() + rb":(meta|[0-9]+:\{[0-9a-f]{4}\}[0-9a-f]*)")
    pattern = re.sub(r"([*?\[\]\\])", r"\\\1", name) + ":*"
    deleted = 0
    try:
        batch: list[bytes] = []
        # A cluster client scans every master.
        for key in client.scan_iter(match=pattern, count=1000):
            key = key if isinstance(key, bytes) else str(key).encode()
            if ours.fullmatch(key):
                batch.append(key)
            if len(batch) >= 500:
                deleted += _unlink(client, batch)
                batch = []
        deleted += _unlink(client, batch)
    finally:
        if made:
            client.close()
    return deleted


def _unlink(client: Any, keys: list[bytes]) -> int:
    if not keys:
        return 0
    # One key a command: a cluster's keys of one batch live in many slots.
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.unlink(key)
    return sum(int(n) for n in pipe.execute())


def _urikey_fingerprinter(crawler: Crawler | None) -> RequestFingerprinter:
    """The crawler's fingerprinter when it is urikey's, else one made from
    the crawler's ``URIKEY_*`` settings: the set holds URL keys either way."""
    if crawler is not None:
        fp = getattr(crawler, "request_fingerprinter", None)
        if isinstance(fp, RequestFingerprinter):
            return fp
    return RequestFingerprinter(crawler)


class RedisDupeFilter:
    """scrapy-redis's duplicate filter, with urikey's keys in a
    ``urikey.RedisSeenSet``: a drop-in for ``scrapy_redis.dupefilter.RFPDupeFilter``
    that workers of a crawl share through Redis.

    Use it under scrapy-redis's scheduler::

        SCHEDULER = "scrapy_redis.scheduler.Scheduler"
        DUPEFILTER_CLASS = "urikey.scrapy.RedisDupeFilter"
        REDIS_URL = "redis://127.0.0.1:6379/0"
        SCHEDULER_PERSIST = True   # keep the seen-set (and queue) after the crawl

    What stays as with scrapy-redis's filter:

    * the key: the scheduler makes the filter with ``from_spider``, named
      ``SCHEDULER_DUPEFILTER_KEY`` (default ``"%(spider)s:dupefilter"``) of
      the spider; under Scrapy's own scheduler (``from_crawler``) a one-time
      ``dupefilter:<timestamp>``, deleted by ``close()``. The set's Redis
      keys start with that name (``RedisSeenSet``'s layout);
    * the connection: ``REDIS_URL``, or ``REDIS_HOST``, ``REDIS_PORT``,
      ``REDIS_PARAMS`` through scrapy-redis's ``get_redis_from_settings``
      (a redis-py client). With ``REDIS_URL`` alone, urikey's own client
      connects (it pipelines without redis-py's cost per command);
    * the log: the first duplicate at DEBUG with the hint about
      ``DUPEFILTER_DEBUG``, or every duplicate with ``DUPEFILTER_DEBUG``, in
      scrapy-redis's words; ``clear()`` when the scheduler flushes (the end
      of a crawl without ``SCHEDULER_PERSIST``, or ``SCHEDULER_FLUSH_ON_START``).

    What changes:

    * the fingerprint is urikey's (``RequestFingerprinter``: for a ``GET``
      without a body, the key of its URL under ``URIKEY_PROFILE``,
      ``URIKEY_ENABLE`` and ``URIKEY_DISABLE``), not scrapy-redis's SHA1 of
      w3lib's ``canonicalize_url``: a set scrapy-redis filled is not reused
      (it stays at the key itself, beside the new set's ``NAME:meta`` and
      buckets, untouched; ``UNLINK`` it to free its memory). The crawler's
      ``REQUEST_FINGERPRINTER_CLASS`` is used when it is
      ``urikey.scrapy.RequestFingerprinter``, else one made from the
      settings, so the set always holds URL keys;
    * a claim is atomic across workers: one worker among all gets "new";
    * duplicates are counted in the ``dupefilter/filtered`` stat, as Scrapy's
      own filter does (scrapy-redis's filter counts none);
    * ``URIKEY_REDIS_EXPECTED_KEYS`` (default none: ``RedisSeenSet``'s)
      plans the set's size when the filter makes it.

    Args:
        server: a Redis URL (``redis://HOST:PORT/DB``) or a redis-py client.
        key: the name of the set (``RedisSeenSet``'s ``name``).
        debug: log every filtered request (``DUPEFILTER_DEBUG``).
        fingerprinter: urikey's request fingerprinter, whose URL options the
            set is made with; ``RequestFingerprinter()`` when None.
        expected_keys: the planned size of the set, when it is made.

    Raises:
        ValueError: the name holds a set of another key configuration or
            layout, or a key of another type.
        OSError: Redis cannot be reached or refuses the set (an evicting
            ``maxmemory-policy``).

    Example:
        >>> from scrapy import Request
        >>> df = RedisDupeFilter(redis_url, "spider:dupefilter")
        >>> [df.request_seen(Request(u)) for u in ["http://a.com/?b&a", "HTTP://a.com:80/?a&b"]]
        [False, True]
        >>> df.clear()
        >>> df.request_seen(Request("http://a.com/?a&b"))
        False
    """

    def __init__(
        self,
        server: Any,
        key: str,
        debug: bool = False,
        *,
        fingerprinter: RequestFingerprinter | None = None,
        expected_keys: int | None = None,
    ) -> None:
        self.server = server
        self.key = key
        self.debug = debug
        self.logdupes = True
        self.logger = logging.getLogger(__name__)
        self.fingerprinter = fingerprinter or RequestFingerprinter()
        self._expected_keys = expected_keys
        self._seen: RedisSeenSet | None = None
        # Opened now, so that a bad connection or a set of other options fails first.
        self._seen = self.seen

    @property
    def seen(self) -> RedisSeenSet:
        """The ``urikey.RedisSeenSet`` the filter claims in, opened again
        (and made, with its meta) at the first claim after ``clear()``."""
        if self._seen is None:
            from urikey import RedisSeenSet

            options: dict[str, Any] = getattr(self.fingerprinter, "_options")  # noqa: B009
            self._seen = RedisSeenSet(
                self.server, name=self.key, expected_keys=self._expected_keys, **options
            )
        return self._seen

    @classmethod
    def from_spider(cls, spider: Spider) -> RedisDupeFilter:
        """The filter of a spider, as scrapy-redis's scheduler makes it.

        Args:
            spider: the spider: its name and its settings
                (``SCHEDULER_DUPEFILTER_KEY``, the ``REDIS_*`` connection,
                ``DUPEFILTER_DEBUG``, ``URIKEY_*``).

        Returns:
            The filter of the set named ``SCHEDULER_DUPEFILTER_KEY % {"spider": spider.name}``.

        Raises:
            ValueError: as the constructor.
            OSError: as the constructor.

        Example:
            >>> from scrapy import Spider
            >>> from scrapy.utils.test import get_crawler
            >>> crawler = get_crawler(Spider, {"REDIS_URL": redis_url})
            >>> RedisDupeFilter.from_spider(Spider.from_crawler(crawler, "books")).key
            'books:dupefilter'
        """
        settings = spider.settings
        key = settings.get("SCHEDULER_DUPEFILTER_KEY", SCHEDULER_DUPEFILTER_KEY)
        return cls._from_settings(
            settings,
            key % {"spider": spider.name},
            _urikey_fingerprinter(getattr(spider, "crawler", None)),
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisDupeFilter:
        """The filter under Scrapy's own scheduler: a one-time set
        ``dupefilter:<timestamp>``, as scrapy-redis's filter makes it there.

        Args:
            crawler: the crawler, whose settings choose the connection and
                options and whose fingerprinter is used when it is urikey's.

        Returns:
            The filter.

        Raises:
            ValueError: as the constructor.
            OSError: as the constructor.

        Example:
            >>> from scrapy.utils.test import get_crawler
            >>> crawler = get_crawler(settings_dict={"REDIS_URL": redis_url})
            >>> df = RedisDupeFilter.from_crawler(crawler)
            >>> df.key.startswith("dupefilter:")
            True
            >>> df.close("finished")
        """
        key = STANDALONE_DUPEFILTER_KEY % {"timestamp": int(time.time())}
        return cls._from_settings(crawler.settings, key, _urikey_fingerprinter(crawler))

    @classmethod
    def _from_settings(
        cls, settings: Any, key: str, fingerprinter: RequestFingerprinter
    ) -> RedisDupeFilter:
        expected = settings.get("URIKEY_REDIS_EXPECTED_KEYS")
        return cls(
            _redis_connection(settings),
            key,
            settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=fingerprinter,
            expected_keys=int(expected) if expected else None,
        )

    def request_fingerprint(self, request: Request) -> str:
        """The request's fingerprint as hex, as scrapy-redis's method of that
        name gives it (there: a SHA1 of 40 digits; here 32).

        Args:
            request: a Scrapy request.

        Returns:
            The hex of ``RequestFingerprinter.fingerprint(request)``.

        Raises:
            TypeError: the request's URL is not a str.

        Example:
            >>> from scrapy import Request
            >>> df = RedisDupeFilter(redis_url, "spider:dupefilter")
            >>> len(df.request_fingerprint(Request("http://a.com/")))
            32
        """
        return self.fingerprinter.fingerprint(request).hex()

    def request_seen(self, request: Request) -> bool:
        """Claims the request's fingerprint: False for exactly one caller
        among all workers sharing the set, True for every other.

        Args:
            request: a Scrapy request (``dont_filter`` is the scheduler's
                business: it does not ask then).

        Returns:
            True when the fingerprint was in the set already.

        Raises:
            OSError: Redis cannot be reached or refused the write (out of
                memory under ``noeviction``); nothing was claimed then.

        Example:
            >>> from scrapy import Request
            >>> a = RedisDupeFilter(redis_url, "spider:dupefilter")
            >>> b = RedisDupeFilter(redis_url, "spider:dupefilter")
            >>> a.request_seen(Request("http://a.com/x")), b.request_seen(Request("http://A.com/x"))
            (False, True)
        """
        fp = self.fingerprinter.fingerprint(request)
        return not self.seen.add_fingerprints([fp])[0]

    def open(self) -> None:
        """Called when the spider opens; nothing to do (the set is opened by
        the constructor, so a bad connection fails first).

        Returns:
            None.

        Raises:
            Nothing.

        Example:
            >>> RedisDupeFilter(redis_url, "spider:dupefilter").open()
        """

    def close(self, reason: str = "") -> None:
        """Deletes the set, as scrapy-redis's filter does: Scrapy's own
        scheduler calls it at the end of a crawl (scrapy-redis's scheduler
        does not; it calls ``clear()`` unless ``SCHEDULER_PERSIST``).

        Args:
            reason: why the spider closed; every reason clears.

        Returns:
            None.

        Raises:
            OSError: Redis cannot be reached.

        Example:
            >>> df = RedisDupeFilter(redis_url, "dupefilter:1")
            >>> df.close("finished")
        """
        self.clear()

    def clear(self) -> None:
        """Deletes the set: its meta and its buckets, on every master of a
        cluster, through redis-py (the client given, or one made from the
        URL); other keys, scrapy-redis's queue among them, are left alone.

        Returns:
            None.

        Raises:
            OSError: Redis cannot be reached.

        Example:
            >>> from scrapy import Request
            >>> df = RedisDupeFilter(redis_url, "spider:dupefilter")
            >>> df.request_seen(Request("http://a.com/"))
            False
            >>> df.clear()
            >>> len(df.seen)
            0
        """
        self._seen = None
        _delete_set(self.server, self.key)

    def log(self, request: Request, spider: Spider) -> None:
        """Logs a filtered request as scrapy-redis's filter does, and counts
        it in the ``dupefilter/filtered`` stat as Scrapy's filter does.

        Args:
            request: the duplicate.
            spider: the spider (its crawler's stats count it, when it has one).

        Returns:
            None.

        Raises:
            Nothing.

        Example:
            >>> from scrapy import Request, Spider
            >>> from scrapy.utils.test import get_crawler
            >>> spider = Spider.from_crawler(get_crawler(Spider), "s")
            >>> RedisDupeFilter(redis_url, "s:dupefilter").log(Request("http://a.com/"), spider)
            >>> spider.crawler.stats.get_value("dupefilter/filtered")
            1
        """
        if self.debug:
            self.logger.debug(_REDIS_LOG_EVERY, {"request": request}, extra={"spider": spider})
        elif self.logdupes:
            self.logdupes = False
            self.logger.debug(_REDIS_LOG_FIRST, {"request": request}, extra={"spider": spider})
        crawler = getattr(spider, "crawler", None)
        if crawler is not None and crawler.stats is not None:
            crawler.stats.inc_value("dupefilter/filtered")
