"""``--help`` says what each command does, every option, the exit codes and the rules; a usage
error points at the help of the command it was made in."""

from __future__ import annotations

import argparse

import pytest

from genstamp.cli import build_parser, main
from genstamp.rules import RULES


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_subcommand_has_a_description_and_every_option_help(name: str) -> None:
    sub = _subcommands()[name]
    assert sub.description and len(sub.description) > 30, name
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"genstamp {name}: {action.option_strings or action.dest} has no help"


def test_root_help_states_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ("0  success", "1  a check refused", "2  usage or environment error"):
        assert code in out


def test_verify_help_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--help"]) == 0
    out = capsys.readouterr().out
    for rule in RULES:
        assert f"\n  {rule} " in out, rule


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["verify", "--bogus"], "genstamp verify --help"),
        (["stamp", "--trigger", "nonsense"], "genstamp stamp --help"),
        (["hook", "nope"], "genstamp hook --help"),
        (["run", "--bogus", "--", "true"], "genstamp run --help"),  # run's own COMMAND words
        (["run", "--bogus"], "genstamp run --help"),
        (["nope"], "genstamp --help"),
        (["--bogus"], "genstamp --help"),
    ],
)
def test_a_usage_error_points_at_its_commands_help(
    argv: list[str], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("genstamp: ")
    assert f"(hint: see `{where}`)" in err
