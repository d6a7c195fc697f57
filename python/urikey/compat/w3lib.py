"""``canonicalize_url`` of w3lib 2.5.0, reproduced by urikey's ``w3lib`` presets."""

from __future__ import annotations

from urikey import Canonicalizer

__all__ = ["canonicalize_url"]

_PLAIN = Canonicalizer(compat="w3lib")
_KEEP_FRAGMENTS = Canonicalizer(compat="w3lib-keep-fragments")


def canonicalize_url(
    url: str,
    keep_blank_values: bool = True,
    keep_fragments: bool = False,
    encoding: str | None = None,
) -> str:
    """The canonical form of ``url``, exactly as ``w3lib.url.canonicalize_url``.

    Raises ``ValueError`` (an ``urikey.InvalidURIError``) where w3lib raises
    ``ValueError`` or ``UnicodeEncodeError``, and ``NotImplementedError`` for
    ``keep_blank_values=False``, an ``encoding`` and non-``str`` URLs (bytes,
    ``ParseResult``), which the presets do not reproduce.
    """
    if not keep_blank_values:
        raise NotImplementedError("urikey.compat.w3lib: keep_blank_values=False")
    if encoding is not None:
        raise NotImplementedError(f"urikey.compat.w3lib: encoding={encoding!r}")
    if not isinstance(url, str):
        raise NotImplementedError(f"urikey.compat.w3lib: url of type {type(url).__name__}")
    keyer = _KEEP_FRAGMENTS if keep_fragments else _PLAIN
    return keyer.canonicalize(url)
