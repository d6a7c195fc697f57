"""urikey.spark on a real local Spark (`local[2]`), checked against the CLI.

Skipped when pyspark or Java 17+ is missing, unless `URIKEY_REQUIRE_SPARK`
is set (as `.ci/run` does after `scripts/spark-env`), in which case it fails.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, SAMPLE, need_spark, sample_lines

import urikey

need_spark(module_level=True)

import pyarrow as pa  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from urikey import spark as uks  # noqa: E402


def frame(spark: SparkSession, lines: list[str | None], partitions: int = 3) -> DataFrame:
    """`lines` as a DataFrame (line: bigint, url: string) in input order."""
    table = pa.table({"line": pa.array(range(len(lines)), pa.int64()), "url": lines})
    df = spark.createDataFrame(table)
    return df.repartitionByRange(partitions, "line").sortWithinPartitions("line")


def run_cli(cli: Path, *args: str | Path) -> list[str]:
    out = subprocess.run([str(cli), *map(str, args)], check=True, capture_output=True).stdout
    text = out.decode("utf-8")
    assert text == "" or text.endswith("\n")
    return text.split("\n")[:-1]


def hex_fp(hi: int | None, lo: int | None) -> str | None:
    if hi is None or lo is None:
        return None
    return f"{hi % 2**64:016x}{lo % 2**64:016x}"


@pytest.fixture(scope="session")
def dump(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated crawl dump (scripts/gen-crawl's generator), 30,000 lines,
    2% invalid. The debug build of the generator is enough for 30,000 lines,
    and `cargo test` has built it: a release build of an example is one of
    the library with its dev-dependencies (minutes on 2 cores)."""
    path = tmp_path_factory.mktemp("spark") / "dump.txt"
    subprocess.run(
        [
            "cargo", "run", "--locked", "--quiet", "--example", "gen_crawl", "--",
            "--lines", "30000", "--seed", "12", "--invalid-ratio", "0.02",
            "-o", str(path), "--truth", str(path.with_suffix(".json")),
        ],
        cwd=ROOT,
        check=True,
    )  # fmt: skip
    return path


def keyed_rows(df: DataFrame) -> list[Any]:
    return df.orderBy("line").collect()


@pytest.mark.parametrize(
    ("which", "profile", "lenient"),
    [
        ("sample", "none", False),
        ("sample", "syntax", False),
        ("sample", "rfc", False),
        ("sample", "crawl", False),
        ("sample", "crawl", True),
        ("dump", "rfc", False),
        ("dump", "crawl", False),
        ("sample", "compat:w3lib", False),
        ("dump", "compat:ia-surt", False),
    ],
)
def test_with_keys_equals_the_cli(
    spark: SparkSession, cli: Path, dump: Path, which: str, profile: str, lenient: bool
) -> None:
    path = SAMPLE if which == "sample" else dump
    options: dict[str, Any] = {"lenient": lenient}
    if profile.startswith("compat:"):
        options["compat"] = profile.removeprefix("compat:")
        args: list[str | Path] = ["--compat", options["compat"], path]
    else:
        options["profile"] = profile
        args = ["--profile", profile, *(["--lenient"] if lenient else []), path]
    want_keys = [k or None for k in run_cli(cli, "normalize", *args)]
    lines = sample_lines(path)
    if "compat" in options:
        # The CLI has no --key hash with a preset: the package's fingerprints stand in.
        fps = urikey.Canonicalizer(compat=options["compat"]).fingerprints(lines)
        want_fps = [fp.hex() if fp and line else None for fp, line in zip(fps, lines, strict=True)]
    else:
        want_fps = [k or None for k in run_cli(cli, "normalize", "--key", "hash", *args)]
    df = uks.with_keys(frame(spark, list(lines)), "url", **options)
    assert df.columns == ["line", "url", "url_key", "url_fp_hi", "url_fp_lo", "url_invalid"]
    rows = keyed_rows(df)
    assert [r.line for r in rows] == list(range(len(lines)))
    # An empty line's key is empty; the CLI prints an empty line for it too.
    assert [r.url_key or None for r in rows] == want_keys
    got_fps = [hex_fp(r.url_fp_hi, r.url_fp_lo) for r in rows]
    assert [fp if line else None for fp, line in zip(got_fps, lines, strict=True)] == want_fps
    # Invalid exactly where the key is missing, with the CLI's reasons.
    rejects = Path(str(path) + f".{profile.replace(':', '-')}.{int(lenient)}.rejects")
    run_cli(cli, "dedup", "-q", "--rejects", rejects, *args)
    want_reasons: dict[int, str] = {}
    for entry in rejects.read_text(encoding="utf-8").splitlines():
        where, _, _ = entry.partition("\t")
        line_no, reason = where.split(":")[-3], where.split(":")[-1]
        want_reasons[int(line_no) - 1] = reason
    rejects.unlink()
    got_reasons = {r.line: r.url_invalid for r in rows if r.url_invalid is not None}
    assert got_reasons == want_reasons
    assert all((r.url_key is None) == (r.url_invalid is not None) for r in rows)


@pytest.mark.parametrize(("which", "profile"), [("sample", "rfc"), ("dump", "crawl")])
def test_dedup_keeps_the_cli_lines(
    spark: SparkSession, cli: Path, dump: Path, which: str, profile: str
) -> None:
    path = SAMPLE if which == "sample" else dump
    want = run_cli(cli, "dedup", "-q", "--profile", profile, "--emit", "original", path)
    lines = sample_lines(path)
    # Many partitions, rows shuffled inside and across them: only `line` orders them.
    order = list(range(len(lines)))
    random.Random(5).shuffle(order)
    table = pa.table({"line": order, "url": [lines[i] for i in order], "extra": order})
    df = spark.createDataFrame(table).repartition(11)
    out = uks.dedup(df, "url", order_by="line", profile=profile)
    assert out.columns == ["line", "url", "extra"]
    rows = sorted(out.collect(), key=lambda r: r.line)
    assert [r.url for r in rows] == want
    assert all(r.line == r.extra for r in rows)


def test_dedup_default_order_is_input_order(spark: SparkSession, cli: Path) -> None:
    lines = sample_lines()
    want = run_cli(cli, "dedup", "-q", "--emit", "original", SAMPLE)
    out = uks.dedup(frame(spark, list(lines), partitions=7), "url")
    assert sorted(r.url for r in out.collect()) == sorted(want)
    # With a reversed order the last occurrence of every key wins instead.
    reversed_df = frame(spark, list(lines)).withColumn("neg", -F.col("line"))
    rev = uks.dedup(reversed_df, "url", order_by=["neg"]).drop("neg")
    c = urikey.Canonicalizer("rfc")
    keys = c.canonicalize_many(lines)
    last: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key:
            last[key] = i
    assert sorted(r.line for r in rev.collect()) == sorted(last.values())


def test_invalid_null_and_empty_urls(spark: SparkSession) -> None:
    lines: list[str | None] = [
        "http://Example.com:80/a/../b",
        None,
        "",
        "http://exa mple.com/",
        "http://[::1/",
        "HTTP://example.com/b",
        "\u00e9t\u00e9",
        "http://example.com/%7e",
    ]
    df = uks.with_keys(frame(spark, lines, partitions=2), "url")
    rows = keyed_rows(df)
    c = urikey.Canonicalizer("rfc")
    for row, url in zip(rows, lines, strict=True):
        if url is None:
            assert (row.url_key, row.url_fp_hi, row.url_fp_lo, row.url_invalid) == (None,) * 4
            continue
        try:
            key = c.canonicalize(url)
        except urikey.InvalidURIError as e:
            assert row.url_key is None and row.url_fp_hi is None and row.url_fp_lo is None
            assert row.url_invalid == e.reason
            continue
        assert row.url_key == key and row.url_invalid is None
        assert hex_fp(row.url_fp_hi, row.url_fp_lo) == c.fingerprint(url).hex()
    assert rows[0].url_key == "http://example.com/b"
    assert rows[3].url_invalid is not None
    kept = uks.dedup(frame(spark, lines, partitions=2), "url")
    # Null, empty and invalid rows go; the two spellings of /b are one key.
    assert sorted(r.line for r in kept.collect()) == [0, 7]


def test_lenient_accepts_what_strict_rejects(spark: SparkSession) -> None:
    lines: list[str | None] = ["http://example.com/a b", "http://example.com/a%20b"]
    strict = keyed_rows(uks.with_keys(frame(spark, lines, 1), "url"))
    assert strict[0].url_invalid is not None
    lenient = keyed_rows(uks.with_keys(frame(spark, lines, 1), "url", lenient=True))
    assert lenient[0].url_key == lenient[1].url_key == "http://example.com/a%20b"
    assert uks.dedup(frame(spark, lines, 1), "url", lenient=True).count() == 1


def test_flags_pass_through(spark: SparkSession) -> None:
    lines: list[str | None] = [
        "http://a.example/?b=1&a=2&utm_source=x",
        "http://a.example/?a=2&b=1",
    ]
    df = uks.with_keys(
        frame(spark, lines, 1),
        "url",
        profile="crawl",
        enable=["sort-query", "remove-query-params=utm_*"],
    )
    rows = keyed_rows(df)
    assert rows[0].url_key == rows[1].url_key == "http://a.example/?a=2&b=1"
    assert (rows[0].url_fp_hi, rows[0].url_fp_lo) == (rows[1].url_fp_hi, rows[1].url_fp_lo)


def test_empty_dataframe(spark: SparkSession) -> None:
    empty = spark.createDataFrame([], "line bigint, url string")
    keyed = uks.with_keys(empty, "url")
    assert keyed.count() == 0
    assert [f.dataType.simpleString() for f in keyed.schema.fields] == [
        "bigint", "string", "string", "bigint", "bigint", "string",
    ]  # fmt: skip
    out = uks.dedup(empty, "url", order_by="line")
    assert out.count() == 0
    assert out.columns == ["line", "url"]


def test_bad_arguments(spark: SparkSession) -> None:
    df = spark.createDataFrame([(1, "http://a/")], "line bigint, url string")
    with pytest.raises(ValueError, match="no column"):
        uks.with_keys(df, "nope")
    with pytest.raises(TypeError, match="not string"):
        uks.with_keys(df, "line")
    with pytest.raises(ValueError):
        uks.with_keys(df, "url", profile="no-such-profile")
    with pytest.raises(ValueError):
        uks.dedup(df, "url", enable=["no-such-flag"])
    with pytest.raises(ValueError, match="no column"):
        uks.dedup(df, "url", order_by="nope")
    with pytest.raises(ValueError, match="compat"):
        uks.with_keys(df, "url", compat="no-such-preset")
    with pytest.raises(ValueError):
        uks.dedup(df, "url", profile="crawl", compat="w3lib")
    with pytest.raises(ValueError, match="already exist"):
        uks.with_keys(uks.with_keys(df, "url"), "url")


def test_a_row_that_is_not_utf8_is_invalid_not_a_failed_job(
    spark: SparkSession, cli: Path, tmp_path: Path
) -> None:
    # Spark reads text without checking UTF-8: the Latin-1 byte reaches the
    # Arrow batch as it is (issue 33: it used to fail the whole job).
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"http://a.com/caf\xe9\nhttp://a.com/x\nHTTP://A.com:80/x\n")
    df = spark.read.text(str(path)).coalesce(1)
    rows = uks.with_keys(df, "value").collect()
    assert [(r.value_key, r.value_invalid) for r in rows] == [
        (None, "invalid-path"),
        ("http://a.com/x", None),
        ("http://a.com/x", None),
    ]
    assert rows[0].value_fp_hi is None and rows[1].value_fp_hi is not None
    # The CLI calls it an invalid line for the same reason, and so does dedup.
    rejects = tmp_path / "rejects.txt"
    run_cli(cli, "dedup", "-q", "--rejects", rejects, "-o", tmp_path / "o.txt", path)
    records = rejects.read_bytes().split(b"\n")[:-1]
    assert [r.split(b"\t")[0].rsplit(b":", 1)[1] for r in records] == [b"invalid-path"]
    kept = uks.dedup(df, "value").collect()
    assert [r.value for r in kept] == ["http://a.com/x"]
    # Lenient reading escapes the byte, as the CLI does.
    lenient = uks.with_keys(df, "value", lenient=True).collect()
    assert lenient[0].value_key == "http://a.com/caf%E9"


def test_a_binary_column_is_read_as_bytes(spark: SparkSession) -> None:
    df = spark.createDataFrame(
        [(0, bytearray(b"HTTP://A.com/\xe9")), (1, bytearray(b"HTTP://A.com:80/"))],
        "line bigint, url binary",
    )
    rows = keyed_rows(uks.with_keys(df, "url"))
    assert [(r.url_key, r.url_invalid) for r in rows] == [
        (None, "invalid-path"),
        ("http://a.com/", None),
    ]
    assert sorted(r.line for r in uks.dedup(df, "url", lenient=True).collect()) == [0, 1]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def shuffled(spark: SparkSession, lines: list[str], partitions: int = 7) -> DataFrame:
    """`lines` (line: bigint, url: string) in a random order over many partitions."""
    order = list(range(len(lines)))
    random.Random(9).shuffle(order)
    table = pa.table({"line": order, "url": [lines[i] for i in order]})
    return spark.createDataFrame(table).repartition(partitions)


@pytest.fixture(scope="module")
def two_batches(cli: Path, dump: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The dump as two overlapping batches through `urikey dedup --state`: the store
    after the first (exported as Parquet and CSV) and what the second printed."""
    tmp = tmp_path_factory.mktemp("new_since")
    lines = sample_lines(dump)
    first, second = lines[:20000], lines[12000:]
    store = tmp / "store"
    crawl = ["--profile", "crawl", "--with", "sort-query"]
    args = ["dedup", "-q", *crawl, "--emit", "original", "--state", store]
    run_cli(cli, *args, write_lines(tmp / "first.txt", first))
    parquet, csv = tmp / "seen.parquet", tmp / "seen.csv"
    run_cli(cli, "state", "export", "--format", "parquet", "-o", parquet, store)
    run_cli(cli, "state", "export", "--format", "csv", "-o", csv, store)
    hexes = run_cli(cli, "state", "export", store)
    want = run_cli(cli, *args, write_lines(tmp / "second.txt", second))
    return {
        "first": first,
        "second": second,
        "parquet": parquet,
        "csv": csv,
        "hex": hexes,
        "want": want,
        "options": {"profile": "crawl", "enable": ["sort-query"]},
    }


def test_state_export_parquet_reads_in_pyarrow_and_spark(
    spark: SparkSession, two_batches: dict[str, Any]
) -> None:
    import pyarrow.parquet as pq

    parquet, csv = two_batches["parquet"], two_batches["csv"]
    table = pq.read_table(parquet)
    assert table.schema.names == ["fp_hi", "fp_lo"]
    assert all(f.type == pa.int64() and not f.nullable for f in table.schema)
    assert table.schema.metadata[b"urikey.config"] == b"crawl +sort-query"
    rows = list(zip(table["fp_hi"].to_pylist(), table["fp_lo"].to_pylist(), strict=True))
    csv_lines = csv.read_text(encoding="utf-8").splitlines()
    assert csv_lines[0] == "fp_hi,fp_lo"
    assert [f"{hi},{lo}" for hi, lo in rows] == csv_lines[1:]
    assert [hex_fp(hi, lo) for hi, lo in rows] == two_batches["hex"]
    df = spark.read.parquet(str(parquet))
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("fp_hi", "bigint"),
        ("fp_lo", "bigint"),
    ]
    assert sorted((r.fp_hi, r.fp_lo) for r in df.collect()) == sorted(rows)
    from_csv = spark.read.csv(str(csv), header=True, schema="fp_hi BIGINT, fp_lo BIGINT")
    assert sorted((r.fp_hi, r.fp_lo) for r in from_csv.collect()) == sorted(rows)


@pytest.mark.parametrize("source", ["parquet", "csv", "with_keys"])
def test_new_since_gives_the_lines_of_dedup_state(
    spark: SparkSession, two_batches: dict[str, Any], source: str
) -> None:
    options = two_batches["options"]
    if source == "parquet":
        seen = spark.read.parquet(str(two_batches["parquet"]))
    elif source == "csv":
        seen = spark.read.csv(
            str(two_batches["csv"]), header=True, schema="fp_hi BIGINT, fp_lo BIGINT"
        )
    else:
        earlier = uks.with_keys(shuffled(spark, two_batches["first"]), "url", **options)
        seen = earlier.selectExpr("url_fp_hi AS fp_hi", "url_fp_lo AS fp_lo")
    second = shuffled(spark, two_batches["second"])
    out = uks.new_since(second, "url", seen, order_by="line", **options)
    assert out.columns == ["line", "url"]
    rows = sorted(out.collect(), key=lambda r: r.line)
    assert [r.url for r in rows] == two_batches["want"]
    assert 0 < len(rows) < uks.dedup(second, "url", **options).count()


def test_new_since_is_dedup_minus_seen(spark: SparkSession, two_batches: dict[str, Any]) -> None:
    options = two_batches["options"]
    second = shuffled(spark, two_batches["second"])
    seen = spark.read.parquet(str(two_batches["parquet"]))
    known = {hex_fp(r.fp_hi, r.fp_lo) for r in seen.collect()}
    c = urikey.Canonicalizer("crawl", enable=["sort-query"])
    firsts = uks.dedup(second, "url", order_by="line", **options).collect()
    want = sorted(r.line for r in firsts if c.fingerprint(r.url).hex() not in known)
    got = uks.new_since(second, "url", seen, order_by="line", **options).collect()
    assert sorted(r.line for r in got) == want
    # Nothing seen: exactly dedup.
    nothing = spark.createDataFrame([], "fp_hi bigint, fp_lo bigint")
    alone = uks.new_since(second, "url", nothing, order_by="line", **options).collect()
    assert sorted(r.line for r in alone) == sorted(r.line for r in firsts)


def test_new_since_drops_what_dedup_drops(spark: SparkSession) -> None:
    lines: list[str | None] = [
        None,
        "",
        "http://exa mple.com/",
        "/relative",
        "http://a.com/old",
        "HTTP://A.com:80/new",
        "http://a.com/new",
    ]
    seen = uks.with_keys(spark.createDataFrame([("http://a.com/old",), (None,)], ["url"]), "url")
    seen = seen.selectExpr("url_fp_hi AS fp_hi", "url_fp_lo AS fp_lo")  # one null row
    df = frame(spark, lines, partitions=2)
    assert [r.line for r in uks.new_since(df, "url", seen, order_by="line").collect()] == [5]
    based = uks.new_since(df, "url", seen, order_by="line", base="http://b.com/")
    assert sorted(r.line for r in based.collect()) == [3, 5]


def test_new_since_plan_shuffles_the_rows_once(spark: SparkSession) -> None:
    df = spark.createDataFrame([(1, "http://a.com/")], "line bigint, url string")
    seen = spark.createDataFrame([(1, 2)], "fp_hi bigint, fp_lo bigint")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        plan = uks.new_since(df, "url", seen)._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    # One exchange for the rows (the join's, which the window above it reuses), one for seen.
    assert plan.count("Exchange hashpartitioning") == 2, plan
    assert "LeftAnti" in plan and plan.index("Window [") < plan.index("SortMergeJoin"), plan


def test_new_since_bad_seen(spark: SparkSession) -> None:
    df = spark.createDataFrame([(1, "http://a/")], "line bigint, url string")
    with pytest.raises(ValueError, match="fp_hi"):
        uks.new_since(df, "url", spark.createDataFrame([(1, 2)], "hi bigint, lo bigint"))
    with pytest.raises(TypeError, match="bigint"):
        uks.new_since(df, "url", spark.createDataFrame([("1", "2")], "fp_hi string, fp_lo string"))
    seen = spark.createDataFrame([(1, 2)], "fp_hi bigint, fp_lo bigint")
    with pytest.raises(ValueError, match="no column"):
        uks.new_since(df, "nope", seen)
    with pytest.raises(ValueError):
        uks.new_since(df, "url", seen, profile="no-such-profile")


@pytest.mark.parametrize("name", ["with_keys", "dedup", "new_since"])
def test_docstring_examples_run_on_spark(spark: SparkSession, name: str) -> None:
    import doctest

    func = getattr(uks, name)
    globs = {"spark": spark, **vars(uks)}
    test = doctest.DocTestParser().get_doctest(func.__doc__, globs, name, None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
