"""The chart of scripts/bench-cc: seconds per tool, grouped by the input they read.

Reads the table of a bench-cc results file (results-SIZE.md) and draws
chart-SIZE.png beside it: one panel per input (the CDXJ .gz, the Parquet
file, the Parquet file in local Spark), urikey's bars darker. Prints the path
drawn; exits with an error when the file has no rows to draw.

Usage: python3 scripts/bench_cc_plot.py target/bench-cc/results-200M.md   (needs matplotlib)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after the backend is chosen

# Panel title, and the label of each row (by the start of its name) in it.
PANELS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "CDXJ .gz (Common Crawl URL index)",
        [
            ("urikey dedup CDXJ", "urikey dedup"),
            ("decompress CDXJ, all cores: urikey's", "decompress (urikey's decoder)"),
            ("decompress CDXJ, all cores: rapidgzip", "decompress (rapidgzip)"),
            ("decompress CDXJ: pigz", "decompress (pigz -dc)"),
            ("decompress CDXJ, one stream", "zcat alone"),
            ("zcat | cut -d' ' -f3- | jq -r .url | sort -u", "zcat|cut|jq|sort -u"),
            ("zcat | cut -d' ' -f3- | jq -r .url | huniq", "zcat|cut|jq|huniq"),
        ],
    ),
    (
        "Parquet (columnar index, column url)",
        [
            ("urikey dedup Parquet", "urikey dedup"),
            ("DuckDB SELECT DISTINCT url", "DuckDB DISTINCT"),
        ],
    ),
    (
        "Parquet in Spark local[2]",
        [
            ("Spark local[2], urikey.spark.dedup", "urikey.spark.dedup"),
            ("Spark local[2], dropDuplicates", "dropDuplicates"),
        ],
    ),
]


def rows(results: Path) -> dict[str, float]:
    """The table's rows: name (unescaped) to seconds."""
    found: dict[str, float] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        # | name (may hold \|) | seconds | MB/s |
        m = re.match(r"^\| (.*) \| ([0-9.]+) \| [0-9]+ \|$", line)
        if m:
            found[m.group(1).replace("\\|", "|")] = float(m.group(2))
    return found


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    results = Path(sys.argv[1])
    table = rows(results)
    panels = []
    for title, wanted in PANELS:
        bars = []
        for prefix, label in wanted:
            for name, seconds in table.items():
                if name.startswith(prefix):
                    bars.append((label, seconds))
                    break
        if bars:
            panels.append((title, bars))
    if not panels:
        print(f"bench_cc_plot: no rows in {results}", file=sys.stderr)
        return 1
    heights = [len(bars) for _, bars in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(7.5, 1.1 + 0.45 * sum(heights)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, (title, bars) in zip(axes[:, 0], panels, strict=True):
        labels = [label for label, _ in bars][::-1]
        seconds = [s for _, s in bars][::-1]
        colors = ["#1f4e79" if label.startswith("urikey") else "#9db4cc" for label in labels]
        ax.barh(labels, seconds, color=colors)
        for y, s in enumerate(seconds):
            ax.text(s, y, f" {s:.2f} s", va="center", fontsize=8)
        ax.set_title(title, fontsize=9, loc="left")
        ax.set_xlim(0, max(seconds) * 1.25)
        ax.tick_params(labelsize=8)
    axes[-1, 0].set_xlabel("seconds, best of the run's rounds (shorter is faster)", fontsize=8)
    fig.tight_layout()
    out = results.with_name(results.name.replace("results-", "chart-").replace(".md", ".png"))
    fig.savefig(out, dpi=110)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
