"""``[tool.genstamp]`` in the checkout's pyproject.toml: parsed, and refused by key when wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunGenstamp, commit_all

from genstamp import config, paths
from genstamp.errors import GenstampError


def write(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(text)
    return root


def test_every_key_is_parsed(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        "[project]\nname = 'x'\n\n[tool.genstamp]\n"
        'evidence = "build/evidence.xml"\n'
        'packages = ["calc", "calc_extra"]\n'
        "allow-partial = true\n"
        "scrub-venvs = true\n"
        'generated = ["src/calc/_version.py", "build/**/*.py"]\n',
    )
    got = config.load(root)
    assert got == config.Config(
        evidence=root / "build" / "evidence.xml",
        packages=("calc", "calc_extra"),
        allow_partial=True,
        scrub_venvs=True,
        generated=("src/calc/_version.py", "build/**/*.py"),
        declared=("src/calc/_version.py", "build/**/*.py"),  # (none of them the build's)
    )


@pytest.mark.parametrize(
    "value",
    ['"src/_version.py"', "[1]", '[""]', '["/abs/_version.py"]'],
    ids=["not-a-list", "not-strings", "empty-glob", "absolute"],
)
def test_generated_must_be_relative_globs(tmp_path: Path, value: str) -> None:
    root = write(tmp_path, f"[tool.genstamp]\ngenerated = {value}\n")
    with pytest.raises(GenstampError, match=r"tool\.genstamp\.generated must be a"):
        config.load(root)


def test_absolute_evidence_path_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "ev.xml"
    root = write(tmp_path / "repo", f'[tool.genstamp]\nevidence = "{target.as_posix()}"\n')
    assert config.load(root).evidence == target


@pytest.mark.parametrize(
    "text",
    [None, "", "[project]\nname = 'x'\n", "[tool.other]\nx = 1\n", "[tool.genstamp]\n"],
    ids=["no-file", "empty", "no-tool", "other-tool", "empty-section"],
)
def test_defaults(tmp_path: Path, text: str | None) -> None:
    if text is not None:
        write(tmp_path, text)
    assert config.load(tmp_path) == config.Config()
    assert config.Config().allow_partial is False


def test_tool_that_is_not_a_table_is_not_a_crash(tmp_path: Path) -> None:
    write(tmp_path, 'tool = "not a table"\n')
    assert config.load(tmp_path) == config.Config()


def test_unknown_key_is_named(tmp_path: Path) -> None:
    write(tmp_path, "[tool.genstamp]\nallow_partial = true\n")
    with pytest.raises(GenstampError) as info:
        config.load(tmp_path)
    assert "tool.genstamp.allow_partial" in info.value.message
    assert "allow-partial" in info.value.remedy  # the keys it knows, spelled right


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("evidence", "1"),
        ("evidence", '["a"]'),
        ("packages", '"calc"'),
        ("packages", "[1]"),
        ("packages", '[""]'),
        ("allow-partial", '"yes"'),
        ("allow-partial", "1"),
        ("scrub-venvs", '"true"'),
        ("scrub-venvs", "0"),
        # a NUL no path or argument can hold (a traceback from every command before)
        ("evidence", '"ev\\u0000.xml"'),
        ("generated", '["a\\u0000"]'),
        ("attestation-signers", '"signers\\u0000"'),
    ],
)
def test_wrong_type_is_named(tmp_path: Path, key: str, value: str) -> None:
    write(tmp_path, f"[tool.genstamp]\n{key} = {value}\n")
    with pytest.raises(GenstampError) as info:
        config.load(tmp_path)
    assert f"tool.genstamp.{key}" in info.value.message
    assert str(tmp_path / "pyproject.toml") in info.value.message


def test_a_file_nested_deeper_than_the_parser_goes_is_named(tmp_path: Path) -> None:
    """An array nested 600 deep: tomllib raises RecursionError, which was a traceback from
    every command (status, verify, stamp, the pre-push hook)."""
    write(tmp_path, "x = " + "[" * 600 + "]" * 600 + "\n")
    with pytest.raises(GenstampError, match="is not valid TOML"):
        config.load(tmp_path)


def test_section_that_is_not_a_table(tmp_path: Path) -> None:
    write(tmp_path, "[tool]\ngenstamp = 5\n")
    with pytest.raises(GenstampError, match=r"\[tool\.genstamp\] must be a table"):
        config.load(tmp_path)


@pytest.mark.parametrize("raw", [b"[tool.genstamp\n", b"\xff\xfe[tool]\n"], ids=["toml", "utf8"])
def test_unreadable_toml_names_the_file(tmp_path: Path, raw: bytes) -> None:
    (tmp_path / "pyproject.toml").write_bytes(raw)
    with pytest.raises(GenstampError, match="not valid TOML") as info:
        config.load(tmp_path)
    assert str(tmp_path / "pyproject.toml") in info.value.message


def test_pyproject_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").mkdir()
    with pytest.raises(GenstampError, match="cannot read"):
        config.load(tmp_path)


def test_cli_names_the_bad_key_in_one_line(project: Path, genstamp: RunGenstamp) -> None:
    """End to end: the command refuses with exit 2 and one `genstamp:` line naming the key."""
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text() + "\n[tool.genstamp]\npackages = 'calc'\n"
    )
    commit_all(project, "bad config")
    code, out, err = genstamp("-C", project, "stamp")
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("genstamp: ")
    assert "tool.genstamp.packages" in lines[0]


@pytest.mark.parametrize(
    ("build", "found"),
    [
        (
            '[tool.setuptools_scm]\nversion_file = "src/calc/_version.py"\n',
            ["src/calc/_version.py"],
        ),
        ('[tool.setuptools_scm]\nwrite_to = "./calc/_version.py"\n', ["calc/_version.py"]),
        ('[tool.hatch.build.hooks.vcs]\nversion-file = "calc/_v.py"\n', ["calc/_v.py"]),
        ('[tool.hatch.build.targets.sdist.hooks.vcs]\nversion-file = "c/_v.py"\n', ["c/_v.py"]),
        ('[tool.vcs-versioning]\nwrite_to = "calc/_v.py"\n', ["calc/_v.py"]),
        ('[tool.pdm.version]\nsource = "scm"\nwrite_to = "calc/_v.py"\n', ["calc/_v.py"]),
        (
            '[tool.pdm.build]\npackage-dir = "lib"\n[tool.pdm.version]\nsource = "scm"\n'
            'write_to = "calc/_v.py"\n',
            ["lib/calc/_v.py"],
        ),
        ('[tool.pdm.version]\nsource = "file"\npath = "calc/_v.py"\n', []),  # read, not written
        ('[tool.setuptools_scm]\nversion_file = "../elsewhere.py"\n', []),
        ("[tool.setuptools_scm]\n", []),
    ],
)
def test_the_builds_version_file_is_generated(tmp_path: Path, build: str, found: list[str]) -> None:
    root = write(tmp_path, '[tool.genstamp]\ngenerated = ["build/**/*.py"]\n' + build)
    loaded = config.load(root)
    assert loaded.generated == ("build/**/*.py", *found)
    assert loaded.built == tuple(found)  # what the build writes; not every declared glob


@pytest.mark.parametrize(
    ("pyproject", "setup_cfg", "found"),
    [
        ("", "[versioneer]\nVCS = git\nversionfile_source = src/calc/_version.py\n", True),
        ('[tool.versioneer]\nversionfile_source = "src/calc/_version.py"\n', None, True),
        ("", "[versioneer]\nversionfile_source = ../calc/_version.py\n", False),
        ("", "[metadata]\nname = calc\n", False),
    ],
)
def test_versioneers_version_file_is_the_builds(
    tmp_path: Path, pyproject: str, setup_cfg: str | None, found: bool
) -> None:
    """versioneer rewrites its version module in the installed package: the build's."""
    root = write(tmp_path, pyproject)
    if setup_cfg is not None:
        (root / "setup.cfg").write_text(setup_cfg)
    loaded = config.load(root)
    assert loaded.generated == loaded.built == (("src/calc/_version.py",) if found else ())


@pytest.mark.parametrize(
    ("setup_py", "found"),
    [
        ('setup(use_scm_version={"write_to": "calc/_version.py"})\n', ["calc/_version.py"]),
        ('setup(use_scm_version={"version_file": "./src/calc/_v.py"})\n', ["src/calc/_v.py"]),
        ("setup(use_scm_version=True)\n", []),
        ('SCM = {"write_to": "calc/_version.py"}\nsetup(use_scm_version=SCM)\n', []),
        ('setup(use_scm_version={"write_to": "../calc/_version.py"})\n', []),
        ("setup(use_scm_version={\n", []),  # not Python: nothing read, nothing raised
    ],
)
@pytest.mark.parametrize("pyproject", [True, False])
def test_setuptools_scms_version_file_named_in_setup_py_is_generated(
    tmp_path: Path, setup_py: str, found: list[str], pyproject: bool
) -> None:
    """``setup.py``'s ``use_scm_version`` literal names the file setuptools-scm writes (read,
    never run), with or without a pyproject.toml beside it."""
    root = write(tmp_path, '[project]\nname = "calc"\n') if pyproject else tmp_path
    (root / "setup.py").write_text("from setuptools import setup\n\n" + setup_py)
    loaded = config.load(root)
    assert loaded.generated == loaded.built == tuple(found)


@pytest.mark.parametrize(
    ("given", "folders"),
    [
        ('["./svc_a", "svc_b/"]', ("svc_a", "svc_b")),  # as the tree names them
        ('[".", "svc_a"]', ("", "svc_a")),  # the top's suite and a subproject's
        ('["svc_a", "./svc_a"]', ("svc_a",)),  # one folder, once
        ('["/svc_a"]', ("svc_a",)),
        ('["../elsewhere"]', None),
        ('["a/../../x"]', None),
        ('[""]', None),
        ('"svc_a"', None),  # not a list
    ],
)
def test_suites_are_folders_of_the_tree(
    tmp_path: Path, given: str, folders: tuple[str, ...] | None
) -> None:
    """``suites = ["./svc_a"]`` named no folder the listing of the tree spells so: the suite
    held no file, and a run of the others was accepted as complete."""
    root = write(tmp_path, f"[tool.genstamp]\nsuites = {given}\n")
    if folders is None:
        with pytest.raises(GenstampError, match=r"tool\.genstamp\.suites must be a list"):
            config.load(root)
    else:
        assert config.load(root).suites == folders


def test_a_subprojects_version_file_is_generated_below_its_folder(tmp_path: Path) -> None:
    root = write(tmp_path, '[tool.genstamp]\nsuites = ["svc_a", "svc_b"]\n')
    (root / "svc_a").mkdir()
    (root / "svc_a" / "pyproject.toml").write_text(
        '[tool.setuptools_scm]\nversion_file = "src/a/_version.py"\n'
    )
    (root / "svc_b").mkdir()
    (root / "svc_b" / "pyproject.toml").write_text("not toml [\n")  # not genstamp's to refuse
    assert config.load(root).generated == ("svc_a/src/a/_version.py",)


def test_the_version_file_of_a_project_below_the_top_is_generated(tmp_path: Path) -> None:
    """setuptools-scm's usual set-up in a monorepo's library (`root = "../.."`): its
    git-ignored version file is the build's, as the top project's is."""
    root = write(tmp_path, '[project]\nname = "top"\n')
    lib = root / "packages" / "testing"
    lib.mkdir(parents=True)
    (lib / "pyproject.toml").write_text(
        '[tool.setuptools_scm]\nroot = "../.."\nversion_file = "src/helpers/_version.py"\n'
    )
    settings = config.load(root)
    assert settings.generated == ()  # the top's configuration, as every reader has it
    found = config.with_projects_below(settings, root).generated
    assert found == ("packages/testing/src/helpers/_version.py",)


@pytest.mark.parametrize(
    ("path", "globs", "found"),
    [
        ("src/calc/_version.py", ["src/calc/_version.py"], True),
        ("build/lib/calc/x.py", ["build/**/*.py"], True),
        ("src/calc/_version.py", ["src/*.py"], False),  # `*` stays within a folder
        ("dist/app.pyz/app/main.py", ["dist/*.pyz"], True),  # a module of a generated archive
        ("dist/app.pyz/app/main.py", ["dist/*.whl"], False),
        ("dist/app.pyz/app/main.py", ["app/main.py"], False),  # the archive's path, not inside
    ],
)
def test_generated_globs(path: str, globs: list[str], found: bool) -> None:
    assert paths.generated(path, globs) is found


@pytest.mark.parametrize(
    "text",
    [
        'allow-partial = "yes"',
        "require-clean-room = 1",
        "evidence = 3",
        'packages = "calc"',
        "packages = [1]",
        'generated = ["/abs/*.py"]',
        'suites = ["../x"]',
        'clean-install = [""]',
    ],
)
def test_a_setting_of_the_wrong_shape_is_one_line_with_a_hint(tmp_path: Path, text: str) -> None:
    """Every refusal of a setting says how to write it (README: every error has a hint)."""
    root = write(tmp_path, f"[tool.genstamp]\n{text}\n")
    with pytest.raises(GenstampError) as info:
        config.load(root)
    assert info.value.remedy, str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("table", "globs"),
    [
        ("enable = true\n", ["*.py", "*/__init__.py", "*/__version__.py", "*/_version.py"]),
        ("enable = false\n", []),
        (
            'enable = true\n[tool.poetry-dynamic-versioning.substitution]\nfiles = ["v.py"]\n'
            '[[tool.poetry-dynamic-versioning.substitution.folders]]\npath = "src"\n',
            ["v.py", "src/v.py"],  # the top always, and each folder, with the files
        ),
        (
            "enable = true\n[[tool.poetry-dynamic-versioning.substitution.folders]]\n"
            'path = "src"\nfiles = ["pkg/version.py"]\n',  # a folder's own files, not those
            ["*.py", "*/__init__.py", "*/__version__.py", "*/_version.py", "src/pkg/version.py"],
        ),
    ],
)
def test_the_files_poetry_dynamic_versioning_substitutes(
    tmp_path: Path, table: str, globs: list[str]
) -> None:
    """poetry-dynamic-versioning rewrites the version line in the files its substitution
    names, as it reads its settings: at the top always, and in each of its folders with the
    folder's own files where it names some (they were ignored, and the top left out)."""
    root = write(tmp_path, f"[tool.poetry-dynamic-versioning]\n{table}")
    assert list(config.load(root).version_lines) == globs
