"""The commit and the machine a benchmark ran on, for its results to record.

Every bench script writes these into its own output, so that a results folder
says what it measured without the history: `python3 scripts/bench_machine.py`
prints them as `key: value` lines (what `scripts/bench-cli` saves as
`machine.txt`), `--json` as one JSON object, `--line` as one sentence.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*cmd: str) -> str:
    try:
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


def commit() -> str:
    """`git rev-parse --short HEAD`, with `-dirty` when tracked files have changes."""
    head = _run("git", "rev-parse", "--short", "HEAD")
    if not head:
        return "unknown (not a git checkout)"
    dirty = _run("git", "status", "--porcelain", "--untracked-files=no")
    return f"{head}-dirty" if dirty else head


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gb() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1048576:.0f} GB"
    except OSError:
        pass
    return "unknown"


def machine() -> dict[str, str]:
    """Commit, CPU model, cores, memory, kernel, rustc and Python versions."""
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return {
        "commit": commit(),
        "cpu": cpu_model(),
        "cores": str(len(cores) if cores else os.cpu_count()),
        "memory": memory_gb(),
        "kernel": f"{platform.system()} {platform.release()}",
        "rustc": _run("rustc", "--version") or "unknown",
        "python": platform.python_version(),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def describe(info: dict[str, str]) -> str:
    """One sentence for the head of a Markdown report."""
    return (
        f"Commit `{info['commit']}`; {info['cpu']}, {info['cores']} cores, {info['memory']} RAM, "
        f"{info['kernel']}, {info['rustc']}, Python {info['python']}; "
        f"load average at start {info['load_average']}."
    )


def main() -> None:
    info = machine()
    if "--json" in sys.argv[1:]:
        print(json.dumps(info, indent=2))
    elif "--line" in sys.argv[1:]:
        print(describe(info))
    else:
        for key, value in info.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
