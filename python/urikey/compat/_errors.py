"""Exceptions of the drop-ins that the originals' ``except`` clauses catch.

Where w3lib or surt raises, the drop-in raises an ``urikey.InvalidURIError``
(a ``ValueError``, with ``index`` and ``reason``) that is also an instance of
the original's exception class: surt raises ``AttributeError`` for an input
of whitespace only, w3lib ``UnicodeEncodeError`` for a bracketed host with
non-ASCII characters; every other error of both is a ``ValueError`` already.
"""

from __future__ import annotations

from typing import NoReturn

from urikey._errors import InvalidURIError


class InvalidURIAttributeError(InvalidURIError, AttributeError):
    """An ``InvalidURIError`` that ``except AttributeError`` catches too (surt)."""


class InvalidURIUnicodeEncodeError(InvalidURIError, UnicodeEncodeError):
    """An ``InvalidURIError`` that ``except UnicodeEncodeError`` catches too (w3lib)."""

    def __init__(self, message: str, index: int, reason: str, position: int | None = None) -> None:
        UnicodeEncodeError.__init__(self, "idna", "", 0, 0, message)
        self.index = index
        self.reason = reason
        self.position = position
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.args[0])


# The original's exception class for each reason (`docs/compat.md`).
_CLASSES: dict[str, type[InvalidURIError]] = {
    "empty-url": InvalidURIAttributeError,
    "unicode-encode-error": InvalidURIUnicodeEncodeError,
}


def raise_as_original(error: InvalidURIError, messages: dict[str, str] | None = None) -> NoReturn:
    """Raises ``error`` again as the class the original raises for its reason,
    its message led by the original's where ``messages`` has one."""
    cls = _CLASSES.get(error.reason, InvalidURIError)
    prefix = (messages or {}).get(error.reason)
    if cls is InvalidURIError and prefix is None:
        raise error
    message = f"{prefix} ({error})" if prefix else str(error)
    raise cls(message, error.index, error.reason, error.position) from None
