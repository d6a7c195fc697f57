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


def test_dropins_refuse_what_they_do_not_reproduce() -> None:
    with pytest.raises(NotImplementedError, match="keep_blank_values"):
        w3lib_dropin.canonicalize_url("http://a/?b=", keep_blank_values=False)
    with pytest.raises(NotImplementedError, match="encoding"):
        w3lib_dropin.canonicalize_url("http://a/", encoding="latin-1")
    with pytest.raises(NotImplementedError, match="bytes"):
        w3lib_dropin.canonicalize_url(b"http://a/")  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="canonicalizer"):
        surt_dropin.surt("http://a/", canonicalizer=object())
    with pytest.raises(NotImplementedError, match="with_scheme"):
        surt_dropin.surt("http://a/", with_scheme=True)


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
