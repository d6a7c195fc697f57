"""The report of scripts/bench-cli: DIR/summary.md from the CSV files it wrote.

Reads DIR/inputs.csv and DIR/raw.csv (the side-by-side runs), and when present
DIR/scale.csv and DIR/scale-gen.csv (the input-size series), DIR/skipped.txt,
DIR/machine.txt and DIR/gen.txt; writes DIR/summary.md and prints it. Every
count a tool printed is set beside the generator's ground truth for that tool's
notion of a duplicate, so a fast but wrong run stands out.

Usage: python3 scripts/bench_cli_report.py DIR --repeats N --peer-repeats N --seed S
       [--environment TEXT] [--urikey-note TEXT]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from pathlib import Path
from typing import Any, NamedTuple

Row = dict[str, str]
Truth = dict[str, Any]

CAT = "cat of urikey's output"
CAT_FLUSHED = "cat of urikey's output, flushed"
EN_DASH = "\N{EN DASH}"  # between the slowest and the fastest run

SIDE_BY_SIDE_INTRO = (
    "Each cell is the median wall time of {repeats} runs after a warm-up read of the input "
    "(page cache warm), taken around the process (a few ms of process start included); "
    "every tool writes its output to a file in the output directory; peak RSS is the largest "
    "of the runs (GNU time `%M`). `unique out` is the number of lines the tool printed; "
    "`expected` is the generator's ground truth for that tool's notion of a duplicate (`rfc` "
    "keys for urikey rfc, byte-exact lines including invalid ones for sort/awk/huniq/runiq; on "
    "inputs without a ground truth, the byte-exact tools are held to the count of `sort -u`). "
    "`vs urikey` is the tool's wall time divided by urikey rfc all-threads on the same input."
)

SIDE_BY_SIDE_NOTES = (
    "✗ marks a tool whose output line count differs from the ground truth. "
    "The fluent-uri loop (`examples/fluent_dedup.rs`) is what a Rust user would write "
    "instead: fluent-uri's parse + normalize on all threads (rayon, blocks of 65,536 "
    "lines), then one set of the normalized strings, in input order; its normalization "
    "is its own (it keeps default ports and empty paths), so its count has no expectation. "
    "w3lib's `canonicalize_url` has its own notion of equality (it sorts query "
    "arguments and drops fragments), so its count is shown without an expectation. "
    "`sort -u` prints sorted output, not first-seen order. The `real` input is built by "
    "`gen-crawl --from` the real lists: their URLs (invalid ones included, as they are) "
    "repeated and respelled the way gen-crawl does it for generated URLs, with a truth keyed "
    "by the library; with only about 145,000 base URLs, most of its lines are duplicates. The "
    "synthetic input has about half duplicates and a realistic mix of equivalent spellings."
)

SERIES_INTRO = (
    "Synthetic dumps (`gen-crawl --bytes SIZE --seed {seed}`; each is a prefix of the next), "
    "one size at a time, median of {repeats} runs of urikey and cat{peers} after a warm-up "
    "read of the input (the page cache holds it as far as RAM allows). Every tool writes to a "
    "file on the same disk as its input (`sync` between runs, outside the timing); "
    "`user`/`sys` are GNU time's, peak RSS is the largest of the runs. `urikey in memory` runs "
    "with 2 threads and the default `--memory-limit` (half of RAM, far above its peak here); "
    "`urikey memory-limit` with the limit in its note (by default a quarter of the in-memory "
    "peak), spilling to temporary files in the output directory; `sort -u` is `LC_ALL=C sort "
    "-u` with its default buffer and its temporary files there too. `cat of urikey's output` "
    "copies urikey's output to another file: the cost of writing the same bytes, the floor "
    "when the disk's write-back is the wall (its MB/s is the input size over its wall time, "
    "the ceiling for any tool that writes this output); `, flushed` also waits until the copy "
    "is on disk (`sync FILE`), as urikey does before it renames its output into place (the "
    "peers' outputs are flushed by the `sync` before the next run, outside their timing). "
    "`vs urikey` is the wall time divided by `urikey in memory` at the same size."
)

SERIES_RATIOS_INTRO = (
    "Per size: urikey's MB/s in memory (median, and the slowest and fastest run when there "
    "were several) and that median as a share of the first size's, the peers' wall time over "
    "urikey's (in memory), urikey over the `cat` of its own output (within 10% of it where "
    "write-back is the wall) and over the flushed copy, and urikey's peak RSS per unique "
    "`rfc` key."
)


def read_csv(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_json(path: str | Path) -> Truth | None:
    try:
        with open(path, encoding="utf-8") as f:
            loaded = json.load(f)
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def distinct_lines(truth: Truth) -> int:
    """Byte-exact distinct lines: counted directly for a `--from` dump, by
    construction (valid lines are their own `none` keys) otherwise."""
    return int(truth.get("distinct_lines", truth["unique_none"] + truth.get("distinct_invalid", 0)))


def ok_rows(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r["exit"] == "0"]


def median_of(rows: list[Row], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows)


def fmt_count(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


# ---------------------------------------------------------------- side by side


class SideBySide:
    """The runs of raw.csv against the inputs of inputs.csv."""

    def __init__(self, out: Path) -> None:
        self.inputs = {row["label"]: row for row in read_csv(out / "inputs.csv")}
        self.truths: dict[str, Truth] = {}
        for label, row in self.inputs.items():
            truth = read_json(row["truth"]) if row["truth"] else None
            if truth is not None:
                self.truths[label] = truth
        self.runs: dict[tuple[str, str], list[Row]] = {}
        for row in read_csv(out / "raw.csv"):
            self.runs.setdefault((row["tool"], row["input"]), []).append(row)

    def expected(self, kind: str, label: str) -> int | None:
        if kind == "floor":
            return int(self.inputs[label]["lines"])
        truth = self.truths.get(label)
        if truth is None:
            return None
        if kind == "rfc":
            return int(truth["unique_rfc"])
        if kind == "none":
            return int(truth["unique_none"])
        if kind == "exact":
            return distinct_lines(truth)
        return None

    def reference(self, kind: str, label: str) -> int | None:
        """Expected count, or for byte-exact tools on inputs without a truth,
        the count of `sort -u` (all byte-exact tools must agree)."""
        exp = self.expected(kind, label)
        if exp is None and kind == "exact":
            ok = ok_rows(self.runs.get(("sort -u", label), []))
            if ok:
                return int(ok[-1]["lines_out"])
        return exp

    def median_wall(self, tool: str, label: str) -> float | None:
        ok = ok_rows(self.runs.get((tool, label), []))
        return median_of(ok, "wall_s") if ok else None

    def table_row(self, tool: str, label: str, rows: list[Row]) -> str:
        kind = rows[0]["kind"]
        ok = ok_rows(rows)
        if not ok:
            return f"| {tool} | {label} | failed (exit {rows[0]['exit']}) | | | | | | |"
        size = int(self.inputs[label]["bytes"])
        nlines = int(self.inputs[label]["lines"])
        wall = median_of(ok, "wall_s")
        rss = max(int(r["peak_rss_kb"]) for r in ok) / 1024
        got = int(ok[-1]["lines_out"] or 0)
        exp = self.reference(kind, label)
        mark = "" if exp is None or exp == got else " ✗"
        base = self.median_wall("urikey rfc all-threads", label)
        speed = size / 1e6 / wall if wall > 0 else float("inf")
        urls = nlines / wall if wall > 0 else float("inf")
        ratio = f"{wall / base:.2f}" if base else ""
        unique = "n/a (counts lines)" if kind == "floor" else f"{got:,}{mark}"
        expected = "" if exp is None or kind == "floor" else f"{exp:,}"
        return (
            f"| {tool} | {label} | {wall:.3f} | {speed:,.0f} | {urls:,.0f} | {rss:,.0f} | "
            f"{unique} | {expected} | {ratio} |"
        )

    def section(self, repeats: str, urikey_note: str) -> list[str]:
        note = [f"Note: {urikey_note}.", ""] if urikey_note else []
        if not self.inputs:
            return note
        lines = [SIDE_BY_SIDE_INTRO.format(repeats=repeats), "", *note, "Inputs:", ""]
        for label, row in self.inputs.items():
            lines.append(
                f"- `{label}`: {int(row['bytes']) / 1e6:.1f} MB, {int(row['lines']):,} lines; "
                f"{row['note']}"
            )
        lines += [
            "",
            "| tool | input | wall s | MB/s | URLs/s | peak RSS MB | unique out | expected "
            "| vs urikey |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [self.table_row(tool, label, rows) for (tool, label), rows in self.runs.items()]
        return [*lines, "", SIDE_BY_SIDE_NOTES]


# ---------------------------------------------------------------- input-size series


class Cell(NamedTuple):
    """Medians of the successful runs of one tool at one size."""

    wall: float
    user: float
    sys: float
    rss_kb: int
    lines_out: int


class Series:
    """The input-size series of scale.csv."""

    def __init__(self, out: Path, rows: list[Row], seed: str) -> None:
        self.out = out
        self.rows = rows
        self.seed = seed
        self.sizes = list(dict.fromkeys(r["size"] for r in rows))
        self.tools = list(dict.fromkeys(r["tool"] for r in rows))
        self.by: dict[tuple[str, str], list[Row]] = {}
        for r in rows:
            self.by.setdefault((r["size"], r["tool"]), []).append(r)
        gen_csv = out / "scale-gen.csv"
        self.gen = {r["size"]: r for r in read_csv(gen_csv)} if gen_csv.exists() else {}

    def truth(self, size: str) -> Truth | None:
        return read_json(self.out / "scale" / f"crawl-{size}-s{self.seed}.truth.json")

    def first(self, size: str) -> Row:
        return next(r for r in self.rows if r["size"] == size)

    def cell(self, size: str, tool: str) -> Cell | None:
        ok = ok_rows(self.by.get((size, tool), []))
        if not ok:
            return None
        return Cell(
            median_of(ok, "wall_s"),
            median_of(ok, "user_s"),
            median_of(ok, "sys_s"),
            max(int(r["peak_rss_kb"]) for r in ok),
            int(ok[-1]["lines_out"]),
        )

    def mbps_runs(self, size: str) -> list[float]:
        """MB/s of each successful in-memory urikey run at `size`."""
        return [
            int(r["input_bytes"]) / 1e6 / float(r["wall_s"])
            for r in self.by.get((size, "urikey in memory"), [])
            if r["exit"] == "0" and float(r["wall_s"]) > 0
        ]

    def tool_row(self, size: str, tool: str, base: Cell | None) -> str | None:
        rows = self.by.get((size, tool))
        if not rows:
            return None
        note = rows[0]["note"]
        name = f"{tool} ({note})" if note else tool
        c = self.cell(size, tool)
        if c is None:
            return f"| {size} | {name} | failed (exit {rows[0]['exit']}) | | | | | | | |"
        truth = self.truth(size)
        kind = rows[0]["kind"]
        exp: int | None = None
        if truth is not None and kind == "rfc":
            exp = int(truth["unique_rfc"])
        elif truth is not None and kind == "exact":
            exp = distinct_lines(truth)
        elif kind == "copy" and base is not None:
            exp = base.lines_out
        mark = "" if exp is None or exp == c.lines_out else " ✗"
        ratio = f"{c.wall / base.wall:.2f}" if base and base.wall > 0 else ""
        nbytes = int(self.first(size)["input_bytes"])
        return (
            f"| {size} | {name} | {c.wall:.2f} | {c.user:.2f} | {c.sys:.2f} | "
            f"{nbytes / 1e6 / c.wall:,.0f} | {c.rss_kb / 1024:,.0f} | {c.lines_out:,}{mark} | "
            f"{fmt_count(exp)} | {ratio} |"
        )

    def ratio_row(self, size: str, first_median: float | None) -> str:
        truth = self.truth(size)
        first = self.first(size)
        nbytes, nlines = int(first["input_bytes"]), int(first["input_lines"])
        base = self.cell(size, "urikey in memory")
        limited = self.cell(size, "urikey memory-limit")
        keys = int(truth["unique_rfc"]) if truth else (base.lines_out if base else None)

        def over(tool: str) -> str:
            c = self.cell(size, tool)
            return f"{c.wall / base.wall:.2f}" if c and base and base.wall > 0 else ""

        def under(tool: str) -> str:
            c = self.cell(size, tool)
            return f"{base.wall / c.wall:.2f}" if c and base and c.wall > 0 else ""

        def per_key(c: Cell | None) -> str:
            return f"{c.rss_kb * 1024 / keys:,.0f}" if c and keys else ""

        runs = self.mbps_runs(size)
        speed, share = "", ""
        if runs:
            median = statistics.median(runs)
            speed = f"{median:,.0f}"
            if len(runs) > 1:
                speed += f" ({min(runs):,.0f}{EN_DASH}{max(runs):,.0f})"
            share = f"{100 * median / first_median:.0f}%" if first_median else ""
        return (
            f"| {size} | {nbytes / 1e6:,.0f} | {nlines:,} | {fmt_count(keys)} | "
            f"{speed} | {share} | {over('urikey memory-limit')} | "
            f"{over('huniq')} | {over('runiq')} | {over('sort -u')} | "
            f"{under(CAT)} | {under(CAT_FLUSHED)} | "
            f"{per_key(base)} | {per_key(limited)} |"
        )

    def section(self, repeats: str, peer_repeats: str) -> list[str]:
        peers = f" and of {peer_repeats} of each peer" if peer_repeats != repeats else ""
        lines = [
            "",
            "## Input-size series",
            "",
            SERIES_INTRO.format(seed=self.seed, repeats=repeats, peers=peers),
            "",
            "| input | tool | wall s | user s | sys s | MB/s | peak RSS MB | lines out | expected "
            "| vs urikey |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for size in self.sizes:
            base = self.cell(size, "urikey in memory")
            lines += [
                row for tool in self.tools if (row := self.tool_row(size, tool, base)) is not None
            ]
        lines += [
            "",
            SERIES_RATIOS_INTRO,
            "",
            "| input | MB | lines | unique keys | urikey MB/s | of the first size "
            "| memory-limit ÷ in memory | huniq ÷ urikey | runiq ÷ urikey | sort -u ÷ urikey "
            "| urikey ÷ cat | urikey ÷ flushed cat | bytes/key in memory "
            "| bytes/key memory-limit |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        first_runs = self.mbps_runs(self.sizes[0])
        first_median = statistics.median(first_runs) if first_runs else None
        lines += [self.ratio_row(size, first_median) for size in self.sizes]
        if self.gen:
            per_size = "; ".join(
                f"{s}: {float(g['gen_s']):.0f} s, peak RSS {int(g['gen_peak_rss_kb']) // 1024:,} MB"
                for s, g in self.gen.items()
            )
            lines += ["", f"gen-crawl per size: {per_size}."]
        if (self.out / "scale.png").exists():
            lines += ["", "Chart: `scale.png` (MB/s and peak RSS against input size, per tool)."]
        return lines


# ---------------------------------------------------------------- the report


def report(out: Path, args: argparse.Namespace) -> list[str]:
    lines = ["# urikey dedup vs. other tools", ""]
    machine = read_text(out / "machine.txt")
    if machine:
        lines += ["Machine (`machine.txt`):", "", "```text", machine, "```", ""]
    if args.environment:
        lines += [args.environment, ""]
    lines += SideBySide(out).section(args.repeats, args.urikey_note)
    scale_csv = out / "scale.csv"
    scale_rows = read_csv(scale_csv) if scale_csv.exists() else []
    if scale_rows:
        lines += Series(out, scale_rows, args.seed).section(args.repeats, args.peer_repeats)
    skipped = read_text(out / "skipped.txt")
    if skipped:
        lines += ["", "Skipped or failed:", "", skipped]
    if (out / "throughput.png").exists():
        lines += ["", "Chart: `throughput.png` (MB/s per tool, log scale)."]
    gen = read_text(out / "gen.txt")
    if gen:
        lines += ["", gen]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the output directory of scripts/bench-cli")
    ap.add_argument("--repeats", required=True, help="runs per (tool, input)")
    ap.add_argument("--peer-repeats", required=True, help="runs of each peer in the series")
    ap.add_argument("--seed", required=True, help="the gen-crawl seed of the series")
    ap.add_argument("--environment", default="", help="a line on the build and the load")
    ap.add_argument("--urikey-note", default="", help="a note on how urikey ran")
    args = ap.parse_args()
    text = "\n".join(report(args.out, args)) + "\n"
    (args.out / "summary.md").write_text(text, encoding="utf-8")
    print(text, end="")


if __name__ == "__main__":
    main()
