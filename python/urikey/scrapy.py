"""A Scrapy request fingerprinter that keys URLs with urikey.

Use it with ``REQUEST_FINGERPRINTER_CLASS = "urikey.scrapy.RequestFingerprinter"``.

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
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from urikey import Canonicalizer, InvalidURIError

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

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
        self._canonicalizer = Canonicalizer(
            profile or DEFAULT_PROFILE,
            enable=DEFAULT_ENABLE if enable is None else enable,
            disable=disable or (),
            lenient=True,
        )
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
