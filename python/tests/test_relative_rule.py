"""One rule for relative references on every dedup entry point (issue 33,
item 2): a URL dump holds absolute URLs, so a relative reference is an
invalid line, unless `base` resolves it or `allow_relative` keys it as it
is. The CLI, `dedup_file`, `Deduplicator`, `unique_mask` and
`urikey.spark.dedup` keep the same lines of one file that mixes valid,
duplicate, invalid, relative, blank and non-UTF-8 lines, under each rule.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import urikey

# Every line's text is distinct, so a kept line names its line number.
MIXED = [
    b"http://a.com/x",
    b"HTTP://A.com:80/x",  # the same key as line 0
    b"/relative/path",  # relative (http://a.com/relative/path with the base)
    b"xxxx",  # relative
    b"http://a.com/caf\xe9",  # not UTF-8: invalid however it is read strictly
    b"http://[bad",  # invalid
    b"",  # blank
    b"http://b.com/",
    b"http://a.com/relative/path",  # line 2's key under the base
    b"xxxx/../xxxx",  # relative; line 3's key under the base (kept apart as it is)
    b"\xff",  # not UTF-8, relative
    b"http://b.com/#frag",
    b"../up",  # relative
]
BASE = "http://a.com/"
RULES: dict[str, dict[str, Any]] = {
    "absolute only (default)": {},
    "base": {"base": BASE},
    "allow_relative": {"allow_relative": True},
}
# What `urikey dedup` keeps, written down once so that a change of the rule
# shows here and not only as a disagreement.
WANT = {
    "absolute only (default)": [0, 7, 8, 11],
    "base": [0, 2, 3, 7, 11, 12],
    "allow_relative": [0, 2, 3, 7, 8, 9, 11, 12],
}


def cli_args(rule: dict[str, Any]) -> list[str]:
    if "base" in rule:
        return ["--base", rule["base"]]
    return ["--allow-relative"] if rule.get("allow_relative") else []


def kept_lines(output: bytes) -> list[int]:
    assert output == b"" or output.endswith(b"\n")
    return sorted(MIXED.index(line) for line in output.split(b"\n")[:-1])


def mask_lines(mask: Any) -> list[int]:
    values = mask if isinstance(mask, list) else mask.to_pylist()
    return [i for i, keep in enumerate(values) if keep]


@pytest.mark.parametrize("rule_name", list(RULES))
def test_every_dedup_entry_point_keeps_the_same_lines(
    rule_name: str, cli: Path, spark: Any, tmp_path: Path
) -> None:
    rule = RULES[rule_name]
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"\n".join(MIXED) + b"\n")
    got: dict[str, list[int]] = {}

    run = subprocess.run(
        [str(cli), "dedup", "-q", "--emit", "original", *cli_args(rule), str(path)],
        check=True,
        capture_output=True,
    )
    got["urikey dedup"] = kept_lines(run.stdout)

    out = tmp_path / "out.txt"
    stats = urikey.dedup_file(path, out, emit="original", **rule)
    got["dedup_file"] = kept_lines(out.read_bytes())
    assert stats["blank"] == 1

    # The lines as bytes (Arrow binary): a list cannot hold the non-UTF-8 ones.
    lines = pa.array(MIXED, pa.binary())
    got["Deduplicator.add"] = mask_lines(urikey.Deduplicator(**rule).add(lines))
    got["Canonicalizer.unique_mask"] = mask_lines(urikey.Canonicalizer().unique_mask(lines, **rule))

    from pyspark.sql import functions as F

    from urikey import spark as uks

    # Spark reads the file as text (invalid UTF-8 passes through as it is);
    # one partition numbers the rows in line order.
    df = spark.read.text(str(path)).coalesce(1).withColumn("n", F.monotonically_increasing_id())
    kept = uks.dedup(df, "value", order_by="n", **rule).collect()
    got["urikey.spark.dedup"] = sorted(r.n for r in kept)

    assert got == {name: WANT[rule_name] for name in got}, rule_name


def test_the_ways_out_are_checked_the_same_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("http://a.com/\n")
    calls = [
        lambda **kw: urikey.dedup_file(path, tmp_path / "o.txt", **kw),
        lambda **kw: urikey.Deduplicator(**kw),
        lambda **kw: urikey.Canonicalizer().unique_mask(["http://a.com/"], **kw),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="not an absolute URI"):
            call(base="/relative")
        with pytest.raises(ValueError, match="together"):
            call(base=BASE, allow_relative=True)
        call(base=None, allow_relative=False)  # the defaults, passed explicitly


def test_keying_calls_still_key_any_reference() -> None:
    # `canonicalize_many` and `fingerprints` are `urikey normalize`, which keys
    # any URI-reference; only the dedup calls take absolute URLs.
    c = urikey.Canonicalizer()
    assert c.canonicalize_many(["/a/%7eb", "xxxx"]) == ["/a/~b", "xxxx"]
    assert None not in c.fingerprints(["/a/%7eb", "xxxx"])
    assert c.unique_mask(["/a/%7eb", "xxxx"]) == [False, False]
    assert c.unique_mask(["/a/%7eb", "/a/~b"], allow_relative=True) == [True, False]
