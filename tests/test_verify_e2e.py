"""`genstamp verify` end to end: real git, real pytest, real files. These stories prove the
gathering (genstamp.facts); the rules themselves are table tests over facts (test_rules.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import RunGenstamp, run_pytest

STATE = Path(".git", "genstamp")

# `verify --json` as genstamp printed it before the gate was split into gathering and deciding
# (computed from that code), with the generation id and the evidence path as placeholders.
PINNED = """\
{
  "evidence": "EVIDENCE",
  "failures": [
    {
      "message": "the tests ran on tree debaa3ff383c, work tree is tree ab338ff5f184: differs in src/calc/__init__.py",
      "remedy": "rerun the tests on exactly the tree you are judging (commit, then test)",
      "rule": "tree-mismatch"
    },
    {
      "message": "src/legacy.pyc is sourceless bytecode (no legacy.py)",
      "remedy": "run `genstamp stamp` to scrub bytecode, then rerun the tests",
      "rule": "stale-bytecode"
    },
    {
      "message": "1 failed, 0 errors in 1",
      "remedy": "fix the failing tests, then rerun",
      "rule": "tests-failed"
    },
    {
      "message": "the run covered part of the suite: -k add; 1 deselected",
      "remedy": "rerun the whole suite (no -k, -m, node ids, --lf, -x), or set allow-partial in [tool.genstamp]",
      "rule": "partial-run"
    }
  ],
  "generation": "GEN",
  "ok": false,
  "targets": [
    {
      "label": "work tree",
      "tree": "ab338ff5f184a3e2465e125b8644cc3578d84101"
    }
  ],
  "tested_tree": "debaa3ff383c608846738026a0788df0485258ef",
  "tests": {
    "errors": 0,
    "failed": 1,
    "passed": 0,
    "skipped": 0,
    "tests": 1
  }
}
"""


def test_verify_json_is_byte_identical_to_the_pinned_output(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A red, partial run on a tree since edited, beside a sourceless .pyc: several rules at once."""
    test = project / "tests" / "test_calc.py"
    test.write_text(test.read_text().replace("== 5", "== 6"))
    code, out, err = genstamp("-C", project, "stamp", "--json")
    assert code == 0, err
    gen = json.loads(out)["generation"]["id"]
    proc = run_pytest(project, "-k", "add")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    (project / "src" / "legacy.pyc").write_bytes(b"\0" * 16)
    code, out, _ = genstamp("-C", project, "verify", "--json")
    assert code == 1
    evidence = str(project / STATE / "evidence.xml")
    text = out.replace(gen, "GEN").replace(json.dumps(evidence)[1:-1], "EVIDENCE")
    assert text == PINNED, text
