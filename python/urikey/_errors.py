"""The exception raised for a string that is not a valid URI-reference."""

from __future__ import annotations


class InvalidURIError(ValueError):
    """A URL that is not a valid RFC 3986 URI-reference.

    ``index`` is the byte offset of the first offending byte in the UTF-8
    form of the input (the input's length when it ended too early),
    ``reason`` the error's stable kebab-case name (``invalid-host``, ...),
    and ``position`` the URL's place in the batch for batch calls
    (``None`` for one-URL calls).

    Args:
        message: the error's text.
        index: the byte offset of the first offending byte.
        reason: the stable name of what is wrong.
        position: the URL's place in a batch, or None.

    Example:
        >>> try:
        ...     urikey.canonicalize("http://exa mple.com/")
        ... except urikey.InvalidURIError as e:
        ...     print(e.index, e.reason, e.position)
        10 invalid-host None
    """

    index: int
    reason: str
    position: int | None

    def __init__(self, message: str, index: int, reason: str, position: int | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.reason = reason
        self.position = position

    def __reduce__(self) -> tuple[type[InvalidURIError], tuple[str, int, str, int | None]]:
        return (type(self), (str(self), self.index, self.reason, self.position))
