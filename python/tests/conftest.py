"""Shared fixtures: the repository, the CLI binary, the committed sample and
the conformance vectors (the copy in tests/conformance/)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "crawl-sample.txt"
EDGE_CASES = ROOT / "datasets" / "edge-cases.txt"
PROFILES = ["none", "syntax", "rfc", "crawl"]


def conformance_dir() -> Path | None:
    """`$URIKEY_CONFORMANCE_DIR`, or the copy in `tests/conformance/`."""
    env = os.environ.get("URIKEY_CONFORMANCE_DIR")
    path = Path(env) if env else ROOT / "tests" / "conformance"
    return path if path.is_dir() else None


def load_cases(name: str) -> list[dict[str, Any]]:
    """One JSON Lines file of the conformance vectors; skips (fails in CI) when absent."""
    directory = conformance_dir()
    if directory is None:
        if os.environ.get("CI"):
            pytest.fail("the conformance vectors are missing (required when CI is set)")
        pytest.skip("conformance vectors not found")
    lines = (directory / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def known_deviations(file: str) -> set[str]:
    """Cases the Rust tests list as deviating on purpose (tests/data/known-deviations.txt)."""
    text = (ROOT / "tests" / "data" / "known-deviations.txt").read_text(encoding="utf-8")
    out = set()
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) >= 2 and cols[0] == file:
            out.add(cols[1])
    return out


@pytest.fixture(scope="session")
def cli() -> Path:
    """The release CLI binary; built with cargo unless `$URIKEY_BIN` names one."""
    env = os.environ.get("URIKEY_BIN")
    if env:
        return Path(env)
    binary = ROOT / "target" / "release" / "urikey"
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "--bin", "urikey"],
        cwd=ROOT,
        check=True,
    )
    return binary


def sample_lines(path: Path = SAMPLE) -> list[str]:
    """The sample's lines as the CLI reads them (no newline, no CR)."""
    text = path.read_bytes().decode("utf-8")
    return [line.removesuffix("\r") for line in text.split("\n")][
        : -1 if text.endswith("\n") else None
    ]
