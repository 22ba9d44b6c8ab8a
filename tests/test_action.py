"""action.yml: a composite action GitHub can run. Its metadata schema is checked here: the keys
GitHub requires, `runs.using: composite`, a `shell` on every `run` step, documented inputs, and
each `${{ inputs.X }}` naming a declared input. (`.ci/run` also runs actionlint over the
repository's workflow, which uses this action.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def action() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "action.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_required_keys_and_composite_steps() -> None:
    data = action()
    assert {"name", "description", "runs"} <= set(data)
    assert data["runs"]["using"] == "composite"
    steps = data["runs"]["steps"]
    assert steps
    for step in steps:
        assert "run" in step or "uses" in step, step
        if "run" in step:
            assert step.get("shell") == "bash", step
        assert set(step) <= {
            "name",
            "id",
            "if",
            "run",
            "uses",
            "with",
            "env",
            "shell",
            "working-directory",
            "continue-on-error",
        }, step


def test_inputs_are_documented_and_used_as_declared() -> None:
    data = action()
    inputs = data["inputs"]
    for name, spec in inputs.items():
        assert spec.get("description"), name
        assert isinstance(spec.get("default", ""), str), name
    text = (ROOT / "action.yml").read_text()
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used <= set(inputs), used - set(inputs)
    assert used == set(inputs), set(inputs) - used


def test_the_steps_stamp_test_and_verify_in_order() -> None:
    runs = [s.get("run", "") for s in action()["runs"]["steps"]]
    order = [
        next(i for i, r in enumerate(runs) if "genstamp stamp --trigger ci" in r),
        next(i for i, r in enumerate(runs) if "GENSTAMP_TEST_COMMAND" in r),
        next(i for i, r in enumerate(runs) if "genstamp verify --format github" in r),
    ]
    assert order == sorted(order)
    # inputs reach the shell through the environment, never spliced into the script
    for r in runs:
        assert "${{" not in r, r


def test_the_readme_ci_recipe_uses_the_action() -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"uses: [\w./-]*genstamp@", readme), "README's CI recipe uses the action"
