"""Real Redis servers for the tests: one node, and a cluster of three
masters, each a `redis-server` process started on a free loopback port in a
temporary directory and stopped when the session ends, also after a failure.

Tests talk to 127.0.0.1 only. Without `redis-server` on PATH the tests that
need it skip, or fail when `URIKEY_REQUIRE_REDIS` is set (as `.ci/run` sets
it, after `scripts/redis-env` installed Debian's package).

The fixtures (imported by conftest.py):

* `redis_node`: the session's single server (a `RedisServer`);
* `redis_url`: its URL, `redis://127.0.0.1:PORT/0`, emptied before each test;
* `redis_cluster`: the session's three-master cluster (a `RedisCluster`),
  emptied before each test;

and `redis_server(*options)`, a `with` block around a server of its own
(a password, a memory limit) that yields its port.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

HOST = "127.0.0.1"
# A server is up within a second here; a loaded 2-core machine needs more.
START_TIMEOUT_S = 20.0
CLUSTER_TIMEOUT_S = 30.0
# prctl(2): the signal a child gets when its parent dies.
PR_SET_PDEATHSIG = 1


def need_redis() -> None:
    """Skips (fails with `URIKEY_REQUIRE_REDIS`) when the Redis tools are missing."""
    missing = [t for t in ("redis-server", "redis-cli") if shutil.which(t) is None]
    if missing:
        reason = f"{' and '.join(missing)} not on PATH (scripts/redis-env installs them)"
        if os.environ.get("URIKEY_REQUIRE_REDIS"):
            pytest.fail(f"{reason}; required because URIKEY_REQUIRE_REDIS is set")
        pytest.skip(reason)


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port(cluster_bus: bool = False) -> int:
    """A loopback port nothing listens on; with `cluster_bus`, one whose
    cluster bus port (the port + 10000) is free as well."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((HOST, 0))
            port = int(s.getsockname()[1])
        if not cluster_bus:
            return port
        if port + 10000 < 65536 and _bindable(port + 10000):
            return port
    raise RuntimeError("no free loopback port pair for a cluster node")


def _die_with_parent() -> None:
    """In the child: SIGTERM when the process that started it dies, so that a
    test run killed outright (SIGKILL, a CI timeout) leaves no server behind."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: stop() still stops it


def _encode(*args: str | bytes) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode() if isinstance(arg, str) else arg
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_reply(f: socket.SocketIO | object) -> object:
    read = f.readline  # type: ignore[attr-defined]
    line: bytes = read()
    if not line:
        raise ConnectionError("the server closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data: bytes = f.read(n + 2)  # type: ignore[attr-defined]
        return data[:-2]
    if kind == b"*":
        return [_read_reply(f) for _ in range(int(rest))]
    raise RuntimeError(f"unexpected reply {line!r}")


def command(port: int, *args: str | bytes, timeout: float = 10.0) -> object:
    """One command to the server on `port`, its reply decoded (errors raise
    RuntimeError). The fixtures' own client, so they need no redis-py."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(_encode(*args))
        with s.makefile("rb") as f:
            return _read_reply(f)


class RedisServer:
    """One `redis-server` on a loopback port, its files in `directory`."""

    def __init__(self, directory: Path, *, cluster: bool = False, args: list[str] | None = None):
        self.directory = directory
        self.port = free_port(cluster_bus=cluster)
        directory.mkdir(parents=True, exist_ok=True)
        argv = [
            "redis-server",
            "--port", str(self.port),
            "--bind", HOST,
            "--dir", str(directory),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", str(directory / "redis.log"),
        ]  # fmt: skip
        if cluster:
            argv += [
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(directory / "nodes.conf"),
                "--cluster-node-timeout", "5000",
            ]  # fmt: skip
        argv += args or []
        self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_die_with_parent
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                log = (self.directory / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited ({self.process.returncode}): {err}{log}")
            try:
                if command(self.port, "PING", timeout=1.0) == "PONG":
                    return
            except RuntimeError as e:
                if str(e).startswith("NOAUTH"):
                    return  # up, with a password (--requirepass)
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING")
            time.sleep(0.05)

    def command(self, *args: str | bytes, timeout: float = 10.0) -> object:
        return command(self.port, *args, timeout=timeout)

    def used_memory(self) -> int:
        info = self.command("INFO", "memory")
        assert isinstance(info, bytes)
        for line in info.decode().splitlines():
            if line.startswith("used_memory:"):
                return int(line.split(":", 1)[1])
        raise RuntimeError("INFO memory has no used_memory")

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL after 10 s); safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


class RedisCluster:
    """Three masters (no replicas) made into a cluster by `redis-cli --cluster create`."""

    def __init__(self, directory: Path, masters: int = 3) -> None:
        self.nodes: list[RedisServer] = []
        try:
            for i in range(masters):
                self.nodes.append(RedisServer(directory / f"node{i}", cluster=True))
            subprocess.run(
                [
                    "redis-cli", "--cluster", "create",
                    *(f"{HOST}:{n.port}" for n in self.nodes),
                    "--cluster-replicas", "0", "--cluster-yes",
                ],
                check=True,
                capture_output=True,
                timeout=CLUSTER_TIMEOUT_S,
            )  # fmt: skip
            self._wait_ok()
        except BaseException:
            self.stop()
            raise

    @property
    def ports(self) -> list[int]:
        return [n.port for n in self.nodes]

    @property
    def url(self) -> str:
        """The URL of one node; a cluster client finds the others from it."""
        return self.nodes[0].url

    def _wait_ok(self) -> None:
        deadline = time.monotonic() + CLUSTER_TIMEOUT_S
        while True:
            states = []
            for node in self.nodes:
                info = node.command("CLUSTER", "INFO")
                assert isinstance(info, bytes)
                states.append(b"cluster_state:ok" in info)
            if all(states):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not reach cluster_state:ok")
            time.sleep(0.1)

    def flush(self) -> None:
        for node in self.nodes:
            node.command("FLUSHALL")

    def used_memory(self) -> int:
        return sum(n.used_memory() for n in self.nodes)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


@contextmanager
def redis_server(*options: str) -> Iterator[int]:
    """A server of its own started with `options` (redis-server's), in a
    temporary directory; yields its port and stops it when the block ends."""
    need_redis()
    with tempfile.TemporaryDirectory(prefix="urikey-redis-") as d:
        server = RedisServer(Path(d), args=list(options))
        try:
            yield server.port
        finally:
            server.stop()


@pytest.fixture(scope="session")
def redis_node() -> Iterator[RedisServer]:
    need_redis()
    with tempfile.TemporaryDirectory(prefix="urikey-redis-") as d:
        server = RedisServer(Path(d))
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture()
def redis_url(redis_node: RedisServer) -> str:
    redis_node.command("FLUSHALL")
    return redis_node.url


@pytest.fixture(scope="session")
def _redis_cluster_session() -> Iterator[RedisCluster]:
    need_redis()
    with tempfile.TemporaryDirectory(prefix="urikey-redis-cluster-") as d:
        cluster = RedisCluster(Path(d))
        try:
            yield cluster
        finally:
            cluster.stop()


@pytest.fixture()
def redis_cluster(_redis_cluster_session: RedisCluster) -> RedisCluster:
    _redis_cluster_session.flush()
    return _redis_cluster_session
