"""``surt`` of surt 0.3.1 (the Internet Archive's CDX key), reproduced by
urikey's ``ia-surt`` preset."""

from __future__ import annotations

from typing import Any

from urikey import Canonicalizer

__all__ = ["surt"]

_SURT = Canonicalizer(compat="ia-surt")


def surt(url: str, canonicalizer: Any = None, **options: Any) -> str:
    """The SURT of ``url``, exactly as ``surt.surt(url)`` with default arguments.

    Raises ``ValueError`` (an ``urikey.InvalidURIError``) where surt raises, and
    ``NotImplementedError`` for a ``canonicalizer``, any option, and non-``str``
    URLs, which the preset does not reproduce.
    """
    if canonicalizer is not None:
        raise NotImplementedError("urikey.compat.surt: canonicalizer")
    if options:
        names = ", ".join(sorted(options))
        raise NotImplementedError(f"urikey.compat.surt: options {names}")
    if not isinstance(url, str):
        raise NotImplementedError(f"urikey.compat.surt: url of type {type(url).__name__}")
    return _SURT.canonicalize(url)
