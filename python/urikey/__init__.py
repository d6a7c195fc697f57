"""urikey: RFC 3986 canonical keys, fingerprints and deduplication of URLs.

Batch calls (``Canonicalizer.canonicalize_many``, ``fingerprints``,
``unique_mask``, ``Deduplicator.add``) take a list of ``str`` (``None``
allowed) or any Arrow array (pyarrow, Polars, pandas, DuckDB) and return the
same kind; they release the GIL and use every core for large batches.
"""

from urikey._errors import InvalidURIError
from urikey._urikey import (
    URI,
    Canonicalizer,
    Deduplicator,
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
    "SeenStore",
    "__version__",
    "canonicalize",
    "dedup_file",
    "fingerprint",
    "parse",
    "resolve",
]
