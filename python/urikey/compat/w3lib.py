"""``canonicalize_url`` of w3lib 2.5.0, reproduced by urikey's ``w3lib`` presets."""

from __future__ import annotations

import codecs
from urllib.parse import ParseResult, uses_netloc

from urikey import Canonicalizer, InvalidURIError
from urikey.compat._errors import raise_as_original

__all__ = ["canonicalize_url"]

_PLAIN = Canonicalizer(compat="w3lib")
# The start of w3lib's own message, for `pytest.raises(match=...)` and logs.
_MESSAGES = {"invalid-ipv6-url": "Invalid IPv6 URL"}

# Separators w3lib finds in a query it has quoted: sub-delimiters it leaves
# as they are (it quotes `|`, so a `|` separator never separates), other
# than `&`, `=` and `+`, which mean something else in a query.
_SEPARATORS = set(";,!$()*")
_KEEP_FRAGMENTS = Canonicalizer(compat="w3lib-keep-fragments")


def _codec(encoding: str | None) -> str:
    """The codec's name (``LookupError`` for an unknown one)."""
    if encoding is None:
        return "utf-8"
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise LookupError(f"unknown encoding: {encoding}") from None


def _percent_encode(error: UnicodeError) -> tuple[str, int]:
    """w3lib's ``percentencode`` decoding error handler: each byte ``%HH``."""
    if not isinstance(error, UnicodeDecodeError):  # pragma: no cover - decoding only
        raise error
    bad = error.object[error.start : error.end]
    return "".join(f"%{b:02X}" for b in bad), error.end


codecs.register_error("urikey.compat.w3lib.percentencode", _percent_encode)

# w3lib's `_strip`: C0 controls and space at both ends, and every tab and
# newline inside, go when the text holds any of them.
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_NO_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")


def _decode(url: bytes, encoding: str = "utf-8") -> str:
    """Bytes as w3lib reads them: in ``encoding``, each byte it cannot decode
    percent-encoded."""
    return url.decode(encoding, "urikey.compat.w3lib.percentencode")


def _strip(text: str) -> str:
    if not any(ch in _C0_OR_SPACE for ch in text):
        return text
    return text.strip(_C0_OR_SPACE).translate(_NO_TAB_OR_NEWLINE)


def _encode_part(text: str, encoding: str) -> str:
    """``text`` as the bytes ``encoding`` gives it, each byte that is not a
    printable ASCII character (or is ``#``) written ``%HH``.

    w3lib percent-encodes the bytes of the query and the fragment in
    ``encoding``; the preset, given the bytes as UTF-8 text where they are
    printable ASCII and as escapes where they are not, quotes them the same
    way (w3lib keeps ``%`` as it is), for any codec, ISO-2022 and UTF-16
    included.

    Raises:
        UnicodeEncodeError: ``text`` does not fit the encoding.
    """
    return "".join(
        chr(b) if 0x21 <= b <= 0x7E and b != 0x23 else f"%{b:02X}" for b in text.encode(encoding)
    )


def _encode_query(url: str, encoding: str) -> str | None:
    """``url`` (stripped as w3lib strips it) with its query and fragment
    written as the bytes ``encoding`` gives them (see ``_encode_part``); None
    when one does not fit the encoding (w3lib then starts again in UTF-8)."""
    head, hash_, fragment = _strip(url).partition("#")
    base, question, query = head.partition("?")
    try:
        # Even a missing query is encoded: a codec that writes a byte order
        # mark (UTF-16) gives every URL one, as in w3lib.
        query = _encode_part(query, encoding)
        fragment = _encode_part(fragment, encoding) if fragment else fragment
    except UnicodeEncodeError:
        return None
    question = "?" if question or query else ""
    return f"{base}{question}{query}{hash_}{fragment}"


def _split_query(url: str) -> tuple[str, str, str] | None:
    """``(before, query, after)`` as ``urlsplit`` finds the query, or None."""
    head, hash_, fragment = url.partition("#")
    base, question, query = head.partition("?")
    if not question:
        return None
    return f"{base}?", query, f"{hash_}{fragment}"


def _separate_query(url: str, separator: str) -> str:
    """The query's pairs separated by ``&`` instead of ``separator`` (a literal
    ``&`` inside a pair written ``%26``, as w3lib writes it back)."""
    parts = _split_query(url)
    if parts is None:
        return url
    before, query, after = parts
    return f"{before}{query.replace('&', '%26').replace(separator, '&')}{after}"


def _rejoin_query(key: str, separator: str) -> str:
    """A key's query pairs joined by ``separator`` again."""
    parts = _split_query(key)
    if parts is None:
        return key
    before, query, after = parts
    return f"{before}{query.replace('&', separator)}{after}"


def _unparse(parts: ParseResult) -> str:
    """A ``ParseResult`` back to text, as w3lib's ``_urlunparse`` joins it."""
    scheme, netloc, path, params, query, fragment = parts
    url = f"{path};{params}" if params else path
    if netloc:
        if url and url[:1] != "/":
            url = f"/{url}"
        url = f"//{netloc}{url}"
    elif url[:2] == "//" or (scheme and scheme in uses_netloc and (not url or url[:1] == "/")):
        url = f"//{url}"
    if scheme:
        url = f"{scheme}:{url}"
    if query:
        url = f"{url}?{query}"
    if fragment:
        url = f"{url}#{fragment}"
    return url


def _drop_blank_values(key: str) -> str:
    """``keep_blank_values=False`` on a key: the query's ``k=`` pairs go.

    w3lib's key writes every pair as ``k=v`` (``k`` alone becomes ``k=``) with
    ``=`` and ``&`` inside keys and values percent-encoded, and a query left
    empty loses its ``?``.
    """
    head, hash_, fragment = key.partition("#")
    base, question, query = head.partition("?")
    if not question:
        return key
    kept = [pair for pair in query.split("&") if not pair.endswith("=")]
    url = f"{base}?{'&'.join(kept)}" if kept else base
    return f"{url}{hash_}{fragment}"


def canonicalize_url(
    url: str | bytes | ParseResult,
    keep_blank_values: bool = True,
    keep_fragments: bool = False,
    encoding: str | None = None,
    *,
    query_separator: str = "&",
) -> str:
    """The canonical form of ``url``, exactly as ``w3lib.url.canonicalize_url``.

    Takes what w3lib takes: a ``str``, ``bytes`` (decoded in ``encoding``,
    each byte that does not decode percent-encoded, as w3lib reads them) or a
    ``urllib.parse.ParseResult``, and w3lib's arguments.

    Args:
        url: the URL.
        keep_blank_values: keep query arguments with empty values (the
            default); False drops them, as w3lib does.
        keep_fragments: keep the fragment.
        encoding: the encoding of the query and fragment (and of ``bytes``),
            UTF-8 by default; any codec.
        query_separator: the query's separator: ``"&"`` (the default) or
            one of ``; , ! $ ( ) *``.

    Returns:
        The canonical URL, byte for byte w3lib 2.5.0's.

    Raises:
        ValueError: where w3lib raises ``ValueError`` (an
            ``urikey.InvalidURIError`` with ``index`` and ``reason``).
        UnicodeEncodeError: where w3lib raises it (also an
            ``InvalidURIError``).
        TypeError: ``url`` is not ``str``, ``bytes`` or ``ParseResult``.
        LookupError: an unknown ``encoding``.
        NotImplementedError: a separator outside the set above, which is not
            reproduced.

    Example:
        >>> from urikey.compat.w3lib import canonicalize_url
        >>> canonicalize_url("http://www.example.com/do?c=3&b=5&b=2&a=50")
        'http://www.example.com/do?a=50&b=2&b=5&c=3'
        >>> canonicalize_url(b"http://a.com/caf\\xe9?b=&a=1", keep_blank_values=False)
        'http://a.com/caf%E9?a=1'
        >>> canonicalize_url("http://a.com/?q=\\xe9;a=1", encoding="latin-1", query_separator=";")
        'http://a.com/?a=1;q=%E9'
    """
    codec = _codec(encoding)
    if query_separator != "&" and query_separator not in _SEPARATORS:
        raise NotImplementedError(f"urikey.compat.w3lib: query_separator={query_separator!r}")
    raw: bytes | None = None
    if isinstance(url, ParseResult):
        text = _unparse(url)
    elif isinstance(url, (bytes, bytearray)):
        raw = bytes(url)
        text = _decode(raw, codec)
    elif isinstance(url, str):
        text = url
    else:
        raise TypeError(f"url must be str, bytes or ParseResult, not {type(url).__name__}")
    if codec != "utf-8":
        encoded = _encode_query(text, codec)
        if encoded is not None:
            text = encoded
        elif raw is not None:
            # A query the encoding cannot hold: w3lib starts again in UTF-8.
            text = _decode(raw)
    if query_separator != "&":
        text = _separate_query(text, query_separator)
    keyer = _KEEP_FRAGMENTS if keep_fragments else _PLAIN
    try:
        key: str = keyer.canonicalize(text)
    except InvalidURIError as e:
        raise_as_original(e, _MESSAGES)
    if not keep_blank_values:
        key = _drop_blank_values(key)
    if query_separator != "&":
        key = _rejoin_query(key, query_separator)
    return key
