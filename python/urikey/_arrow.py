"""Results of batch calls on Arrow input, as the caller's kind of object.

The extension returns one Arrow array per input chunk through the Arrow C
data interface; this module, the only one that imports pyarrow (and only
when Arrow objects are passed), wraps them: pyarrow in gives pyarrow out
(an array for an array, a chunked array for a chunked array or table),
a Polars Series gives a Polars Series, a pandas Series gives a pandas Series
with the same index, and any other Arrow producer (DuckDB, ...) gives a
pyarrow array or chunked array.
"""

from __future__ import annotations

from typing import Any


def from_chunks(source: Any, pairs: list[tuple[Any, Any]], kind: str) -> Any:
    """Wraps the (schema, array) capsule pairs of a batch result."""
    import pyarrow as pa

    arrays = [pa.Array._import_from_c_capsule(schema, array) for schema, array in pairs]
    empty = {"string": pa.string(), "bool": pa.bool_(), "fingerprint": pa.binary(16)}[kind]
    types = {a.type for a in arrays}
    if len(types) > 1:
        # A chunk past 2 GiB of keys comes back as large_string.
        arrays = [a.cast(pa.large_string()) for a in arrays]
    if isinstance(source, pa.Array):
        return arrays[0]
    chunked = pa.chunked_array(arrays, type=arrays[0].type if arrays else empty)
    package = type(source).__module__.partition(".")[0]
    # A Series has a name; a one-column DataFrame gives its column's.
    name = getattr(source, "name", None)
    columns = getattr(source, "columns", None)
    if name is None and columns is not None and len(columns) == 1:
        name = columns[0]
    if package == "polars":
        import polars as pl

        series = pl.from_arrow(chunked)
        assert isinstance(series, pl.Series)
        return series if name is None else series.alias(str(name))
    if package == "pandas":
        import pandas as pd

        values = chunked.to_pandas()
        return pd.Series(values.array, index=source.index, name=name)
    if isinstance(source, (pa.ChunkedArray, pa.Table)):
        return chunked
    if len(arrays) == 1 and hasattr(source, "__arrow_c_array__"):
        return arrays[0]
    return chunked
