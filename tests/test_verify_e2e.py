"""`genstamp verify` end to end: real git, real pytest, real files. These stories prove the
gathering (genstamp.facts); the rules themselves are table tests over facts (test_rules.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import RunGenstamp, run_pytest

STATE = Path(".git", "genstamp")

# `verify --json` as genstamp printed it before the gate was split into gathering and deciding
# (computed from that code), with the generation id and the evidence path as placeholders.
PINNED = (
    "{\n"
    '  "evidence": "EVIDENCE",\n'
    '  "failures": [\n'
    "    {\n"
    '      "message": "the tests ran on tree debaa3ff383c, work tree is tree ab338ff5'
    'f184: differs in src/calc/__init__.py",\n'
    '      "remedy": "rerun the tests on exactly the tree you are judging (commit, th'
    'en test)",\n'
    '      "rule": "tree-mismatch"\n'
    "    },\n"
    "    {\n"
    '      "message": "src/legacy.pyc is sourceless bytecode (no legacy.py)",\n'
    '      "remedy": "run `genstamp stamp` to scrub bytecode, then rerun the tests",\n'
    '      "rule": "stale-bytecode"\n'
    "    },\n"
    "    {\n"
    '      "message": "1 failed, 0 errors in 1",\n'
    '      "remedy": "fix the failing tests, then rerun",\n'
    '      "rule": "tests-failed"\n'
    "    },\n"
    "    {\n"
    '      "message": "the run covered part of the suite: -k add; 1 deselected",\n'
    '      "remedy": "rerun the whole suite (no -k, -m, node ids, --lf, -x), or set a'
    'llow-partial in [tool.genstamp]",\n'
    '      "rule": "partial-run"\n'
    "    }\n"
    "  ],\n"
    '  "generation": "GEN",\n'
    '  "ok": false,\n'
    '  "targets": [\n'
    "    {\n"
    '      "label": "work tree",\n'
    '      "tree": "ab338ff5f184a3e2465e125b8644cc3578d84101"\n'
    "    }\n"
    "  ],\n"
    '  "tested_tree": "debaa3ff383c608846738026a0788df0485258ef",\n'
    '  "tests": {\n'
    '    "errors": 0,\n'
    '    "failed": 1,\n'
    '    "passed": 0,\n'
    '    "skipped": 0,\n'
    '    "tests": 1\n'
    "  }\n"
    "}\n"
)


def test_verify_json_is_byte_identical_to_the_pinned_output(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A red, partial run on a tree since edited, by a sourceless .pyc: four rules at once."""
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
