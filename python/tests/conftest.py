"""Shared fixtures: the repository, the CLI binary, the committed sample,
the conformance vectors (the copy in tests/conformance/) and real Redis
servers (redis_servers.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis_servers import (  # noqa: F401 (fixtures)
    _redis_cluster_session,
    redis_cluster,
    redis_node,
    redis_url,
)

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


def need_spark(module_level: bool = False) -> None:
    """Skips (fails with `URIKEY_REQUIRE_SPARK`, as `.ci/run` sets it) when
    pyspark or a Java runtime is missing."""

    def need(reason: str) -> None:
        if os.environ.get("URIKEY_REQUIRE_SPARK"):
            pytest.fail(f"{reason} (required because URIKEY_REQUIRE_SPARK is set)")
        pytest.skip(reason, allow_module_level=module_level)

    try:
        import pyspark  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        need("pyspark is not installed (scripts/spark-env installs it)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        need("no Java runtime (scripts/spark-env installs one)")


# Enough partitions to split keys across tasks, few enough to start fast.
SHUFFLE_PARTITIONS = 4


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A real local Spark (`local[2]`), shared by every test that asks for it."""
    need_spark()
    from pyspark.sql import SparkSession

    # Python workers run this interpreter (the venv with urikey), not `python3` on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("urikey-tests")
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
