"""urikey inside Apache Spark: canonical keys and first-seen deduplication.

``with_keys`` adds a URL column's canonical key, its 128-bit fingerprint (as
two signed 64-bit halves) and the reason it is invalid; ``dedup`` keeps the
first row of every key, as ``urikey dedup`` does. Keys are computed with
``mapInArrow`` on whole Arrow record batches through the package's batch
calls, so no Python code runs per row, and the URLs' bytes are never decoded
in Python: a row that is not valid UTF-8 (Spark reads text files without
checking) is an invalid URL like any other, never a failed job.

pyspark is an optional dependency: it is imported when these functions run,
and executors need only the urikey wheel (plus pyarrow and numpy, which
pyspark's Arrow support needs anyway).

The fingerprint ``fp`` (16 bytes, big-endian, as ``Canonicalizer.fingerprint``
returns) is split into ``hi = fp[0:8]`` and ``lo = fp[8:16]``, each read as a
big-endian two's-complement ``bigint``; the unsigned value is
``((hi % 2**64) << 64) | (lo % 2**64)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["dedup", "new_since", "with_keys"]

Flags = str | Iterable[str]


def _flags(flags: Flags | None) -> tuple[str, ...]:
    if flags is None:
        return ()
    if isinstance(flags, str):
        return (flags,)
    return tuple(flags)


class _Options:
    """The keying options, checked on the driver and rebuilt on each executor."""

    def __init__(
        self,
        profile: str,
        enable: Flags | None,
        disable: Flags | None,
        lenient: bool,
        compat: str | None,
    ) -> None:
        self.compat = compat
        self.profile = profile
        self.enable = _flags(enable)
        self.disable = _flags(disable)
        self.lenient = bool(lenient)
        # Fails here, on the driver, for an unknown profile or flag.
        self.canonicalizer()

    def canonicalizer(self) -> Any:
        import urikey

        options: dict[str, Any] = {
            "enable": self.enable,
            "disable": self.disable,
            "lenient": self.lenient,
        }
        if self.compat is None:
            return urikey.Canonicalizer(self.profile, **options)
        # A preset fixes the whole keying: the default profile is left out so
        # that only an explicit other one is refused (by the package).
        if self.profile != "rfc":
            options["profile"] = self.profile
        try:
            return urikey.Canonicalizer(compat=self.compat, **options)
        except TypeError as e:
            if "compat" not in str(e):
                raise
            raise NotImplementedError(
                f"compat={self.compat!r}: this urikey build has no compat presets"
            ) from e


def _url_index(df: DataFrame, column: str) -> int:
    """The position of the URL column, a string (or binary) column."""
    from pyspark.sql.types import BinaryType, StringType

    names = df.columns
    if column not in names:
        raise ValueError(f"no column {column!r} in {names}")
    field = df.schema[column]
    if not isinstance(field.dataType, (StringType, BinaryType)):
        raise TypeError(
            f"column {column!r} is {field.dataType.simpleString()}, not string or binary"
        )
    return names.index(column)


def _col(name: str) -> Any:
    """A column by its exact name (dots and backticks in it are not syntax)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _halves(fps: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Splits a FixedSizeBinary(16) array into its signed big-endian halves."""
    import numpy as np
    import pyarrow as pa

    n = len(fps)
    data = fps.buffers()[1]
    words = np.frombuffer(data, dtype=">i8", count=2 * (fps.offset + n))[2 * fps.offset :]
    pairs = words.reshape(n, 2).astype(np.int64)
    mask = fps.is_null().to_numpy(zero_copy_only=False) if fps.null_count else None
    hi = pa.array(pairs[:, 0], type=pa.int64(), mask=mask)
    lo = pa.array(pairs[:, 1], type=pa.int64(), mask=mask)
    return hi, lo


def _plain(array: Any) -> pa.Array:
    """A batch result as one pyarrow array (it may come back chunked)."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        return array.combine_chunks()
    return array


def _key_batches(options: _Options, index: int, names: Sequence[str]) -> Any:
    """The mapInArrow function of ``with_keys`` (runs on the executors)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        canonicalizer = options.canonicalizer()
        for batch in batches:
            urls = batch.column(index)
            keys = _plain(canonicalizer.canonicalize_many(urls))
            hi, lo = _halves(_plain(canonicalizer.fingerprints(urls)))
            # Named in one batch call: the URLs' bytes are never decoded here,
            # so a row that is not UTF-8 is an invalid URL, not a failed job.
            reasons = _plain(canonicalizer.invalid_reasons(urls))
            columns = [*batch.columns, keys, hi, lo, reasons]
            yield pa.RecordBatch.from_arrays(columns, names=list(names))

    return run


def with_keys(
    df: DataFrame,
    column: str,
    *,
    profile: str = "rfc",
    enable: Flags | None = (),
    disable: Flags | None = (),
    lenient: bool = False,
    compat: str | None = None,
) -> DataFrame:
    """``df`` with four columns more, computed from the string column ``column``.

    - ``{column}_key`` (string): the canonical key, null when the URL is null
      or invalid;
    - ``{column}_fp_hi``, ``{column}_fp_lo`` (bigint): the 128-bit fingerprint
      of the key as two signed 64-bit halves, null when the key is;
    - ``{column}_invalid`` (string): the reason a non-null URL is invalid
      (``invalid-host``, ``invalid-path`` for bytes that are not UTF-8, ...),
      else null.

    Keys are those of ``Canonicalizer.canonicalize_many`` (any
    URI-reference, relative ones included, as ``urikey normalize``).

    Args:
        df: any DataFrame.
        column: the name of its column of URLs (string, or binary: its bytes
            are read as they are).
        profile, enable, disable, lenient, compat: the options of
            ``urikey.Canonicalizer``, checked here, on the driver, before any
            job runs.

    Returns:
        The lazy DataFrame: ``df``'s columns, then the four above.

    Raises:
        ValueError: no such column, a column of that name exists already, or
            an unknown profile, flag or preset.
        TypeError: the column is neither string nor binary.

    Example:
        >>> keyed = with_keys(spark.createDataFrame([("HTTP://A.com:80/x",)], ["url"]), "url")
        >>> keyed.select("url_key", "url_invalid").first()
        Row(url_key='http://a.com/x', url_invalid=None)
    """
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    options = _Options(profile, enable, disable, lenient, compat)
    index = _url_index(df, column)
    added = [
        StructField(f"{column}_key", StringType()),
        StructField(f"{column}_fp_hi", LongType()),
        StructField(f"{column}_fp_lo", LongType()),
        StructField(f"{column}_invalid", StringType()),
    ]
    clash = [f.name for f in added if f.name in df.columns]
    if clash:
        raise ValueError(f"columns {clash} already exist")
    schema = StructType([*df.schema.fields, *added])
    return df.mapInArrow(_key_batches(options, index, schema.names), schema)


def _fp_batches(
    options: _Options, index: int, names: Sequence[str], base: str | None, allow_relative: bool
) -> Any:
    """The mapInArrow function of ``dedup``: fingerprints only, one pass over each URL.

    The fingerprints follow the dedup calls' rule (``Canonicalizer.unique_mask``):
    null for a relative reference unless ``base`` or ``allow_relative`` says
    otherwise, and for a blank URL.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        canonicalizer = options.canonicalizer()
        for batch in batches:
            urls = batch.column(index)
            fps = canonicalizer._dedup_fingerprints(urls, base=base, allow_relative=allow_relative)
            hi, lo = _halves(_plain(fps))
            yield pa.RecordBatch.from_arrays([*batch.columns, hi, lo], names=list(names))

    return run


def dedup(
    df: DataFrame,
    column: str,
    *,
    order_by: str | Sequence[str] | None = None,
    profile: str = "rfc",
    enable: Flags | None = (),
    disable: Flags | None = (),
    lenient: bool = False,
    compat: str | None = None,
    base: str | None = None,
    allow_relative: bool = False,
) -> DataFrame:
    """The first row of every canonical key of ``column``, with ``df``'s columns.

    "First" is by ``order_by`` (a column name or a list of them, ascending,
    nulls first), ties broken by input order; by default input order alone.
    Rows whose URL is null, empty (a blank line to the CLI) or invalid are
    dropped, as ``urikey dedup`` skips and rejects them. A dedup call: a
    relative reference (``/a``, ``hello``) is invalid unless ``base`` or
    ``allow_relative`` says otherwise (the CLI's ``--base`` and
    ``--allow-relative``). The output's row order is unspecified.

    Input order is the order this job reads ``df`` in: partition by
    partition, row by row (``monotonically_increasing_id``). It is assigned
    once, in the stage that computes the fingerprints, and no branch of the
    plan reads ``df`` twice, so every key keeps exactly one row even when
    ``df`` is not deterministic. Which row that is, is stable from run to run
    only when ``df``'s partitions and their order are (a file source with the
    same files and split settings; not the output of an unsorted shuffle).
    For a guarantee that does not depend on Spark, pass ``order_by`` a column
    that orders the input (a line number, a fetch time).

    Args:
        df: any DataFrame.
        column: the name of its column of URLs (string or binary).
        order_by: a column name or a list of them that decides which row of a
            key is first (ascending, nulls first); None for input order.
        profile, enable, disable, lenient, compat: the options of
            ``urikey.Canonicalizer``, checked on the driver.
        base: resolve relative references against this absolute URI first.
        allow_relative: key relative references as they are.

    Returns:
        The lazy DataFrame of the kept rows, with exactly ``df``'s columns.

    Raises:
        ValueError: no such column (URL or ``order_by``), an unknown profile,
            flag or preset, a ``base`` that is not an absolute URI, or both
            ``base`` and ``allow_relative``.
        TypeError: the URL column is neither string nor binary.

    Example:
        >>> df = spark.createDataFrame(
        ...     [(1, "http://a.com/x"), (2, "HTTP://A.com:80/x"), (3, "/x")], ["n", "url"]
        ... )
        >>> sorted(r.n for r in dedup(df, "url", order_by="n").collect())
        [1]
        >>> sorted(r.n for r in dedup(df, "url", order_by="n", base="http://b.com/").collect())
        [1, 3]
    """
    options = _Options(profile, enable, disable, lenient, compat)
    return _first_per_key(df, column, order_by, options, base, allow_relative)


_HI, _LO = "__urikey_fp_hi", "__urikey_fp_lo"


def _first_per_key(
    df: DataFrame,
    column: str,
    order_by: str | Sequence[str] | None,
    options: _Options,
    base: str | None,
    allow_relative: bool,
    known: DataFrame | None = None,
) -> DataFrame:
    """``dedup``'s plan: the first valid row of every key, with ``df``'s columns;
    with ``known`` (fingerprints as ``_HI``, ``_LO``), of every key it lacks."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    # Fails here, on the driver, for a bad base or both ways out at once.
    options.canonicalizer().unique_mask([], base=base, allow_relative=allow_relative)
    index = _url_index(df, column)
    orders = [order_by] if isinstance(order_by, str) else list(order_by or ())
    for name in orders:
        if name not in df.columns:
            raise ValueError(f"no column {name!r} in {df.columns}")
    hi, lo, seq, rank = _HI, _LO, "__urikey_seq", "__urikey_rank"
    schema = StructType(
        [*df.schema.fields, StructField(hi, LongType()), StructField(lo, LongType())]
    )
    batches = _fp_batches(options, index, schema.names, base, allow_relative)
    keyed = df.mapInArrow(batches, schema).where(F.col(hi).isNotNull())
    keyed = keyed.withColumn(seq, F.monotonically_increasing_id())
    if known is not None:
        # Before the window: the join drops the rows of known keys, and its shuffle
        # by fingerprint is the one the window needs (docs/scale-out.md).
        keyed = keyed.join(known, [hi, lo], "left_anti")
    # One shuffle of the valid rows by fingerprint, then the first of each key. Measured
    # against min_by(struct(row)) per key (a sort aggregate on both sides of the shuffle)
    # and min(order) per key joined back (reads the input twice, shuffles every row): this
    # shuffled the least (57.8 B a line against 61.8 and 80.6) and reads the input once
    # (benches/results/spark-local2.md).
    by_key = Window.partitionBy(hi, lo).orderBy(
        *[_col(name).asc_nulls_first() for name in orders], F.col(seq)
    )
    first = keyed.withColumn(rank, F.row_number().over(by_key)).where(F.col(rank) == 1)
    return first.select(*[_col(name) for name in df.columns])


def _seen_halves(seen: DataFrame) -> DataFrame:
    """``seen``'s ``fp_hi`` and ``fp_lo`` (bigint) as ``_HI`` and ``_LO``."""
    from pyspark.sql.types import LongType

    for name in ("fp_hi", "fp_lo"):
        if name not in seen.columns:
            raise ValueError(
                f"seen has no column {name!r} (its columns: {seen.columns}); "
                "rename with_keys' {col}_fp_hi and {col}_fp_lo to fp_hi and fp_lo"
            )
        kind = seen.schema[name].dataType
        if not isinstance(kind, LongType):
            raise TypeError(
                f"seen's column {name!r} is {kind.simpleString()}, not bigint "
                '(read a CSV export with schema="fp_hi BIGINT, fp_lo BIGINT")'
            )
    return seen.select(_col("fp_hi").alias(_HI), _col("fp_lo").alias(_LO))


def new_since(
    df: DataFrame,
    column: str,
    seen: DataFrame,
    *,
    order_by: str | Sequence[str] | None = None,
    profile: str = "rfc",
    enable: Flags | None = (),
    disable: Flags | None = (),
    lenient: bool = False,
    compat: str | None = None,
    base: str | None = None,
    allow_relative: bool = False,
) -> DataFrame:
    """The first row of every canonical key of ``column`` that ``seen`` lacks.

    ``dedup(df, column, ...)`` without the rows whose key's fingerprint is in
    ``seen``: what ``urikey dedup --state DIR`` prints for a new batch when
    ``seen`` holds the store's keys. Which row of a key is first, and which
    rows are dropped (null, empty and invalid URLs; relative references
    unless ``base`` or ``allow_relative``), are exactly as in ``dedup``.

    ``seen`` is any DataFrame with bigint columns ``fp_hi`` and ``fp_lo``:
    ``spark.read.parquet`` of ``urikey state export --format parquet``,
    ``spark.read.csv(path, header=True, schema="fp_hi BIGINT, fp_lo BIGINT")``
    of ``--format csv``, or ``with_keys`` output with its
    ``{column}_fp_hi``/``{column}_fp_lo`` renamed. It may hold a key more
    than once, and null halves (which match nothing). Its fingerprints are
    only comparable when they were made with the same keying options as
    these (``urikey state info DIR`` shows a store's).

    Args:
        df: any DataFrame: the new batch.
        column: the name of its column of URLs (string or binary).
        seen: the fingerprints already seen (bigint ``fp_hi``, ``fp_lo``).
        order_by: a column name or a list of them that decides which row of a
            key is first (ascending, nulls first); None for input order.
        profile, enable, disable, lenient, compat: the options of
            ``urikey.Canonicalizer``, checked on the driver; the ones the
            fingerprints of ``seen`` were made with.
        base: resolve relative references against this absolute URI first.
        allow_relative: key relative references as they are.

    Returns:
        The lazy DataFrame of the kept rows, with exactly ``df``'s columns,
        in no particular order.

    Raises:
        ValueError: no such column (URL or ``order_by``), ``seen`` has no
            ``fp_hi`` or ``fp_lo``, an unknown profile, flag or preset, a
            ``base`` that is not an absolute URI, or both ``base`` and
            ``allow_relative``.
        TypeError: the URL column is neither string nor binary, or a column
            of ``seen`` is not bigint.

    Example:
        >>> old = spark.createDataFrame([("http://a.com/x",)], ["url"])
        >>> seen = with_keys(old, "url").selectExpr("url_fp_hi AS fp_hi", "url_fp_lo AS fp_lo")
        >>> df = spark.createDataFrame(
        ...     [(1, "HTTP://A.com:80/x"), (2, "http://a.com/y"), (3, "http://A.com/y")],
        ...     ["n", "url"],
        ... )
        >>> [r.n for r in new_since(df, "url", seen, order_by="n").collect()]
        [2]
    """
    options = _Options(profile, enable, disable, lenient, compat)
    known = _seen_halves(seen)
    return _first_per_key(df, column, order_by, options, base, allow_relative, known)
