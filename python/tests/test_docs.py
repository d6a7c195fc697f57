"""The Python code blocks of the documentation run, and say what they print
(issue 33, item 7).

Every ```python block of README.md, python/README.md and docs/*.md runs, in
order, one namespace per document, in a scratch directory that holds the files
the examples read (`crawl.csv`, `crawl.parquet`, `part-1.txt.gz`,
`part-2.txt`, `frontier/`). A top-level expression followed by a comment that
is a Python literal is an expected value, checked like a doctest:

    urikey.canonicalize("HTTP://A.com")    # 'http://a.com/'

Names the examples take as given are defined first: `urls`, `url`, `batch`,
`batches`, `spark` (a real local Spark, only for documents that use it) and
`redis_url` (the URL of a real, empty Redis server on loopback, likewise).
A block after a line `<!-- not run: reason -->` is skipped, with its reason.
"""

from __future__ import annotations

import ast
import gzip
import io
import re
import tokenize
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

DOCS = [ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!-- not run: (.+?) -->\s*$")
URLS = [
    "HTTP://Example.COM:80/a/./b/../c?utm_source=x&b=2&a=1#top",
    "http://example.com/a/c?a=1&b=2",
    "http://[bad",
    "https://www.example.org/",
]


def blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, reason not to run it) of each Python block of ``path``."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        out.append((line, match.group(1), skip.group(1) if skip else None))
    return out


def expectations(code: str) -> dict[int, Any]:
    """The literal comment at the end of each line that has one, by line."""
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            text = tok.string.lstrip("#").strip()
            try:
                found[tok.start[0]] = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
    return found


def plain(value: Any) -> Any:
    """A batch result as a list, to compare with a literal."""
    for method in ("to_pylist", "to_list", "tolist"):
        if hasattr(value, method) and not isinstance(value, (list, tuple, str, bytes)):
            return getattr(value, method)()
    return value


def run_block(code: str, namespace: dict[str, Any], where: str) -> None:
    tree = ast.parse(code, where)
    expected = expectations(code)
    for node in tree.body:
        end = node.end_lineno or node.lineno
        if isinstance(node, ast.Expr) and end in expected:
            value = eval(compile(ast.Expression(node.value), where, "eval"), namespace)
            assert plain(value) == expected[end], f"{where}, line {end}: {ast.unparse(node)}"
        else:
            exec(compile(ast.Module([node], []), where, "exec"), namespace)


def fixtures(directory: Path) -> None:
    """The files the examples read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = "".join(f"{u}\n" for u in URLS if "[bad" not in u)
    (directory / "crawl.csv").write_text("url\n" + lines)
    pq.write_table(pa.table({"url": URLS}), directory / "crawl.parquet")
    with gzip.open(directory / "part-1.txt.gz", "wt") as f:
        f.write(lines)
    (directory / "part-2.txt").write_text(lines + "http://b.com/x\nnot a url\n")
    (directory / "frontier").mkdir()
    pq.write_table(
        pa.table({"url": URLS, "fetch_time": pa.array(range(len(URLS)), pa.int64())}),
        directory / "frontier" / "part-0.parquet",
    )


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    found = blocks(path)
    if not found:
        pytest.skip("no Python blocks")
    monkeypatch.chdir(tmp_path)
    fixtures(tmp_path)
    namespace: dict[str, Any] = {
        "__name__": "__doc__",
        "urls": list(URLS),
        "url": URLS[0],
        "batch": URLS[:2],
        "batches": [URLS[:2], URLS[1:]],
    }
    if any("redis_url" in code for _, code, skip in found if skip is None):
        # A real Redis server on loopback, emptied for this document.
        namespace["redis_url"] = request.getfixturevalue("redis_url")
    if any(re.search(r"\bspark\.", code) for _, code, skip in found if skip is None):
        namespace["spark"] = session = request.getfixturevalue("spark")
        # The JVM resolves relative paths against its own working directory,
        # the one it started in (another test's, when that test started it).
        jvm = session._jvm
        fs = jvm.org.apache.hadoop.fs.FileSystem.get(session._jsc.hadoopConfiguration())
        before = fs.getWorkingDirectory()
        fs.setWorkingDirectory(jvm.org.apache.hadoop.fs.Path(str(tmp_path)))
        request.addfinalizer(lambda: fs.setWorkingDirectory(before))
    ran = 0
    for line, code, skip in found:
        if skip is not None:
            continue
        run_block(code, namespace, f"{path.relative_to(ROOT)}:{line}")
        ran += 1
    assert ran > 0, "every block is skipped"


def test_scale_out_has_a_runnable_example() -> None:
    assert blocks(ROOT / "docs" / "scale-out.md"), "docs/scale-out.md has no Python example"
