"""``python -m urikey`` and the ``urikey`` console command of the wheel.

Both run the ``urikey`` command line itself (the Rust CLI of the repository,
compiled into the extension module), so ``pip install urikey`` alone gives
``urikey dedup``, ``urikey normalize``, ``urikey parse`` and ``urikey resolve``
with the same options, output and exit codes as the standalone binary.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``urikey`` command line and returns its exit status.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when
            None.

    Returns:
        The exit status: 0 success, 1 invalid lines with
        ``--fail-on-invalid``, 2 a usage or I/O error, 130 interrupted.

    Raises:
        TypeError: an argument is not a ``str`` (or ``bytes``).

    Example:
        >>> from urikey.__main__ import main
        >>> main(["--version"])  # doctest: +SKIP
        urikey 0.1.0
        0
    """
    from urikey import _urikey  # type: ignore[attr-defined]

    args = sys.argv[1:] if argv is None else list(argv)
    # What Python has buffered goes out before the command writes to the
    # same file descriptors.
    sys.stdout.flush()
    sys.stderr.flush()
    status: int = _urikey._cli_main([b"urikey", *(os.fsencode(a) for a in args)])
    return status


if __name__ == "__main__":
    sys.exit(main())
