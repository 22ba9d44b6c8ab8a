"""`.pre-commit-hooks.yaml`: valid by pre-commit's own rules, the three hooks at the stages the
gate needs, each documented in the README."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_python

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
STAGES = {
    "genstamp-scrub": {"post-checkout", "post-merge", "post-rewrite"},
    "genstamp-verify": {"pre-push"},
    "genstamp-bytecode": {"pre-commit"},
}


@pytest.fixture(scope="module")
def hooks() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(MANIFEST.read_text())
    assert isinstance(data, list)
    return {hook["id"]: hook for hook in data}


def test_pre_commit_validates_the_manifest() -> None:
    proc = run_python(ROOT, "-m", "pre_commit", "validate-manifest", str(MANIFEST))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_three_hooks_and_their_stages(hooks: dict[str, dict[str, Any]]) -> None:
    assert set(hooks) == set(STAGES)
    for hook_id, stages in STAGES.items():
        assert set(hooks[hook_id]["stages"]) >= stages, hook_id
    # the restamping and push hooks must not fire on commit; the bytecode hook runs in CI's
    # `pre-commit run --all-files` (the pre-commit stage)
    assert "pre-commit" not in hooks["genstamp-scrub"]["stages"]
    assert "pre-commit" not in hooks["genstamp-verify"]["stages"]
    assert set(hooks["genstamp-verify"]["stages"]) == {"pre-push"}


def test_hooks_that_judge_the_repository_run_without_file_names(
    hooks: dict[str, dict[str, Any]],
) -> None:
    for hook_id in ("genstamp-scrub", "genstamp-verify"):
        assert hooks[hook_id]["always_run"] is True, hook_id
        assert hooks[hook_id]["pass_filenames"] is False, hook_id
    assert hooks["genstamp-bytecode"].get("pass_filenames", True) is True
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].split()[0] == "genstamp"
        assert "minimum_pre_commit_version" in hook


def test_bytecode_hook_matches_bytecode_paths(hooks: dict[str, dict[str, Any]]) -> None:
    import re

    files = re.compile(hooks["genstamp-bytecode"]["files"])
    for path in ("a.pyc", "src/pkg/__pycache__/m.cpython-311.pyc", "__pycache__/x", "b.pyo"):
        assert files.search(path), path
    for path in ("a.py", "src/pycache.py", "docs/__pycache__.md", "my__pycache__/x.py"):
        assert not files.search(path), path


def test_every_hook_is_documented_in_the_readme(hooks: dict[str, dict[str, Any]]) -> None:
    readme = (ROOT / "README.md").read_text() if (ROOT / "README.md").exists() else ""
    missing = [hook_id for hook_id in hooks if hook_id not in readme]
    assert not missing, f"README.md does not mention {', '.join(missing)}"


# -- what the hook environment installs (issue 17, item 7) ---------------------------------------


def test_pytest_is_no_dependency_of_the_hooks() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[<>=!~; \[]", dep)[0].lower() for dep in project["dependencies"]]
    assert "pytest" not in names
    assert project["entry-points"]["pytest11"] == {"genstamp": "genstamp.pytest_plugin"}
    assert any(d.startswith("pytest") for d in project["optional-dependencies"]["test"])


def test_nothing_but_the_plugin_imports_pytest() -> None:
    """Every module but the plugin imports, and `genstamp --help` runs, where pytest cannot."""
    modules = sorted(
        p.stem for p in (ROOT / "src" / "genstamp").glob("*.py") if p.stem not in {"__main__"}
    )
    code = (
        "import sys, importlib\n"
        "sys.modules['pytest'] = sys.modules['_pytest'] = None\n"
        f"for name in {[m for m in modules if m != 'pytest_plugin']!r}:\n"
        "    importlib.import_module('genstamp.' + name)\n"
        "from genstamp.cli import main\n"
        "sys.exit(main(['install', '--help']) + main(['doctor', '--help']))\n"
    )
    proc = run_python(ROOT, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "pytest_plugin" in modules  # the check above did leave something out
