"""The compat presets against the real reference libraries, installed from PyPI
(w3lib 2.5.0, surt 0.3.1): every line of the shared real URL lists plus the
generated dirty variants of ``scripts/compat-diff``, through the batch call and
through the drop-in functions. A line matches when both give the same key, or
when the reference raises and urikey reports the line as invalid."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
import surt as surt_reference
from conftest import ROOT
from w3lib.url import canonicalize_url as w3lib_reference

import urikey
from urikey.compat import surt as surt_dropin
from urikey.compat import w3lib as w3lib_dropin

PINNED = {"w3lib": "2.5.0", "surt": "0.3.1"}


def _load_compat_diff() -> ModuleType:
    """``scripts/compat-diff`` as a module: its dataset reader and generator."""
    path = ROOT / "scripts" / "compat-diff"
    loader = importlib.machinery.SourceFileLoader("compat_diff", str(path))
    spec = importlib.util.spec_from_loader("compat_diff", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _datasets_dir() -> Path | None:
    path = ROOT.parent / "shared" / "datasets"
    return path if path.is_dir() else None


@pytest.fixture(scope="module")
def lines() -> list[str]:
    diff = _load_compat_diff()
    out: list[bytes] = []
    datasets = _datasets_dir()
    if datasets is None:
        if os.environ.get("CI"):
            pytest.fail("../shared/datasets is missing (required when CI is set)")
    else:
        for part in diff.dataset_lines(datasets).values():
            out.extend(part)
    out.extend(diff.generated(3986, 20000))
    # The references take str: lines that are not UTF-8 cannot be given to them.
    decoded = []
    for raw in out:
        try:
            decoded.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    assert len(decoded) > 150_000 or datasets is None
    return decoded


def _reference_keys(f: Callable[[str], str], lines: list[str]) -> list[str | None]:
    keys: list[str | None] = []
    for line in lines:
        try:
            keys.append(f(line))
        except Exception:  # any exception of the reference means "invalid"
            keys.append(None)
    return keys


def _first_differences(
    lines: list[str], want: list[str | None], got: list[str | None], n: int = 10
) -> str:
    rows = []
    for line, w, g in zip(lines, want, got, strict=True):
        if w != g:
            rows.append(f"  {line!r}\n    reference: {w!r}\n    urikey:    {g!r}")
            if len(rows) == n:
                break
    return "\n".join(rows)


def test_reference_versions_are_the_pinned_ones() -> None:
    from importlib.metadata import version

    assert version("w3lib") == PINNED["w3lib"]
    assert version("surt") == PINNED["surt"]


@pytest.mark.parametrize(
    ("preset", "reference"),
    [
        ("w3lib", w3lib_reference),
        ("w3lib-keep-fragments", lambda u: w3lib_reference(u, keep_fragments=True)),
        ("ia-surt", surt_reference.surt),
    ],
)
def test_compat_preset_equals_reference(
    preset: str, reference: Callable[[str], str], lines: list[str]
) -> None:
    want = _reference_keys(reference, lines)
    got = urikey.Canonicalizer(compat=preset).canonicalize_many(lines)
    assert isinstance(got, list)
    differ = sum(1 for w, g in zip(want, got, strict=True) if w != g)
    assert differ == 0, (
        f"{preset}: {differ} of {len(lines)} lines differ from the reference; first ones:\n"
        + _first_differences(lines, want, got)
    )


def _or_none(f: Callable[[str], str], line: str) -> str | None:
    """``f(line)``, or None where it raises (the reference: anything; ours: ValueError)."""
    try:
        return f(line)
    except Exception:
        return None


def test_dropins_match_reference_on_a_sample(lines: list[str]) -> None:
    pairs: list[tuple[Callable[[str], str], Callable[[str], str]]] = [
        (w3lib_dropin.canonicalize_url, w3lib_reference),
        (
            lambda u: w3lib_dropin.canonicalize_url(u, keep_fragments=True),
            lambda u: w3lib_reference(u, keep_fragments=True),
        ),
        (surt_dropin.surt, surt_reference.surt),
    ]
    for line in lines[:: max(1, len(lines) // 5000)]:
        for ours, theirs in pairs:
            assert _or_none(ours, line) == _or_none(theirs, line), line


def _outcome(f: Callable[..., object], *args: object, **kwargs: object) -> tuple[str, object]:
    """``("ok", f(...))``, or ``("raised", exception)``."""
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as e:  # the reference may raise anything
        return ("raised", e)


def _same_outcome(
    ours: Callable[..., object], theirs: Callable[..., object], *args: object, **kwargs: object
) -> None:
    """The same key from ``ours(...)`` and ``theirs(...)``, or an exception of
    ours that the original's ``except`` catches."""
    got, want = _outcome(ours, *args, **kwargs), _outcome(theirs, *args, **kwargs)
    if want[0] == "raised":
        assert got[0] == "raised", (got, want)
        assert isinstance(got[1], type(want[1])), (got, want)
        assert isinstance(got[1], urikey.InvalidURIError), got
    else:
        assert got == want


def test_dropins_raise_what_the_originals_raise(lines: list[str]) -> None:
    # Issue 33, item 9: where the original raises, the same `except` clause
    # catches ours (surt: AttributeError for whitespace; w3lib: ValueError,
    # UnicodeEncodeError for a bracketed host with non-ASCII characters).
    odd = [" ", "\t\n", "http://[v1.\u00fc]/", "http://[::1%25\u00fc]/", "http://a:99999/"]
    for line in [*odd, *lines[:: max(1, len(lines) // 20000)]]:
        _same_outcome(w3lib_dropin.canonicalize_url, w3lib_reference, line)
        _same_outcome(surt_dropin.surt, surt_reference.surt, line)
    with pytest.raises(AttributeError):
        surt_dropin.surt(" ")


def test_dropins_take_what_the_originals_take(lines: list[str]) -> None:
    # bytes (UTF-8, and for w3lib not UTF-8 too: each such byte is
    # percent-encoded), ParseResult, None, and every argument passed at its
    # default value.
    from urllib.parse import urlparse

    sample = [*lines[:: max(1, len(lines) // 3000)], "http://a/caf\u00e9?b=&c&a=1#f"]
    for line in sample:
        raw = line.encode("utf-8")
        _same_outcome(w3lib_dropin.canonicalize_url, w3lib_reference, raw)
        latin = line.encode("latin-1", "replace")
        _same_outcome(w3lib_dropin.canonicalize_url, w3lib_reference, latin)
        try:
            parsed = urlparse(line)
        except ValueError:
            parsed = None
        if parsed is not None:
            _same_outcome(w3lib_dropin.canonicalize_url, w3lib_reference, parsed)
        _same_outcome(
            w3lib_dropin.canonicalize_url,
            w3lib_reference,
            line,
            True,
            True,
            "UTF8",
            query_separator="&",
        )
        _same_outcome(surt_dropin.surt, surt_reference.surt, raw)
        surt_defaults = {"with_scheme": False, "trailing_comma": False, "host_massage": True}
        _same_outcome(surt_dropin.surt, surt_reference.surt, line, None, **surt_defaults)
    for url in [None, "", b""]:
        assert surt_dropin.surt(url) == surt_reference.surt(url)  # type: ignore[call-overload]
    from surt import DefaultIAURLCanonicalizer

    for default in [DefaultIAURLCanonicalizer, DefaultIAURLCanonicalizer.canonicalize]:
        assert surt_dropin.surt("http://www.a.com/", default) == "com,a)/"


def test_keep_blank_values_false_equals_w3lib(lines: list[str]) -> None:
    want = _reference_keys(lambda u: w3lib_reference(u, keep_blank_values=False), lines)
    got = [_or_none(lambda u: w3lib_dropin.canonicalize_url(u, False), line) for line in lines]
    differ = sum(1 for w, g in zip(want, got, strict=True) if w != g)
    assert differ == 0, _first_differences(lines, want, got)


@pytest.mark.parametrize(
    "options",
    [
        {"encoding": "latin-1"},
        {"encoding": "cp1251"},
        {"encoding": "gb18030"},
        {"encoding": "iso2022_jp", "keep_fragments": True},
        {"encoding": "shift_jis"},
        {"encoding": "utf-16"},
        {"query_separator": ";"},
        {"query_separator": ",", "keep_blank_values": False, "keep_fragments": True},
        {"encoding": "latin1", "query_separator": ";"},
    ],
    ids=repr,
)
def test_w3lib_encodings_and_separators_equal_w3lib(
    options: dict[str, object], lines: list[str]
) -> None:
    # Every key is w3lib's, whatever the codec (w3lib percent-encodes the
    # bytes of the query and fragment in it; a codec with a byte order mark
    # gives every URL a query), and with the separators the drop-in takes.
    extra = [
        "http://www.example.com/r\u00e9sum\u00e9?q=r\u00e9sum\u00e9#fr\u00e9",
        "http://www.example.com/?country=\u0420\u043e\u0441\u0441\u0438\u044f&a=1",
        "http://www.example.com/?currency=\u20ac;b=2;a=1",
        "http://www.example.com/?a=x&y;b=1",
    ]
    encoding = str(options.get("encoding", "utf-8"))
    for line in [*extra, *lines[:: max(1, len(lines) // 8000)]]:
        for url in (line, line.encode(encoding, "replace")):
            _same_outcome(w3lib_dropin.canonicalize_url, w3lib_reference, url, **options)


def test_surt_reverse_ipaddr_false_equals_surt(lines: list[str]) -> None:
    extra = [
        "http://192.168.1.254/info/",
        "http://1.2.3.4:8080/x",
        "http://[0:0:0:0:0:0:13.1.68.3]",
    ]
    for line in [*extra, *lines]:
        _same_outcome(surt_dropin.surt, surt_reference.surt, line, reverse_ipaddr=False)


def test_dropins_refuse_what_they_do_not_reproduce() -> None:
    with pytest.raises(LookupError):
        w3lib_dropin.canonicalize_url("http://a/", encoding="no-such-codec")
    with pytest.raises(NotImplementedError, match="query_separator"):
        w3lib_dropin.canonicalize_url("http://a/", query_separator="|")
    with pytest.raises(TypeError, match="url must be"):
        w3lib_dropin.canonicalize_url(5)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="canonicalizer"):
        surt_dropin.surt("http://a/", canonicalizer=object())
    with pytest.raises(NotImplementedError, match="with_scheme=True"):
        surt_dropin.surt("http://a/", with_scheme=True)
    with pytest.raises(NotImplementedError, match="not UTF-8"):
        surt_dropin.surt(b"http://a/\xff")
    # Options surt does not read are ignored, as surt ignores them.
    assert surt_dropin.surt("http://a/", no_such_option=1) == "a)/"


def test_compat_errors_and_options() -> None:
    with pytest.raises(urikey.InvalidURIError) as e:
        urikey.canonicalize("http://a:99999/", compat="w3lib")
    assert e.value.reason == "invalid-port"
    with pytest.raises(ValueError, match=r"takes no profile"):
        urikey.Canonicalizer("crawl", compat="w3lib")
    with pytest.raises(ValueError, match="unknown compat preset"):
        urikey.Canonicalizer(compat="nope")
    d = urikey.Deduplicator(compat="ia-surt")
    assert d.add(["http://www.example.com/a", "https://example.com/a/", "http://b/"]) == [
        True,
        False,
        True,
    ]
    fp = urikey.fingerprint("http://www.example.com/a", compat="ia-surt")
    assert len(fp) == 16
