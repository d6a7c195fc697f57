"""Type stubs of urikey (the extension module, re-exported by the package)."""

import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol, TypedDict, final, overload

from typing_extensions import Self

from urikey import compat as compat
from urikey import scrapy as scrapy
from urikey import spark as spark
from urikey._errors import InvalidURIError as InvalidURIError

__version__: str

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

Profile = Literal["none", "syntax", "rfc", "crawl"]
KeyFormat = Literal["uri", "surt", "hash"]
Compat = Literal["w3lib", "w3lib-keep-fragments", "ia-surt"]
Flags = str | Iterable[str]
StrPath = str | bytes | os.PathLike[str] | os.PathLike[bytes]

class _ArrowArray(Protocol):
    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]: ...

class _ArrowStream(Protocol):
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...

ArrowLike = _ArrowArray | _ArrowStream
"""pyarrow arrays, chunked arrays and tables, Polars and pandas Series, DuckDB relations
(of strings or bytes)."""

@final
class Canonicalizer:
    """Turns URLs into canonical keys with one set of options."""

    def __new__(
        cls,
        profile: Profile | str = "rfc",
        *,
        enable: Flags | None = None,
        disable: Flags | None = None,
        lenient: bool = False,
        key: KeyFormat | str = "uri",
        compat: Compat | str | None = None,
    ) -> Self: ...
    @property
    def profile(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def lenient(self) -> bool: ...
    def canonicalize(self, url: str) -> str: ...
    def fingerprint(self, url: str) -> bytes: ...
    @overload
    def canonicalize_many(
        self, urls: ArrowLike, *, on_invalid: Literal["null", "raise"] = "null"
    ) -> Any: ...
    @overload
    def canonicalize_many(
        self, urls: Iterable[str | None], *, on_invalid: Literal["null", "raise"] = "null"
    ) -> list[str | None]: ...
    @overload
    def fingerprints(self, urls: ArrowLike) -> Any: ...
    @overload
    def fingerprints(self, urls: Iterable[str | None]) -> list[bytes | None]: ...
    @overload
    def invalid_reasons(self, urls: ArrowLike) -> Any: ...
    @overload
    def invalid_reasons(self, urls: Iterable[str | None]) -> list[str | None]: ...
    @overload
    def unique_mask(
        self, urls: ArrowLike, *, base: str | None = None, allow_relative: bool = False
    ) -> Any: ...
    @overload
    def unique_mask(
        self,
        urls: Iterable[str | None],
        *,
        base: str | None = None,
        allow_relative: bool = False,
    ) -> list[bool]: ...

@final
class Deduplicator:
    """A seen-set of keys, fed batch after batch (in memory: ``SeenStore`` keeps one on disk)."""

    def __new__(
        cls,
        profile: Profile | str = "rfc",
        *,
        enable: Flags | None = None,
        disable: Flags | None = None,
        lenient: bool = False,
        compat: Compat | str | None = None,
        base: str | None = None,
        allow_relative: bool = False,
        memory_limit: int | str | None = None,
        expected_keys: int | None = None,
    ) -> Self: ...
    @overload
    def add(self, urls: ArrowLike) -> Any: ...
    @overload
    def add(self, urls: Iterable[str | None]) -> list[bool]: ...
    def add_fingerprints(self, fingerprints: Iterable[bytes]) -> list[bool]: ...
    def __len__(self) -> int: ...
    @property
    def memory_limit(self) -> int | None: ...
    @property
    def memory_bytes(self) -> int: ...

@final
class RedisSeenSet:
    """A seen-set in Redis shared by many clients (docs/redis.md).

    ``add`` claims: exactly one caller among all clients is told a URL is
    new. Given a URL, urikey's own pipelined client is used with the GIL
    released; given a redis-py client (``redis.Redis`` or
    ``redis.cluster.RedisCluster``), its pipelines are.
    """

    def __new__(
        cls,
        url_or_client: str | Any,
        profile: Profile | str = "rfc",
        *,
        name: str = "urikey",
        enable: Flags | None = None,
        disable: Flags | None = None,
        lenient: bool = False,
        compat: Compat | str | None = None,
        expected_keys: int | None = None,
    ) -> Self: ...
    @overload
    def add(self, urls: ArrowLike) -> Any: ...
    @overload
    def add(self, urls: Iterable[str | None]) -> list[bool]: ...
    @overload
    def contains(self, urls: ArrowLike) -> Any: ...
    @overload
    def contains(self, urls: Iterable[str | None]) -> list[bool]: ...
    def add_fingerprints(self, fingerprints: Iterable[bytes]) -> list[bool]: ...
    def contains_fingerprints(self, fingerprints: Iterable[bytes]) -> list[bool]: ...
    def info(self) -> dict[str, Any]: ...
    def __len__(self) -> int: ...

@final
class SeenStore:
    """A seen-store on disk (``urikey dedup --state``'s), fed batch after batch.

    Keys added since the last ``commit()`` are not durable. Safe to share
    between threads (calls are taken one at a time). One writer per store;
    ``readonly=True`` takes no lock.
    """

    def __new__(
        cls,
        path: str | os.PathLike[str],
        profile: Profile | str = "rfc",
        *,
        enable: Flags | None = None,
        disable: Flags | None = None,
        lenient: bool = False,
        compat: Compat | str | None = None,
        create: bool = True,
        readonly: bool = False,
        memory_limit: int | str | None = None,
    ) -> Self: ...
    @overload
    def add(self, urls: ArrowLike) -> Any: ...
    @overload
    def add(self, urls: Iterable[str | None]) -> list[bool]: ...
    @overload
    def contains(self, urls: ArrowLike) -> Any: ...
    @overload
    def contains(self, urls: Iterable[str | None]) -> list[bool]: ...
    def add_fingerprints(self, fingerprints: Iterable[bytes]) -> list[bool]: ...
    def contains_fingerprints(self, fingerprints: Iterable[bytes]) -> list[bool]: ...
    def commit(self) -> int: ...
    def close(self) -> None: ...
    def __len__(self) -> int: ...
    def __enter__(self) -> SeenStore: ...
    def __exit__(
        self, exc_type: object = None, _exc: object = None, _tb: object = None
    ) -> bool: ...

@final
class URI:
    """The raw components of a parsed URI-reference."""

    @property
    def scheme(self) -> str | None: ...
    @property
    def userinfo(self) -> str | None: ...
    @property
    def host(self) -> str | None: ...
    @property
    def port(self) -> str | None: ...
    @property
    def port_number(self) -> int | None: ...
    @property
    def path(self) -> str: ...
    @property
    def query(self) -> str | None: ...
    @property
    def fragment(self) -> str | None: ...
    @property
    def host_type(self) -> Literal["reg-name", "ipv4", "ipv6", "ipvfuture"] | None: ...
    @property
    def is_relative(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

class DedupPhases(TypedDict):
    keys_seconds: float
    inserts_seconds: float
    input_wait_seconds: float
    writer_wait_seconds: float
    other_seconds: float

class DedupStats(TypedDict):
    lines: int
    bytes: int
    blank: int
    invalid: int
    invalid_by_reason: dict[str, int]
    unique: int
    duplicates: int
    duplicate_ratio: float
    wall_seconds: float
    mb_per_s: float
    urls_per_s: float
    peak_rss_bytes: int | None
    threads: int
    phases: DedupPhases

def canonicalize(
    url: str,
    profile: Profile | str = "rfc",
    *,
    enable: Flags | None = None,
    disable: Flags | None = None,
    lenient: bool = False,
    key: KeyFormat | str = "uri",
    compat: Compat | str | None = None,
) -> str: ...
def fingerprint(
    url: str,
    profile: Profile | str = "rfc",
    *,
    enable: Flags | None = None,
    disable: Flags | None = None,
    lenient: bool = False,
    compat: Compat | str | None = None,
) -> bytes: ...
def parse(url: str) -> URI: ...
def resolve(base: str, reference: str, *, strict: bool = True) -> str: ...
def dedup_file(
    inputs: StrPath | Sequence[StrPath],
    output: StrPath,
    *,
    profile: Profile | str = "rfc",
    enable: Flags | None = None,
    disable: Flags | None = None,
    lenient: bool = False,
    key: KeyFormat | str = "uri",
    emit: Literal["canonical", "original"] = "canonical",
    field: int | None = None,
    delimiter: str = "\t",
    format: Literal["lines", "cdxj", "cdx", "warc", "wat", "parquet", "arc"] | None = None,
    threads: int = 0,
    rejects: StrPath | None = None,
    compat: Compat | str | None = None,
    memory_limit: int | str | None = None,
    temp_dir: StrPath | None = None,
    base: str | None = None,
    allow_relative: bool = False,
) -> DedupStats: ...
