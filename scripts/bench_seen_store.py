#!/usr/bin/env python3
"""Benchmark of `urikey.SeenStore.add`: URLs a second against a store of 10 M keys.

A store is built by `urikey dedup --state` from a generated crawl dump
(`scripts/gen-crawl`, profile `crawl`) until it holds about KEYS keys; then
batches of BATCH URLs go through `SeenStore.add`, as lists of str and as
Arrow arrays (each made before the clock starts). A batch is half lines of
that dump (keys the store holds, in a new order) and half lines of the real
lists in ../shared/datasets (new keys, repeated once the lists run out).
Nothing is committed: each mode starts from the same store.

Usage: scripts/bench_seen_store.py [--keys 10000000] [--batch 100000]
         [--batches 20] [--repeats 3] [--urikey BIN] [--out bench-out/seen-store] [--keep]

Run it with the Python that has the extension installed (`maturin develop
--release -m python/Cargo.toml`). Writes OUT/raw.csv (one row per timed
pass) and OUT/summary.md (commit, machine, figures), and prints the summary.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import urikey
from bench_machine import describe, machine

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"
REAL_LISTS = [
    "iscx-url-2016/benign_urls.txt",
    "ada-url-various/kasztp.txt",
    "ada-url-various/userbait.txt",
    "ada-url-various/node_files.txt",
    "ada-url-various/isaacs_files.txt",
]
PROFILE = "crawl"


def read_lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8", "replace").lstrip("\ufeff")
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]


def build_store(urikey_bin: str, out: Path, keys: int) -> tuple[Path, Path, int, float]:
    """The dump and the store made from it; returns them, the store's keys and build seconds."""
    # About 2.05 lines of a generated dump per distinct key under `crawl`.
    lines = keys * 205 // 100
    dump = out / f"dump-{lines}.txt"
    if not dump.exists():
        print(f"generating {dump}", file=sys.stderr)
        subprocess.run(
            [str(ROOT / "scripts" / "gen-crawl"), "--lines", str(lines), "-o", str(dump)],
            check=True,
            stderr=subprocess.DEVNULL,
        )
    store = out / "store"
    shutil.rmtree(store, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(
        [urikey_bin, "dedup", "-q", "--profile", PROFILE, "--state", str(store), str(dump)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    built = time.perf_counter() - start
    info = json.loads(
        subprocess.run(
            [urikey_bin, "state", "info", "--json", str(store)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    return dump, store, int(info["keys"]), built


def make_batches(dump: Path, size: int, count: int, seed: int) -> list[list[str]]:
    """`count` batches of `size`: half lines of `dump`, half lines of the real lists."""
    rng = random.Random(seed)
    real: list[str] = []
    for name in REAL_LISTS:
        real.extend(read_lines(DATASETS / name))
    rng.shuffle(real)
    seen_share = size // 2
    with open(dump, "rb") as f:
        head = f.read(seen_share * count * 200).decode("utf-8", "replace").split("\n")[:-1]
    rng.shuffle(head)
    batches = []
    at = 0
    for b in range(count):
        batch = head[b * seen_share : (b + 1) * seen_share]
        while len(batch) < size:
            batch.append(real[at % len(real)])
            at += 1
        rng.shuffle(batch)
        batches.append(batch)
    return batches


def time_adds(store: Path, batches: list[object]) -> tuple[float, int]:
    """Seconds for `add` of every batch on a freshly opened store, and URLs found new."""
    seen = urikey.SeenStore(store, PROFILE)
    try:
        masks = []
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        for batch in batches:
            masks.append(seen.add(batch))
        took = time.perf_counter() - start
        gc.enable()
    finally:
        seen.close()
    new = sum(
        sum(1 for m in mask if m) if isinstance(mask, list) else mask.true_count for mask in masks
    )
    return took, new


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--urikey", help="the urikey binary (default: build the release one)")
    ap.add_argument("--out", default="bench-out/seen-store")
    ap.add_argument("--keep", action="store_true", help="keep the dump and the store")
    a = ap.parse_args()

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    info = machine()
    if a.urikey:
        urikey_bin = a.urikey
    else:
        subprocess.run(
            ["cargo", "build", "--release", "--quiet", "--bin", "urikey"], cwd=ROOT, check=True
        )
        urikey_bin = str(ROOT / "target" / "release" / "urikey")

    dump, store, keys, built = build_store(urikey_bin, out, a.keys)
    for f in store.iterdir():
        f.read_bytes()  # the store in the page cache
    lists = make_batches(dump, a.batch, a.batches, a.seed)
    modes: dict[str, list[object]] = {
        "list[str]": list(lists),
        "pyarrow.string": [pa.array(b, pa.string()) for b in lists],
        "pyarrow.large_string": [pa.array(b, pa.large_string()) for b in lists],
    }
    urls = a.batch * a.batches
    rows = []
    for r in range(a.repeats):
        for mode, batches in modes.items():
            took, new = time_adds(store, batches)
            rows.append({"mode": mode, "repeat": r, "seconds": took, "urls": urls, "new": new})

    with open(out / "raw.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = [
        "# urikey.SeenStore.add benchmark",
        "",
        describe(info),
        "",
        f"- store: {keys:,} keys (profile `{PROFILE}`), built by `urikey dedup --state` from "
        f"{dump.name} in {built:.1f} s, in the page cache",
        f"- {a.batches} batches of {a.batch:,} URLs: half lines of that dump (held by the "
        "store), half lines of the real lists in ../shared/datasets (new, then repeated)",
        f"- median of {a.repeats} passes, each on a freshly opened store (nothing committed)",
        "",
        "| input | seconds | URLs/s | new |",
        "| --- | ---: | ---: | ---: |",
    ]
    for mode in modes:
        took = statistics.median(float(r["seconds"]) for r in rows if r["mode"] == mode)
        new = next(int(r["new"]) for r in rows if r["mode"] == mode)
        text.append(f"| {mode} | {took:.3f} | {urls / took / 1e6:.2f} M | {new:,} |")
    summary = "\n".join(text) + "\n"
    (out / "summary.md").write_text(summary)
    print(summary)
    if not a.keep:
        dump.unlink(missing_ok=True)
        shutil.rmtree(store, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
