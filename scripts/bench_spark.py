"""Spark dedup of one URL dump, several ways, in one run (driven by scripts/bench-spark).

Every Spark variant reads the same text file with `spark.read.text` and is
timed to a `noop` sink (the whole plan runs, nothing is written); its output
row count comes from a second, untimed run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

# One rayon thread per Python worker: Spark already runs one task per core.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
# Python workers run this interpreter (the venv with urikey), not `python3` on PATH.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pandas as pd
import pyspark
import urikey
from bench_machine import describe, machine
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from urikey import spark as uks


def w3lib_dedup(df: DataFrame) -> DataFrame:
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("string")  # type: ignore[call-overload]
    def canonical(urls: pd.Series) -> pd.Series:
        from w3lib.url import canonicalize_url

        def one(url: str | None) -> str | None:
            if not url:
                return None
            try:
                return str(canonicalize_url(url))
            except Exception:
                return None

        return urls.map(one)

    keyed = df.withColumn("__key", canonical(F.col("url"))).where(F.col("__key").isNotNull())
    return keyed.dropDuplicates(["__key"]).drop("__key")


def agg_join_dedup(df: DataFrame) -> DataFrame:
    """The other plan: min(order) per fingerprint on the small columns, joined back."""
    keyed = keyed_with_seq(df)
    first = keyed.groupBy("url_fp_hi", "url_fp_lo").agg(F.min("__seq").alias("__seq"))
    return keyed.join(first.select("__seq"), "__seq", "left_semi").select(*df.columns)


def keyed_with_seq(df: DataFrame) -> DataFrame:
    keyed = uks.with_keys(df, "url").drop("url_key", "url_invalid")
    keyed = keyed.where(F.col("url_fp_hi").isNotNull() & (F.col("url") != ""))
    return keyed.withColumn("__seq", F.monotonically_increasing_id())


def min_by_dedup(df: DataFrame) -> DataFrame:
    """Another plan: min_by(struct(row), seq) per fingerprint (a sort aggregate each side)."""
    first = F.min_by(F.struct(*[F.col(c) for c in df.columns]), F.col("__seq"))
    kept = keyed_with_seq(df).groupBy("url_fp_hi", "url_fp_lo").agg(first.alias("__row"))
    return kept.select("__row.*")


def first_seq_only(df: DataFrame) -> DataFrame:
    """The decision alone (fingerprints and min(seq), no rows): a floor for any plan."""
    return keyed_with_seq(df).groupBy("url_fp_hi", "url_fp_lo").agg(F.min("__seq"))


def main() -> None:
    info = machine()  # before the runs: the load average at the start
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True, type=Path)
    ap.add_argument("--cli", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--command", default="scripts/bench-spark")
    args = ap.parse_args()

    dump = args.dump.resolve()
    lines = sum(1 for _ in dump.open("rb"))
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("urikey-bench")
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        # The UI's REST API reports the bytes each run shuffles (local only).
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", "4071")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        # Split the file into tasks even at a modest size.
        .config("spark.sql.files.maxPartitionBytes", str(16 << 20))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    def shuffled() -> int:
        """Shuffle bytes written (compressed) by every completed stage so far."""
        sc = spark.sparkContext
        url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
        with urllib.request.urlopen(url, timeout=30) as r:
            return sum(int(s["shuffleWriteBytes"]) for s in json.load(r))

    def source() -> DataFrame:
        return spark.read.text(str(dump)).withColumnRenamed("value", "url")

    variants: list[tuple[str, Callable[[DataFrame], DataFrame]]] = [
        ("urikey.spark.dedup (rfc; window plan)", lambda df: uks.dedup(df, "url")),
        ("min(seq) per fingerprint + semi-join plan", agg_join_dedup),
        ("min_by(row) per fingerprint plan", min_by_dedup),
        ("fingerprints + min(seq) per key only (no rows)", first_seq_only),
        ("urikey.spark.with_keys only (no dedup)", lambda df: uks.with_keys(df, "url")),
        ("dropDuplicates on the raw URL", lambda df: df.dropDuplicates(["url"])),
        ("w3lib pandas UDF + dropDuplicates", w3lib_dedup),
        ("read only (source scan)", lambda df: df),
    ]
    # Warm the JVM and the Python workers once.
    uks.dedup(source().limit(20000), "url").write.format("noop").mode("overwrite").save()

    results = []
    for name, build in variants:
        times = []
        before = shuffled()
        for _ in range(args.repeats):
            t = time.perf_counter()
            build(source()).write.format("noop").mode("overwrite").save()
            times.append(time.perf_counter() - t)
        moved = (shuffled() - before) // args.repeats
        rows = build(source()).count()
        results.append({"name": name, "wall": min(times), "rows": rows, "shuffle": moved})
        print(f"{name}: {min(times):.2f}s, {rows} rows, {moved} shuffle bytes", flush=True)

    cli_times = []
    cli_rows = 0
    for _ in range(args.repeats):
        t = time.perf_counter()
        out = subprocess.run(
            [str(args.cli), "dedup", "-q", "--no-progress", "--emit", "original", "--threads", "2",
             str(dump)],
            check=True, capture_output=True,
        ).stdout  # fmt: skip
        cli_times.append(time.perf_counter() - t)
        cli_rows = out.count(b"\n")
    results.append({"name": "urikey dedup CLI (2 threads, for reference)", "wall": min(cli_times),
                    "rows": cli_rows, "shuffle": None})  # fmt: skip
    spark.stop()

    base = results[0]["wall"]
    raw = next(r for r in results if r["name"].startswith("dropDuplicates"))["wall"]
    with_keys = next(r for r in results if "with_keys" in r["name"])["wall"]
    scan = next(r for r in results if r["name"].startswith("read only"))["wall"]
    md = [
        "# Spark: urikey.spark.dedup against raw and w3lib dedup",
        "",
        (
            f"Input: {lines:,} lines, {dump.stat().st_size / 1e6:.1f} MB (scripts/gen-crawl). "
            f"Spark {pyspark.__version__} `local[2]`, {args.partitions} shuffle partitions, "
            f"urikey {urikey.__version__}, Python {platform.python_version()}, "
            f"{os.cpu_count()} cores. Best of {args.repeats} runs to a `noop` sink."
        ),
        "",
        f"Command: `{args.command}`",
        "",
        describe(info),
        "",
        "| variant | wall s | lines/s | rows out | shuffled B/line | vs urikey.spark.dedup "
        "| vs raw dropDuplicates |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        moved = "" if r["shuffle"] is None else f"{r['shuffle'] / lines:.1f}"
        md.append(
            f"| {r['name']} | {r['wall']:.2f} | {lines / r['wall']:,.0f} | {r['rows']:,} | "
            f"{moved} | {r['wall'] / base:.2f} | {r['wall'] / raw:.2f} |"
        )
    key_rate = lines / max(with_keys - scan, 1e-9) / 2
    md += [
        "",
        f"Key rate inside Spark (with_keys minus the scan, per core): {key_rate:,.0f} URLs/s.",
        "",
        "`shuffled B/line` is Spark's shuffle write (lz4-compressed) per input line.",
        "",
        (
            "`rows out` differ on purpose: raw dropDuplicates keeps every spelling of a URL, "
            "w3lib merges what its canonical form merges (and keeps what urikey calls invalid)."
        ),
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(md), encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(
        {"machine": info, "lines": lines, "bytes": dump.stat().st_size, "results": results,
         "key_rate_per_core": key_rate}, indent=2) + "\n", encoding="utf-8")  # fmt: skip
    print("\n".join(md))


if __name__ == "__main__":
    main()
