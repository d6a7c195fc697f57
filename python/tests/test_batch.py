"""Batch calls: input kinds, odd values, a 10-million URL batch, the GIL."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import urikey


def test_none_empty_and_non_ascii() -> None:
    c = urikey.Canonicalizer("crawl", lenient=True)
    urls = [None, "", "http://exämple.com/ü?q=ß", "HTTP://A.com", None]
    assert c.canonicalize_many(urls) == [
        None,
        "",  # the empty string is a valid (empty) relative reference
        "http://xn--exmple-cua.com/%C3%BC?q=%C3%9F",
        "http://a.com/",
        None,
    ]
    strict = urikey.Canonicalizer("crawl")
    assert strict.canonicalize_many(["http://exämple.com/"]) == [None]
    with pytest.raises(urikey.InvalidURIError) as err:
        strict.canonicalize("http://exämple.com/")
    assert err.value.index == len("http://ex")  # a byte offset, before the ä
    assert c.fingerprints([None, "a:"])[0] is None
    assert c.unique_mask([None, "a:", None, "a:"]) == [False, True, False, False]


def test_lone_surrogates_do_not_crash() -> None:
    lone = "http://example.com/\udc80"
    with pytest.raises(urikey.InvalidURIError) as err:
        urikey.canonicalize(lone)
    assert err.value.index == len("http://example.com/")
    assert urikey.Canonicalizer().canonicalize_many([lone, "a:"]) == [None, "a:"]
    # Lenient mode escapes the surrogate's bytes, as the CLI escapes them in a file.
    assert urikey.canonicalize(lone, lenient=True) == "http://example.com/%ED%B2%80"
    with pytest.raises(urikey.InvalidURIError):
        urikey.parse(lone)
    with pytest.raises(urikey.InvalidURIError):
        urikey.fingerprint("\ud800")


@pytest.mark.parametrize("bad", [b"http://a/", bytearray(b"a:"), 5, object()])
def test_non_str_is_a_type_error(bad: object) -> None:
    c = urikey.Canonicalizer()
    for call in (c.canonicalize, c.fingerprint, urikey.canonicalize, urikey.parse):
        with pytest.raises(TypeError):
            call(bad)  # type: ignore[operator]
    for batch in (c.canonicalize_many, c.fingerprints, c.unique_mask, urikey.Deduplicator().add):
        with pytest.raises(TypeError, match=r"urls\[1\]"):
            batch(["a:", bad])  # type: ignore[operator]
    with pytest.raises(TypeError):
        urikey.resolve("http://a/", bad)  # type: ignore[arg-type]


def test_a_batch_must_be_a_collection() -> None:
    c = urikey.Canonicalizer()
    for bad in ["http://a/", b"http://a/", 5]:
        with pytest.raises(TypeError):
            c.canonicalize_many(bad)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="strings"):
        c.canonicalize_many(pa.array([1, 2]))


def test_input_kinds_give_the_same_kind_back() -> None:
    c = urikey.Canonicalizer("crawl")
    urls = ["HTTP://A.com/x#f", None, "http://[", "http://b.com/"]
    want = ["http://a.com/x", None, None, "http://b.com/"]
    assert c.canonicalize_many(urls) == want
    assert c.canonicalize_many(tuple(urls)) == want
    assert c.canonicalize_many(iter(urls)) == want
    out = c.canonicalize_many(pa.array(urls))
    assert isinstance(out, pa.StringArray) and out.to_pylist() == want
    table = pa.table({"url": urls})
    assert c.canonicalize_many(table).to_pylist() == want
    series = c.canonicalize_many(pl.Series("u", urls))
    assert isinstance(series, pl.Series) and series.to_list() == want
    frame = pd.DataFrame({"url": urls}, index=[10, 11, 12, 13])
    keys = c.canonicalize_many(frame["url"])
    assert isinstance(keys, pd.Series)
    assert list(keys.index) == [10, 11, 12, 13] and keys.name == "url"
    assert [None if pd.isna(v) else v for v in keys] == want
    mask = c.unique_mask(pa.array(["a:", "a:", None]))
    assert isinstance(mask, pa.BooleanArray) and mask.to_pylist() == [True, False, False]
    assert c.unique_mask(pl.Series(["a:", "A:"])).to_list() == [True, False]
    # A DuckDB relation: a stream of one-column record batches.
    rel = duckdb.sql("select * from (values ('HTTP://A.com/x#f'), (NULL), ('http://[')) t(url)")
    out = c.canonicalize_many(rel)
    assert isinstance(out, pa.ChunkedArray)
    assert out.to_pylist() == ["http://a.com/x", None, None]
    # Slices (an offset into shared buffers) and all-null arrays.
    sliced = c.canonicalize_many(pa.array(["x", *urls, "y"]).slice(1, len(urls)))
    assert sliced.to_pylist() == want
    assert c.canonicalize_many(pa.nulls(3)).to_pylist() == [None, None, None]
    # Polars exports its Null dtype with a buffer that Arrow's null type
    # does not have: read as all missing, not refused.
    nulls = pl.Series("u", [None, None])
    assert nulls.dtype == pl.Null
    assert c.canonicalize_many(nulls).to_list() == [None, None]
    assert c.unique_mask(nulls).to_list() == [False, False]
    assert (
        c.canonicalize_many(pa.chunked_array([pa.nulls(2), pa.nulls(1)])).to_pylist() == [None] * 3
    )
    assert c.canonicalize_many([]) == []
    assert c.canonicalize_many(pa.array([], pa.string())).to_pylist() == []


def test_unchanged_urls_come_back_as_the_same_objects() -> None:
    url = "http://example.com/already/canonical"
    assert urikey.canonicalize(url) is url
    assert urikey.Canonicalizer().canonicalize_many([url])[0] is url


def test_on_invalid_raise_gives_the_position() -> None:
    c = urikey.Canonicalizer()
    with pytest.raises(urikey.InvalidURIError) as err:
        c.canonicalize_many(["a:", None, "http://a b/", "http://[/"], on_invalid="raise")
    assert (err.value.position, err.value.index, err.value.reason) == (2, 8, "invalid-host")
    with pytest.raises(urikey.InvalidURIError) as err:
        c.canonicalize_many(pa.array(["a:", "http://[/"]), on_invalid="raise")
    assert err.value.position == 1
    with pytest.raises(ValueError, match="on_invalid"):
        c.canonicalize_many(["a:"], on_invalid="skip")  # type: ignore[call-overload]


def test_a_big_list_is_keyed_in_runs_in_order() -> None:
    # Over 16,384 lines a list is keyed run by run (8,192 lines) while the
    # results of finished runs become `str`: order, `None`, unchanged
    # objects and the first invalid line must come out as for small calls.
    c = urikey.Canonicalizer(compat="w3lib")
    urls: list[str | None] = [f"http://Example.com/p/{i}?b={i}&a=1" for i in range(40_000)]
    urls[5] = None
    urls[30_000] = "http://[::1/"  # w3lib raises ValueError
    urls[9_000] = "http://[/"
    same = "http://example.com/already"
    urls[20_000] = same
    keys = c.canonicalize_many(urls)
    small = [k for i in range(0, len(urls), 1000) for k in c.canonicalize_many(urls[i : i + 1000])]
    assert keys == small
    assert keys[5] is None and keys[9_000] is None and keys[30_000] is None
    assert keys[20_000] is same
    assert keys[39_999] == "http://example.com/p/39999?a=1&b=39999"
    with pytest.raises(urikey.InvalidURIError) as err:
        c.canonicalize_many(urls, on_invalid="raise")
    assert err.value.position == 9_000


def test_errors_carry_index_and_reason() -> None:
    with pytest.raises(urikey.InvalidURIError) as err:
        urikey.canonicalize("http://host:80a/")
    e = err.value
    assert isinstance(e, ValueError)
    assert e.index == 14 and e.reason == "invalid-port" and e.position is None
    assert "byte 14" in str(e)
    with pytest.raises(ValueError, match="unknown profile"):
        urikey.Canonicalizer("fast")
    with pytest.raises(ValueError, match="unknown normalization flag"):
        urikey.Canonicalizer(enable=["sort-querys"])
    with pytest.raises(ValueError, match="key format"):
        urikey.Canonicalizer(key="md5")
    with pytest.raises(ValueError, match="no scheme"):
        urikey.resolve("/relative", "g")


def test_ten_million_urls() -> None:
    n = 10_000_000
    # Built by Arrow kernels: a Python loop would spend most of the test here.
    ids = pa.array(np.arange(n)).cast(pa.string())
    hosts = pc.binary_join_element_wise(
        "http://Host", pa.array(np.arange(n) % 1000).cast(pa.string()), ".example/p/", ""
    )
    urls = pc.binary_join_element_wise(hosts, ids, "")
    c = urikey.Canonicalizer()
    arrow = c.canonicalize_many(urls)
    assert len(arrow) == n and arrow.null_count == 0
    assert arrow[123_456].as_py() == "http://host456.example/p/123456"
    as_list = urls.to_pylist()
    del arrow
    keys = c.canonicalize_many(as_list)
    assert len(keys) == n
    assert keys[0] == "http://host0.example/p/0"
    assert keys[n - 1] == f"http://host{(n - 1) % 1000}.example/p/{n - 1}"
    del keys
    mask = c.unique_mask(pa.array(as_list[:1000] * 10))
    assert mask.true_count == 1000


def test_other_threads_run_during_a_batch() -> None:
    urls = [f"http://example.com/a/./b/{i}?q=%7e" for i in range(3_000_000)]
    c = urikey.Canonicalizer()
    ticks = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    worker = threading.Thread(target=spin)
    worker.start()
    try:
        time.sleep(0.05)
        before = ticks
        c.canonicalize_many(urls)
        during = ticks - before
    finally:
        stop.set()
        worker.join()
    # Holding the GIL for the whole call would leave the counter almost still.
    assert during > 10_000, during


def test_deduplicator_across_batches() -> None:
    d = urikey.Deduplicator("crawl")
    assert d.add(["http://a.com/#x", "http://A.com/", None, "http://["]) == [
        True,
        False,
        False,
        False,
    ]
    assert d.add(pa.array(["http://a.com", "http://b.com/"])).to_pylist() == [False, True]
    assert len(d) == 2
    assert d.memory_bytes > 0


def test_a_consumed_or_inconsistent_arrow_capsule_is_a_value_error() -> None:
    c = urikey.Canonicalizer()
    capsules = pa.array(["http://A/"]).__arrow_c_array__()

    class Given:
        """An Arrow producer that hands out the capsules it was given."""

        def __init__(self, pair: tuple[object, object]) -> None:
            self.pair = pair

        def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
            return self.pair

    # The first call takes the array over; the second finds it released.
    assert c.canonicalize_many(Given(capsules)).to_pylist() == ["http://a/"]
    with pytest.raises(ValueError, match="already consumed"):
        c.canonicalize_many(Given(capsules))
    d = urikey.Deduplicator()
    with pytest.raises(ValueError, match="already consumed"):
        d.add(Given(capsules))
    assert len(d) == 0

    def pair(schema_of: pa.Array, array_of: pa.Array) -> Given:
        return Given((schema_of.__arrow_c_array__()[0], array_of.__arrow_c_array__()[1]))

    # A schema that does not match its array: the array is never read as
    # the schema says.
    for bad in [
        pair(pa.array(["a"]), pa.array([1])),
        pair(pa.array(["a"]), pa.array([True])),
        pair(pa.array(["a"]), pa.nulls(2)),
        pair(pa.array(["a"], type=pa.large_string()), pa.array(["http://a/", "http://b/"])),
        pair(pa.array([{"x": "a"}]), pa.array([{"x": "a", "y": "b"}])),
        pair(pa.array([{"x": "a", "y": "b"}]), pa.array([{"x": "a"}])),
    ]:
        with pytest.raises(ValueError, match="Arrow data could not be read"):
            c.canonicalize_many(bad)


def test_a_one_column_dataframe_gives_a_series_named_after_it() -> None:
    c = urikey.Canonicalizer()
    got = c.canonicalize_many(pl.DataFrame({"u": ["HTTP://A/", "http://b"]}))
    assert isinstance(got, pl.Series)
    assert (got.name, got.to_list()) == ("u", ["http://a/", "http://b/"])
    frame = pd.DataFrame({"u": ["HTTP://A/", "http://b"]})
    got = c.canonicalize_many(frame)
    assert isinstance(got, pd.Series)
    assert (got.name, got.tolist()) == ("u", ["http://a/", "http://b/"])
    d = urikey.Deduplicator()
    assert d.add(pl.DataFrame({"u": ["http://a/", "HTTP://A/"]})).to_list() == [True, False]


def test_strings_outside_their_buffers_are_a_value_error() -> None:
    # Arrays built from raw buffers, which pyarrow does not check: a view
    # that names bytes past its data buffer, and offsets that go backwards.
    c = urikey.Canonicalizer()
    data = pa.py_buffer(b"http://a/x")
    view = (20).to_bytes(4, "little") + b"http" + (0).to_bytes(4, "little")
    view += (100).to_bytes(4, "little")
    views = pa.array([], type=pa.string_view()).from_buffers(
        pa.string_view(), 1, [None, pa.py_buffer(view), data]
    )
    with pytest.raises(ValueError, match="outside the array's buffers"):
        c.canonicalize_many(views)
    offsets = pa.py_buffer(b"".join(i.to_bytes(4, "little") for i in [0, 8, 2]))
    backwards = pa.Array.from_buffers(pa.string(), 2, [None, offsets, data])
    with pytest.raises(ValueError, match="outside the array's buffers"):
        c.canonicalize_many(backwards)
    # The same buffers, well formed, read as they are.
    good = pa.Array.from_buffers(
        pa.string(),
        1,
        [None, pa.py_buffer((0).to_bytes(4, "little") + (10).to_bytes(4, "little")), data],
    )
    assert c.canonicalize_many(good).to_pylist() == ["http://a/x"]


# Arrow input of any bytes (issue 33, item 1): Spark hands over string
# columns whose bytes are whatever a file held, and pyarrow builds string
# arrays from buffers without checking them; binary and dictionary arrays
# carry URLs too. Every batch call reads them all without raising.
ODD_BYTES: list[bytes | None] = [
    b"http://a.com/caf\xe9",  # Latin-1
    b"HTTP://A.com:80/x",
    None,
    b"\xff\xfe\x00",
    b"http://a.com/x",
    b"/relative",
    b"",
    b"http://b.com/\xc3\xa9",  # UTF-8, not ASCII
]


def _offsets_array(values: list[bytes | None], type_: pa.DataType) -> pa.Array:
    """A string or binary array made from raw buffers: pyarrow checks no UTF-8."""
    width = 8 if type_ in (pa.large_string(), pa.large_binary()) else 4
    offsets, data, valid = [0], b"", 0
    for i, v in enumerate(values):
        data += v or b""
        offsets.append(len(data))
        valid |= (v is not None) << i
    return pa.Array.from_buffers(
        type_,
        len(values),
        [
            pa.py_buffer(valid.to_bytes((len(values) + 7) // 8, "little")),
            pa.py_buffer(b"".join(o.to_bytes(width, "little") for o in offsets)),
            pa.py_buffer(data),
        ],
        null_count=values.count(None),
    )


def _byte_arrays(values: list[bytes | None]) -> dict[str, object]:
    """``values`` in every Arrow layout a URL column may come in."""
    binary = pa.array(values, pa.binary())
    distinct = sorted({v for v in values if v is not None})
    indices = [None if v is None else distinct.index(v) for v in values]
    kinds: dict[str, object] = {
        "string (not UTF-8)": _offsets_array(values, pa.string()),
        "large_string (not UTF-8)": _offsets_array(values, pa.large_string()),
        "binary": binary,
        "large_binary": pa.array(values, pa.large_binary()),
        "binary_view": pa.array(values, pa.binary_view()),
        "dictionary<int8, binary>": pa.DictionaryArray.from_arrays(
            pa.array(indices, pa.int8()), pa.array(distinct, pa.binary())
        ),
        "dictionary<uint32, string (not UTF-8)>": pa.DictionaryArray.from_arrays(
            pa.array(indices, pa.uint32()), _offsets_array(list(distinct), pa.string())
        ),
        "chunked binary": pa.chunked_array([binary.slice(0, 3), binary.slice(3)]),
        "table of one binary column": pa.table({"url": binary}),
        "polars Binary": pl.Series("url", values, dtype=pl.Binary),
    }
    # A string view of the same bytes: the binary view's buffers, retyped.
    view = pa.array(values, pa.binary_view())
    kinds["string_view (not UTF-8)"] = pa.Array.from_buffers(
        pa.string_view(), len(values), view.buffers(), null_count=view.null_count
    )
    return kinds


def _pylist(result: object) -> list[object]:
    if isinstance(result, pl.Series):
        return result.to_list()
    assert isinstance(result, (pa.Array, pa.ChunkedArray))
    return result.to_pylist()


@pytest.mark.parametrize("kind", list(_byte_arrays(ODD_BYTES)))
def test_arrow_bytes_of_any_kind_never_raise(kind: str) -> None:
    array = _byte_arrays(ODD_BYTES)[kind]
    c = urikey.Canonicalizer("crawl")
    assert _pylist(c.canonicalize_many(array)) == [
        None,
        "http://a.com/x",
        None,
        None,
        "http://a.com/x",
        "/relative",
        "",
        None,
    ]
    reasons = _pylist(c.invalid_reasons(array))
    assert reasons == [
        "invalid-path",
        None,
        None,
        "invalid-path",
        None,
        None,
        None,
        "invalid-path",
    ]
    fps = _pylist(c.fingerprints(array))
    keyed = [r is None and v is not None for r, v in zip(reasons, ODD_BYTES, strict=True)]
    assert [fp is not None for fp in fps] == keyed
    assert fps[1] == fps[4] == c.fingerprint("http://a.com/x")
    assert _pylist(c.unique_mask(array)) == [False, True, False, False, False, False, False, False]
    assert _pylist(urikey.Deduplicator("crawl").add(array)) == _pylist(c.unique_mask(array))
    lenient = urikey.Canonicalizer("crawl", lenient=True)
    keys = _pylist(lenient.canonicalize_many(array))
    assert keys[0] == "http://a.com/caf%E9"
    assert keys[7] == "http://b.com/%C3%A9"


def test_arrow_bytes_key_as_the_cli_keys_them(cli: Path, tmp_path: Path) -> None:
    lines = [v or b"" for v in ODD_BYTES if v != b""]
    path = tmp_path / "odd.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for args in ([], ["--lenient"], ["--profile", "none"]):
        run = subprocess.run(
            [str(cli), "normalize", *args, str(path)], check=True, capture_output=True
        )
        want = [k or None for k in run.stdout.decode("utf-8").split("\n")[:-1]]
        c = urikey.Canonicalizer("none" if "none" in args else "rfc", lenient="--lenient" in args)
        got = c.canonicalize_many(pa.array(lines, pa.binary())).to_pylist()
        assert [g or None for g in got] == want, args


def test_arrow_lines_outside_their_dictionary_are_a_value_error() -> None:
    bad = pa.DictionaryArray.from_arrays(
        pa.array([0, 5], pa.int32()), pa.array([b"http://a/"], pa.binary()), safe=False
    )
    with pytest.raises(ValueError, match="outside"):
        urikey.Canonicalizer().canonicalize_many(bad)
    negative = pa.DictionaryArray.from_arrays(
        pa.array([0, -1], pa.int8()), pa.array([b"http://a/"]), safe=False
    )
    with pytest.raises(ValueError, match="outside"):
        urikey.Canonicalizer().fingerprints(negative)
