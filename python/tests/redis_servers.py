"""Real redis-servers for the tests: each on a free loopback port, in its own
directory, stopped when its `with` block ends (even on failure)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def require_redis() -> str:
    """The redis-server binary; skips without one (fails with URIKEY_REQUIRE_REDIS=1)."""
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("URIKEY_REQUIRE_REDIS") == "1":
            pytest.fail("URIKEY_REQUIRE_REDIS=1 but redis-server is not on PATH")
        pytest.skip("redis-server is not on PATH (apt-get install redis-server)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def redis_server(*options: str) -> Iterator[int]:
    """Starts a redis-server with `options` and yields its port."""
    binary = require_redis()
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(5):
            port = free_port()
            proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    directory,
                    *options,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline and proc.poll() is None:
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    except OSError:
                        time.sleep(0.02)
                        continue
                    yield port
                    return
            finally:
                proc.kill()
                proc.wait()
        raise RuntimeError("redis-server did not start")
