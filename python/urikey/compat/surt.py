"""``surt`` of surt 0.3.1 (the Internet Archive's CDX key), reproduced by
urikey's ``ia-surt`` preset."""

from __future__ import annotations

import re
from typing import Any, overload

from urikey import Canonicalizer, InvalidURIError
from urikey.compat._errors import raise_as_original

__all__ = ["surt"]

_SURT = Canonicalizer(compat="ia-surt")

# The options surt's default canonicalizer and output read, at their
# defaults (`IAURLCanonicalizer.canonicalize`, `handyurl.geturl_bytes`): the
# preset reproduces these values. Other names are ignored, as surt ignores
# them.
_DEFAULTS: dict[str, bool] = {
    "surt": True,
    "with_scheme": False,
    "trailing_comma": False,
    "public_suffix": False,
    "reverse_ipaddr": True,
    "host_lowercase": True,
    "host_massage": True,
    "auth_strip_user": True,
    "auth_strip_pass": True,
    "port_strip_default": True,
    "path_strip_empty": False,
    "path_lowercase": True,
    "path_strip_session_id": True,
    "path_strip_trailing_slash_unless_empty": True,
    "query_lowercase": True,
    "query_strip_session_id": True,
    "query_strip_empty": True,
    "query_alpha_reorder": True,
    "hash_strip": True,
}


# A SURT that starts with a host of four numbers, reversed, then its port and
# `)`: what `reverse_ipaddr=False` writes the other way round (surt tests the
# host with `(?:\d{1,3}\.){3}\d{1,3}$`). A key without a host starts with
# its scheme, a letter.
_REVERSED_IP = re.compile(r"(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3})(?=(?::\d+)?\))")

# Options reproduced away from their default, by rewriting the key.
_REWRITTEN = {"reverse_ipaddr"}


def _is_default_canonicalizer(canonicalizer: Any) -> bool:
    """``surt.DefaultIAURLCanonicalizer`` (the module or its ``canonicalize``)."""
    name = "surt.DefaultIAURLCanonicalizer"
    return getattr(canonicalizer, "__name__", None) == name or (
        getattr(canonicalizer, "__module__", None) == name
        and getattr(canonicalizer, "__name__", None) == "canonicalize"
    )


@overload
def surt(url: str | None, canonicalizer: Any = None, **options: Any) -> str: ...
@overload
def surt(url: bytes, canonicalizer: Any = None, **options: Any) -> bytes: ...
def surt(url: str | bytes | None, canonicalizer: Any = None, **options: Any) -> str | bytes:
    """The SURT of ``url``, exactly as ``surt.surt(url)``.

    Takes what surt takes: a ``str``, UTF-8 ``bytes`` (giving ``bytes``, as
    surt does) or None (``"-"``, like the empty URL), and every option at
    its default; options surt does not read are ignored, as surt ignores
    them.

    Args:
        url: the URL.
        canonicalizer: only surt's default (None, or
            ``surt.DefaultIAURLCanonicalizer``) is reproduced.
        **options: surt's options: ``reverse_ipaddr`` either way; the others
            (``with_scheme``, ``trailing_comma``, ``host_massage``, ...) at
            their defaults.

    Returns:
        The SURT key, byte for byte surt 0.3.1's (``bytes`` for ``bytes``).

    Raises:
        ValueError: where surt raises ``ValueError`` (an
            ``urikey.InvalidURIError`` with ``index`` and ``reason``).
        AttributeError: where surt raises it (a URL of whitespace only; also
            an ``InvalidURIError``).
        TypeError: ``url`` is not ``str``, ``bytes`` or None.
        NotImplementedError: another canonicalizer, an option away from its
            default, or bytes that are not UTF-8, which the preset does not
            reproduce.

    Example:
        >>> from urikey.compat.surt import surt
        >>> surt("http://www.archive.org/goo/?a=2&b&a=1")
        'org,archive)/goo?a=1&a=2&b'
        >>> surt(b"http://archive.org/"), surt(None)
        (b'org,archive)/', '-')
    """
    if canonicalizer is not None and not _is_default_canonicalizer(canonicalizer):
        raise NotImplementedError("urikey.compat.surt: canonicalizer")
    changed = sorted(
        name
        for name, value in options.items()
        if name in _DEFAULTS and value != _DEFAULTS[name] and name not in _REWRITTEN
    )
    if changed:
        given = ", ".join(f"{name}={options[name]!r}" for name in changed)
        raise NotImplementedError(f"urikey.compat.surt: {given}")
    reverse_ipaddr = bool(options.get("reverse_ipaddr", True))
    if url is None:
        return "-"
    if isinstance(url, (bytes, bytearray)):
        try:
            text = bytes(url).decode("utf-8")
        except UnicodeDecodeError:
            raise NotImplementedError("urikey.compat.surt: bytes that are not UTF-8") from None
        return _key(text, reverse_ipaddr).encode("utf-8")
    if not isinstance(url, str):
        raise TypeError(f"url must be str, bytes or None, not {type(url).__name__}")
    return _key(url, reverse_ipaddr)


def _key(url: str, reverse_ipaddr: bool) -> str:
    if not url:
        return "-"
    try:
        key: str = _SURT.canonicalize(url)
    except InvalidURIError as e:
        raise_as_original(e)
    if not reverse_ipaddr and not key.startswith("filedesc"):
        match = _REVERSED_IP.match(key)
        if match:
            key = ".".join(reversed(match.groups())) + key[match.end() :]
    return key
