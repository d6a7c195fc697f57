"""`urikey.scrapy.RequestFingerprinter` with real Scrapy requests."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.http import FormRequest
from scrapy.utils.request import RequestFingerprinter as ScrapyDefault
from scrapy.utils.test import get_crawler

import urikey
from urikey.scrapy import RequestFingerprinter


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
