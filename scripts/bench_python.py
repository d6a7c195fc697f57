"""The Python benchmark: urikey against w3lib, url-normalize and ada-url on
one URL list in one run. Run through scripts/bench-python, which makes the
environment and builds what it needs."""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import urikey
import url_normalize
import w3lib.url
from ada_url import normalize_url as ada_normalize
from bench_machine import describe, machine

ROOT = Path(__file__).resolve().parents[1]


def load_urls(path: Path, lines: int) -> list[str]:
    text = path.read_bytes().decode("utf-8", "replace").lstrip("\ufeff")
    base = [line.rstrip("\r") for line in text.split("\n") if line.strip()]
    out: list[str] = []
    while len(out) < lines:
        out.extend(base)
    return out[:lines]


def best(run: Callable[[], object], repeats: int) -> float:
    """The fastest of `repeats` runs, in seconds (after one warm-up)."""
    run()
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def loop(fn: Callable[[str], object], urls: list[str]) -> Callable[[], object]:
    def run() -> int:
        ok = 0
        for url in urls:
            try:
                fn(url)
                ok += 1
            except Exception:  # the peers raise assorted errors on bad URLs
                pass
        return ok

    return run


PY_DEDUP = """
import sys, urikey
d = urikey.Deduplicator()
with open(sys.argv[1]) as f:
    while True:
        batch = [line.rstrip("\\n") for _, line in zip(range(200_000), f)]
        if not batch:
            break
        d.add(batch)
status = open("/proc/self/status").read()
hwm = next(l for l in status.splitlines() if l.startswith("VmHWM:"))
print(int(hwm.split()[1]) * 1024, len(d))
"""


def seen_set_peaks(cli: Path, keys: int) -> dict[str, tuple[int, int]]:
    """Peak RSS of the CLI's `dedup` (input on stdin, so it is streamed, not
    mapped) and of a Python process feeding a Deduplicator in 200k-line
    batches, each on `keys` distinct URLs and on as many lines of 1,000
    distinct URLs: the difference is what `keys` keys cost."""
    out: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for kind in ("distinct", "repeated"):
            path = Path(tmp) / f"{kind}.txt"
            with path.open("w") as f:
                for start in range(0, keys, 100_000):
                    ids = list(range(start, min(keys, start + 100_000)))
                    if kind == "repeated":
                        # Spread over the id range, so the lines are as long.
                        step = max(1, keys // 1000)
                        ids = [(i % 1000) * step for i in ids]
                    f.write("".join(synthetic(i) + "\n" for i in ids))
            files[kind] = path
        peaks: dict[str, list[int]] = {"cli": [], "python": []}
        for kind in ("distinct", "repeated"):
            stats = Path(tmp) / "stats.json"
            with files[kind].open("rb") as stdin:
                subprocess.run(
                    [
                        str(cli),
                        "dedup",
                        "-",
                        "-o",
                        os.devnull,
                        "--stats-json",
                        str(stats),
                        "--quiet",
                        "--no-progress",
                    ],
                    stdin=stdin,
                    check=True,
                )
            peaks["cli"].append(int(json.loads(stats.read_text())["peak_rss_bytes"]))
            run = subprocess.run(
                [sys.executable, "-c", PY_DEDUP, str(files[kind])],
                check=True,
                capture_output=True,
                text=True,
            )
            peaks["python"].append(int(run.stdout.split()[0]))
        for name, (distinct, repeated) in peaks.items():
            out[name] = (distinct, repeated)
    return out


def synthetic(i: int) -> str:
    return f"http://host{i % 5000}.example/p/{i}?id={i * 7}"


def main() -> None:
    info = machine()  # before the runs: the load average at the start
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--input", type=Path, required=True)
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dedup-keys", type=int, default=2_000_000)
    ap.add_argument("--cli", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    urls = load_urls(args.input, args.lines)
    n = len(urls)
    arrow = pa.array(urls)
    # urikey's crawl profile (RFC rules, fragment dropped, dirty input read
    # leniently); then with w3lib's query sorting added; then the w3lib
    # compat preset, whose keys equal w3lib's canonicalize_url.
    configs = [
        ("crawl", urikey.Canonicalizer("crawl", lenient=True)),
        ("crawl + sort-query", urikey.Canonicalizer("crawl", enable="sort-query", lenient=True)),
    ]

    rows: list[tuple[str, float]] = []

    def measure(name: str, run: Callable[[], object], repeats: int, urls_per_run: int = n) -> None:
        secs = best(run, repeats)
        rows.append((name, urls_per_run / secs))
        print(f"{name:56s} {urls_per_run / secs:14,.0f} URLs/s", flush=True)

    for label, c in configs:
        measure(
            f"urikey {label}: canonicalize_many (list)",
            lambda c=c: c.canonicalize_many(urls),
            args.repeats * 3,
        )
        measure(
            f"urikey {label}: canonicalize_many (pyarrow)",
            lambda c=c: c.canonicalize_many(arrow),
            args.repeats * 3,
        )
        measure(
            f"urikey {label}: canonicalize (Python loop)", loop(c.canonicalize, urls), args.repeats
        )
    w3lib_compat = urikey.Canonicalizer(compat="w3lib")
    measure(
        "urikey compat=w3lib: canonicalize_many (list)",
        lambda: w3lib_compat.canonicalize_many(urls),
        args.repeats,
    )
    measure(
        "urikey compat=w3lib: canonicalize_many (pyarrow)",
        lambda: w3lib_compat.canonicalize_many(arrow),
        args.repeats,
    )
    # The same keys through the CLI's engine, from a file (process start included).
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "urls.txt"
        listing.write_text("\n".join(urls) + "\n", encoding="utf-8")
        dedup = [str(args.cli), "dedup", "--compat", "w3lib", "-q", "--no-progress"]
        dedup += ["-o", os.devnull, str(listing)]
        measure(
            "urikey dedup --compat w3lib (CLI, from a file)",
            lambda: subprocess.run(dedup, check=True),
            args.repeats,
        )
        # The same list ten times over: a batch run long enough that process
        # start and filling the pipeline (about 20 ms) are not most of it.
        # Every line is keyed all the same; the rate is per input line.
        tenfold = Path(tmp) / "urls-x10.txt"
        tenfold.write_text(("\n".join(urls) + "\n") * 10, encoding="utf-8")
        dedup10 = [*dedup[:-1], str(tenfold)]
        measure(
            "urikey dedup --compat w3lib (CLI, the list 10 times)",
            lambda: subprocess.run(dedup10, check=True),
            args.repeats,
            urls_per_run=10 * n,
        )
    measure("w3lib.url.canonicalize_url (loop)", loop(w3lib.url.canonicalize_url, urls), 1)
    measure("url_normalize.url_normalize (loop)", loop(url_normalize.url_normalize, urls), 1)
    measure("ada_url.normalize_url (loop)", loop(ada_normalize, urls), args.repeats)

    # Per-call cost for a short, already canonical URL, and a builtin for scale.
    c = configs[0][1]
    short = "http://example.com/a"
    calls = 1_000_000
    per_call = min(timeit.repeat(lambda: c.canonicalize(short), number=calls, repeat=5)) / calls
    per_len = min(timeit.repeat(lambda: len(short), number=calls, repeat=5)) / calls
    short_dirty = "HTTP://Example.com:80/a"
    per_call_dirty = (
        min(timeit.repeat(lambda: c.canonicalize(short_dirty), number=calls, repeat=5)) / calls
    )

    # Memory: the Deduplicator's seen-set against the CLI's on the same keys.
    d = urikey.Deduplicator()
    for start in range(0, args.dedup_keys, 200_000):
        d.add([synthetic(i) for i in range(start, min(args.dedup_keys, start + 200_000))])
    assert len(d) == args.dedup_keys
    peaks = seen_set_peaks(args.cli, args.dedup_keys)
    cli_seen = peaks["cli"][0] - peaks["cli"][1]
    py_seen = peaks["python"][0] - peaks["python"][1]

    w3 = dict(rows)["w3lib.url.canonicalize_url (loop)"]
    lines = [
        "# urikey from Python: throughput against Python URL canonicalizers",
        "",
        describe(info),
        "",
        f"Same list, same run: {n:,} URLs from `{args.input.name}` "
        f"(repeated to {n:,} lines), CPython {platform.python_version()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start.",
        "urikey: profile `crawl`, lenient; then with `sort-query` added (w3lib sorts the "
        'query too); then the `compat="w3lib"` preset (keys equal to w3lib\'s).',
        "Best of several runs for urikey and ada-url, one run for w3lib and url-normalize.",
        "",
        "| method | URLs/s | x w3lib |",
        "| --- | ---: | ---: |",
    ]
    lines += [f"| {name} | {rate:,.0f} | {rate / w3:.1f} |" for name, rate in rows]
    lines += [
        "",
        f"Per call, short canonical URL (`{short}`): {per_call * 1e9:.0f} ns "
        f"(`len()` of it: {per_len * 1e9:.0f} ns); needing work (`{short_dirty}`): "
        f"{per_call_dirty * 1e9:.0f} ns.",
        "",
        f"Memory for {args.dedup_keys:,} distinct keys (peak RSS on {args.dedup_keys:,} "
        "distinct URLs minus peak RSS on as many lines of 1,000 URLs): "
        f"`Deduplicator` (200k-line batches) {py_seen / 2**20:.1f} MiB, "
        f"CLI `dedup` (input streamed) {cli_seen / 2**20:.1f} MiB: "
        f"ratio {py_seen / max(cli_seen, 1):.2f}. "
        f"The Deduplicator's own count: {d.memory_bytes / 2**20:.1f} MiB "
        f"({d.memory_bytes / args.dedup_keys:.1f} B/key).",
        "",
        "Targets: batch >= 100x w3lib, per-URL loop >= 20x w3lib, per call < 1 us, "
        "Deduplicator memory <= 1.5x the CLI's seen-set.",
    ]
    (args.out / "results.md").write_text("\n".join(lines) + "\n")
    (args.out / "results.json").write_text(
        json.dumps(
            {
                "machine": info,
                "urls": n,
                "rates": dict(rows),
                "per_call_ns": per_call * 1e9,
                "per_call_dirty_ns": per_call_dirty * 1e9,
                "dedup_keys": args.dedup_keys,
                "deduplicator_bytes": d.memory_bytes,
                "peak_rss_bytes": peaks,
            },
            indent=2,
        )
        + "\n"
    )
    chart(rows, w3, args.out / "throughput.png")
    print("\n".join(lines))


def chart(rows: list[tuple[str, float]], w3: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r[0] for r in rows][::-1]
    rates = [r[1] for r in rows][::-1]
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.4 * len(rows)))
    colors = ["#1f77b4" if name.startswith("urikey") else "#999999" for name in names]
    bars = ax.barh(names, rates, color=colors)
    ax.set_xscale("log")
    ax.set_xlabel("URLs per second (log scale)")
    ax.set_title("URL canonicalization from Python (same list, same run)")
    for bar, rate in zip(bars, rates, strict=True):
        ax.text(
            rate * 1.05,
            bar.get_y() + bar.get_height() / 2,
            f"{rate / w3:.{0 if rate >= 10 * w3 else 1}f}x w3lib",
            va="center",
            fontsize=8,
        )
    ax.set_xlim(right=max(rates) * 8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
    sys.exit(0)
