"""The two orders of urikey.spark.new_since's plan, timed side by side
(the figures of docs/scale-out.md, "A new batch against earlier crawls").

    RAYON_NUM_THREADS=1 PYSPARK_PYTHON=.venv/bin/python \\
        .venv/bin/python scripts/bench_new_since.py target/bench-cc/data-100M/cc.parquet 2

Reads the `url` column of a Parquet file (scripts/bench-cc makes one) as the
batch; `seen` is the fingerprints of every EVERY-th row (written as Parquet
first). Runs, twice each in turn, on local[2] with broadcast joins off, to a
noop sink: `new_since` (anti-join, then dedup's window) and the other order
(window, then anti-join), written with `with_keys`. Prints seconds and rows.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from urikey import spark as uks

parquet, every = sys.argv[1], int(sys.argv[2])
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "8")
    .config("spark.driver.memory", "2g")
    .config("spark.sql.autoBroadcastJoinThreshold", "-1")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
numbered = (
    spark.read.parquet(parquet).select("url").withColumn("n", F.monotonically_increasing_id())
)
seen_dir = os.path.join(tempfile.mkdtemp(), "seen")
uks.with_keys(numbered.where(f"n % {every} = 0"), "url").where("url_fp_hi IS NOT NULL").selectExpr(
    "url_fp_hi AS fp_hi", "url_fp_lo AS fp_lo"
).write.parquet(seen_dir)
seen = spark.read.parquet(seen_dir)
batch = spark.read.parquet(parquet).select("url")


def window_first(df: DataFrame) -> DataFrame:
    keyed = uks.with_keys(df, "url").where("url_fp_hi IS NOT NULL")
    keyed = keyed.withColumn("seq", F.monotonically_increasing_id())
    by_key = Window.partitionBy("url_fp_hi", "url_fp_lo").orderBy("seq")
    first = keyed.withColumn("r", F.row_number().over(by_key)).where("r = 1")
    known = seen.selectExpr("fp_hi AS url_fp_hi", "fp_lo AS url_fp_lo")
    return first.join(known, ["url_fp_hi", "url_fp_lo"], "left_anti").select("url")


plans = [
    ("new_since (anti-join, then window)", lambda df: uks.new_since(df, "url", seen)),
    ("window, then anti-join", window_first),
]
uks.dedup(batch.limit(20000), "url").write.format("noop").mode("overwrite").save()
for _ in range(2):
    for name, plan in plans:
        t = time.perf_counter()
        plan(batch).write.format("noop").mode("overwrite").save()
        print(
            f"{name}\t{time.perf_counter() - t:.2f} s\t{plan(batch).count()} rows",
            flush=True,
        )
print(f"seen: {seen.count()} keys")
