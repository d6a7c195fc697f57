#!/usr/bin/env python3
"""Two builds of a command, timed side by side in balanced order.

On the 2-core VMs we measure on, every other run of the same binary can be
slower (an A/A test of `urikey dedup` on a 1 GiB dump alternated 1.52-1.71 s
and 1.41-1.49 s), so runs that alternate two binaries in a fixed order give
one of them every slow turn. This script runs them in the order A B B A,
repeated, and prints the medians of each, and of each turn, so the artefact
shows instead of hiding in a difference.

Usage: scripts/ab.py [--rounds N] BIN_A BIN_B ARG...

ARG is the command line after the binary; `{out}` in it becomes a scratch
output file, removed before every run. With `--stats` among the arguments,
the phase times urikey prints (`time: keys ..., inserts ...`) are reported
too. Example:

    scripts/ab.py --rounds 3 old/urikey target/release/urikey \\
        dedup -q --no-progress --stats -o {out} crawl-1g.txt
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from bench_machine import describe, machine

PHASE = re.compile(r"(keys|inserts) ([0-9.]+) s")


@dataclass
class Runs:
    """The measurements of one binary, one entry per run."""

    wall: list[float] = field(default_factory=list)
    user: list[float] = field(default_factory=list)
    sys: list[float] = field(default_factory=list)
    peak_mib: list[float] = field(default_factory=list)
    turn: list[int] = field(default_factory=list)
    phases: dict[str, list[float]] = field(default_factory=dict)


def run_once(binary: str, args: list[str], out: str) -> tuple[float, float, float, float, str]:
    """Runs `binary args` once: wall, user and system seconds, peak RSS in MiB, stderr."""
    if os.path.exists(out):
        os.remove(out)
    argv = [binary] + [a.replace("{out}", out) for a in args]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = proc.stderr.read() if proc.stderr else ""
    # wait4 rather than Popen.wait: it also gives the child's own CPU times.
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"ab: {binary} failed ({proc.returncode}):\n{stderr}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024, stderr


def median(values: list[float]) -> str:
    """The median, printed, or "-" for none."""
    return f"{statistics.median(values):.3f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of A B B A (default 3)")
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    info = machine()  # before the runs: the load average at the start
    # Kept by label, not by path: an A/A test passes the same binary twice.
    binaries = {"A": opts.a, "B": opts.b}
    runs = {"A": Runs(), "B": Runs()}
    order = ["A", "B", "B", "A"] * opts.rounds
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        for turn, label in enumerate(order):
            binary = binaries[label]
            wall, user, system, peak, stderr = run_once(binary, opts.args, out)
            r = runs[label]
            r.wall.append(wall)
            r.user.append(user)
            r.sys.append(system)
            r.peak_mib.append(peak)
            r.turn.append(turn % 2)
            for name, seconds in PHASE.findall(stderr):
                r.phases.setdefault(name, []).append(float(seconds))
            print(f"{turn + 1:3} {binary}: {wall:.3f} s", file=sys.stderr)
    print(describe(info))
    print(f"Command: {' '.join(opts.args)}")
    print(f"{len(order) // 2} runs each, in the order A B B A; medians (seconds, MiB):")
    for label, binary in binaries.items():
        r = runs[label]
        phases = ", ".join(f"{k} {median(v)}" for k, v in r.phases.items())
        print(
            f"{label} {binary}: wall {median(r.wall)}, user {median(r.user)}, "
            f"sys {median(r.sys)}, peak {median(r.peak_mib)}" + (f", {phases}" if phases else "")
        )
        for t in (0, 1):
            walls = [w for w, p in zip(r.wall, r.turn, strict=True) if p == t]
            syss = [s for s, p in zip(r.sys, r.turn, strict=True) if p == t]
            print(f"    {('even', 'odd')[t]} turns: wall {median(walls)}, sys {median(syss)}")
    a, b = statistics.median(runs["A"].wall), statistics.median(runs["B"].wall)
    print(f"B / A wall: {b / a:.3f}")


if __name__ == "__main__":
    main()
