"""urikey: RFC 3986 canonical keys, fingerprints and deduplication of URLs.

Batch calls (``Canonicalizer.canonicalize_many``, ``fingerprints``,
``invalid_reasons``, ``unique_mask``, ``Deduplicator.add``) take a list of
``str`` (``None`` allowed) or any Arrow array of strings or bytes (pyarrow,
Polars, pandas, DuckDB) and return the same kind; they release the GIL and
use every core for large batches.

The submodules ``urikey.compat`` (drop-ins for w3lib and surt),
``urikey.scrapy`` and ``urikey.spark`` are imported on first use, so
``import urikey`` then ``urikey.compat.w3lib.canonicalize_url(...)`` works
and ``import urikey`` alone imports neither Scrapy nor Spark.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from urikey._errors import InvalidURIError
from urikey._urikey import (
    URI,
    Canonicalizer,
    Deduplicator,
    RedisSeenSet,
    SeenStore,
    __version__,
    canonicalize,
    dedup_file,
    fingerprint,
    parse,
    resolve,
)

__all__ = [
    "URI",
    "Canonicalizer",
    "Deduplicator",
    "InvalidURIError",
    "RedisSeenSet",
    "SeenStore",
    "__version__",
    "canonicalize",
    "dedup_file",
    "fingerprint",
    "parse",
    "resolve",
]

_SUBMODULES = ("compat", "scrapy", "spark")


def __getattr__(name: str) -> ModuleType:
    """Imports ``urikey.compat``, ``urikey.scrapy`` and ``urikey.spark`` on first use."""
    if name in _SUBMODULES:
        return importlib.import_module(f"urikey.{name}")
    raise AttributeError(f"module 'urikey' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_SUBMODULES])
