"""The charts of scripts/bench-cli, drawn by scripts/plot.

DIR/throughput.png: median MB/s per tool and input, from DIR/raw.csv and
DIR/inputs.csv. DIR/scale.png, when DIR/scale.csv exists (bench-cli --sizes):
MB/s and peak RSS against input size for each tool. Prints the paths drawn;
exits with an error when there was nothing to draw.

Usage: python3 scripts/bench_plot.py DIR   (needs matplotlib)
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after the backend is chosen
import matplotlib.ticker

Row = dict[str, str]


def read_csv(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def draw_throughput(out: Path) -> Path | None:
    if not ((out / "inputs.csv").exists() and (out / "raw.csv").exists()):
        return None
    inputs = {r["label"]: r for r in read_csv(out / "inputs.csv")}
    walls: dict[str, dict[str, list[float]]] = {}
    for r in read_csv(out / "raw.csv"):
        if r["exit"] == "0":
            walls.setdefault(r["input"], {}).setdefault(r["tool"], []).append(float(r["wall_s"]))
    labels = [label for label in inputs if label in walls]
    if not labels:
        return None
    height = 1.2 + 0.45 * sum(len(walls[label]) for label in labels)
    fig, axes = plt.subplots(len(labels), 1, figsize=(9, height), squeeze=False)
    for ax, label in zip(axes[:, 0], labels, strict=True):
        size_mb = int(inputs[label]["bytes"]) / 1e6

        def speed(tool: str, label: str = label, size_mb: float = size_mb) -> float:
            return size_mb / max(statistics.median(walls[label][tool]), 1e-3)

        tools = sorted(walls[label], key=speed)
        speeds = [speed(t) for t in tools]
        colors = [
            "tab:orange" if t.startswith("urikey") else "tab:gray" if "floor" in t else "tab:blue"
            for t in tools
        ]
        ax.barh(tools, speeds, color=colors)
        ax.set_xscale("log")
        lines = int(inputs[label]["lines"])
        ax.set_title(f"{label}: {size_mb:,.0f} MB, {lines:,} lines", fontsize=10)
        ax.set_xlabel("MB/s (median wall time, log scale)")
        for y, s in enumerate(speeds):
            ax.text(s, y, f" {s:,.0f}", va="center", fontsize=8)
    fig.tight_layout()
    path = out / "throughput.png"
    fig.savefig(path, dpi=110)
    return path


def draw_scale(out: Path) -> Path | None:
    if not (out / "scale.csv").exists():
        return None
    rows = [r for r in read_csv(out / "scale.csv") if r["exit"] == "0"]
    if not rows:
        return None
    runs: dict[str, dict[int, list[Row]]] = {}
    for r in rows:
        runs.setdefault(r["tool"], {}).setdefault(int(r["input_bytes"]), []).append(r)
    sizes = sorted({int(r["input_bytes"]) for r in rows})
    label_of = {int(r["input_bytes"]): r["size"] for r in rows}
    fig, (ax_speed, ax_rss) = plt.subplots(1, 2, figsize=(12, 4.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (tool, per_size) in enumerate(runs.items()):
        xs = sorted(per_size)
        gib = [x / 2**30 for x in xs]
        speed = [x / 1e6 / statistics.median(float(r["wall_s"]) for r in per_size[x]) for x in xs]
        rss = [max(int(r["peak_rss_kb"]) for r in per_size[x]) / 1024 for x in xs]
        style: dict[str, Any] = {
            "marker": "o",
            "color": colors[i % len(colors)],
            "linewidth": 2 if tool.startswith("urikey") else 1.2,
            "linestyle": "--" if tool.startswith("cat") else "-",
        }
        if tool.startswith("cat"):
            # Input bytes over the time to write urikey's output: the ceiling
            # for a tool that writes it. Its RSS says nothing.
            ax_speed.plot(gib, speed, label=f"{tool} (ceiling)", **style)
        else:
            ax_speed.plot(gib, speed, label=tool, **style)
            ax_rss.plot(gib, rss, label=tool, **style)
    for ax in (ax_speed, ax_rss):
        ax.set_xscale("log", base=2)
        ax.set_xticks([x / 2**30 for x in sizes])
        ax.set_xticklabels([label_of[x] for x in sizes])
        ax.set_xlabel("input size")
        ax.grid(True, which="both", alpha=0.3)
    ax_speed.set_yscale("log")
    ax_speed.set_ylabel("MB/s of input (median wall time, log scale)")
    ax_speed.set_title("Throughput", fontsize=10)
    ax_rss.set_yscale("log")
    ax_rss.set_ylabel("peak RSS, MB (log scale)")
    ax_rss.set_title("Peak memory", fontsize=10)
    ax_speed.legend(fontsize=8, loc="best")
    for ax in (ax_speed, ax_rss):
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    fig.tight_layout()
    path = out / "scale.png"
    fig.savefig(path, dpi=110)
    return path


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "bench-out")
    drawn = [p for p in (draw_throughput(out), draw_scale(out)) if p is not None]
    if not drawn:
        sys.exit("no successful runs in raw.csv or scale.csv")
    print("\n".join(str(p) for p in drawn))


if __name__ == "__main__":
    main()
