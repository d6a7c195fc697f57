"""Every public callable has a docstring with its arguments, what it returns,
what it raises and an example, and every example runs (issue 33, item 6).

`help(urikey.Canonicalizer.canonicalize)` is the first documentation a Python
user reads. The examples run here as doctests (the `urikey.spark` ones in
`test_spark.py`, which has a Spark session); an example that names
`redis_url` gets the URL of a real Redis server, emptied before it.
"""

from __future__ import annotations

import doctest
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import urikey
import urikey.__main__
import urikey.compat.surt
import urikey.compat.w3lib
import urikey.scrapy
import urikey.spark

MODULES = [
    urikey,
    urikey.compat,
    urikey.compat.w3lib,
    urikey.compat.surt,
    urikey.scrapy,
    urikey.spark,
    urikey.__main__,
]
# Callables that raise nothing of their own.
NO_RAISES: set[str] = set()


def public_objects() -> Iterator[tuple[str, Any]]:
    """(name, object) for every public function, class, method and property,
    each once, under the name users import it by."""
    seen: set[int] = set()
    for module in MODULES:
        exported = getattr(module, "__all__", None)
        names = exported or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or name == "__version__" or id(obj) in seen:
                continue
            if exported is None and getattr(obj, "__module__", None) != module.__name__:
                continue  # imported from elsewhere
            seen.add(id(obj))
            qual = f"{module.__name__}.{name}"
            yield qual, obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    yield f"{qual}.{attr}", getattr(obj, attr, member)


def test_the_list_covers_the_package() -> None:
    names = {name for name, _ in public_objects()}
    for want in [
        "urikey.Canonicalizer.canonicalize",
        "urikey.Canonicalizer.canonicalize_many",
        "urikey.Canonicalizer.fingerprint",
        "urikey.Canonicalizer.fingerprints",
        "urikey.Canonicalizer.invalid_reasons",
        "urikey.Canonicalizer.unique_mask",
        "urikey.Canonicalizer.profile",
        "urikey.Deduplicator.add",
        "urikey.URI.host",
        "urikey.URI.port_number",
        "urikey.dedup_file",
        "urikey.spark.dedup",
        "urikey.scrapy.RequestFingerprinter.fingerprint",
        "urikey.compat.w3lib.canonicalize_url",
        "urikey.compat.surt.surt",
        "urikey.__main__.main",
    ]:
        assert want in names


def _has_arguments(obj: Any) -> bool:
    try:
        params = list(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        # Only a class without a constructor (`URI`, made by `parse`) has none.
        return not inspect.isclass(obj)
    return bool([p for p in params if p not in ("self", "cls")])


@pytest.mark.parametrize(("name", "obj"), list(public_objects()), ids=lambda v: str(v))
def test_every_public_callable_is_documented(name: str, obj: Any) -> None:
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 20, f"{name} has no docstring"
    if isinstance(obj, property) or type(obj).__name__ == "getset_descriptor":
        return  # a property: one sentence
    sections = ["Example:"]
    if not inspect.isclass(obj):
        sections.append("Returns:")
        if name not in NO_RAISES:
            sections.append("Raises:")
    if _has_arguments(obj):
        sections.append("Args:")
    missing = [s for s in sections if s not in doc]
    assert not missing, f"{name}: its docstring has no {', '.join(missing)}"


@pytest.mark.parametrize(
    ("name", "obj"),
    [(n, o) for n, o in public_objects() if not n.startswith("urikey.spark.")],
    ids=lambda v: str(v),
)
def test_docstring_examples_run(
    name: str, obj: Any, tmp_path: Any, monkeypatch: Any, request: pytest.FixtureRequest
) -> None:
    doc = inspect.getdoc(obj) or ""
    monkeypatch.chdir(tmp_path)
    parser = doctest.DocTestParser()
    globs = {"urikey": urikey, **vars(inspect.getmodule(obj) or urikey)}
    # Examples that talk to Redis get a real, empty server's URL.
    if "redis_url" in doc:
        globs["redis_url"] = request.getfixturevalue("redis_url")
    test = parser.get_doctest(doc, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} example(s) failed (output above)"
