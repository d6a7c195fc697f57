"""`python -m urikey` and the wheel's `urikey` console command run the `urikey`
command line itself (issue 33, item 8): the Rust CLI compiled into the
extension, so their output, errors and exit codes are the binary's."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EDGE_CASES, SAMPLE


def run(cmd: list[str], stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    done = subprocess.run(cmd, input=stdin, capture_output=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def console_script() -> str | None:
    return shutil.which("urikey", path=str(Path(sys.executable).parent))


@pytest.mark.parametrize(
    "args",
    [
        ["normalize", "--profile", "crawl", "--lenient", str(SAMPLE)],
        ["normalize", "--key", "hash", str(EDGE_CASES)],
        ["dedup", "-q", "--emit", "original", "--profile", "crawl", str(SAMPLE)],
        ["dedup", "-q", "--base", "http://a.com/", str(EDGE_CASES)],
        ["parse", str(EDGE_CASES)],
        ["resolve", "--base", "http://a/b/c/d;p?q", str(EDGE_CASES)],
        ["--version"],
        ["--help"],
        ["dedup", "--help"],
        ["dedup", "--no-such-option"],
        ["dedup", "-q", "--fail-on-invalid", str(EDGE_CASES)],
        ["dedup", "no-such-file.txt"],
        ["normalize", "--profile", "no-such-profile", str(SAMPLE)],
    ],
    ids=lambda a: " ".join(a)[:40],
)
def test_python_dash_m_urikey_is_the_cli(cli: Path, args: list[str]) -> None:
    want = run([str(cli), *args])
    got = run([sys.executable, "-m", "urikey", *args])
    assert got == want
    assert want[0] in (0, 1, 2)


def test_stdin_and_the_exit_codes(cli: Path, tmp_path: Path) -> None:
    data = b"http://a.com/\nHTTP://A.com:80/\nhttp://[bad\n"
    for args in (["dedup", "-q", "-"], ["dedup", "-q", "--fail-on-invalid", "-"]):
        want = run([str(cli), *args], data)
        assert run([sys.executable, "-m", "urikey", *args], data) == want
    assert want[0] == 1  # --fail-on-invalid with an invalid line
    out = tmp_path / "out.txt"
    code, _, _ = run([sys.executable, "-m", "urikey", "dedup", "-q", "-o", str(out), str(SAMPLE)])
    assert code == 0 and out.read_bytes() == run([str(cli), "dedup", "-q", str(SAMPLE)])[1]


def test_the_console_command_is_installed(cli: Path) -> None:
    script = console_script()
    if script is None:
        if os.environ.get("CI"):
            pytest.fail("the urikey console command is not installed beside the interpreter")
        pytest.skip("urikey was not installed with its console command (pip install ./python)")
    assert run([script, "--version"]) == run([str(cli), "--version"])
    assert run([script, "normalize", str(SAMPLE)]) == run([str(cli), "normalize", str(SAMPLE)])


def test_ctrl_c_stops_the_run_with_130_and_no_output(tmp_path: Path) -> None:
    # The input is a pipe that stays open, so the run cannot end by itself.
    out = tmp_path / "out.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "urikey", "dedup", "-q", "-o", str(out), "-"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"http://example.com/\n" * 100_000)
        proc.stdin.flush()
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    assert list(tmp_path.iterdir()) == []


def test_main_takes_arguments(capfd: pytest.CaptureFixture[str]) -> None:
    from urikey.__main__ import main

    assert main(["resolve", "--help"]) == 0
    assert "Resolve" in capfd.readouterr().out
    assert main(["no-such-command"]) == 2
    assert "unrecognized subcommand" in capfd.readouterr().err


def test_ci_tests_the_installed_wheel() -> None:
    # CI installs the wheel it built and runs these tests against it, not
    # against the source tree (`python/urikey`, where `maturin develop` puts
    # the extension).
    import urikey

    where = Path(urikey.__file__).resolve()
    if os.environ.get("CI"):
        assert "site-packages" in where.parts, where
        assert Path(__file__).resolve().parents[1] / "urikey" not in where.parents


def test_submodules_import_on_first_use() -> None:
    # Issue 33, item 4: `import urikey` then `urikey.compat.w3lib...` (as the
    # README shows it), in a fresh interpreter; Scrapy and PySpark stay
    # unimported until their modules are used.
    code = (
        "import sys, urikey\n"
        "assert 'pyspark' not in sys.modules and 'scrapy' not in sys.modules\n"
        "assert urikey.compat.w3lib.canonicalize_url('http://a.com/?b=1&a=2') == "
        "'http://a.com/?a=2&b=1'\n"
        "assert urikey.compat.surt.surt('http://www.a.com/') == 'com,a)/'\n"
        "assert callable(urikey.spark.dedup) and urikey.scrapy.RequestFingerprinter\n"
        "assert {'compat', 'scrapy', 'spark'} <= set(dir(urikey))\n"
        "try:\n    urikey.nope\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit(1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd="/")
    assert done.returncode == 0, done.stderr.decode()
