"""The checkout's import roots, found from the tree and the project's metadata."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from genstamp import loads, roots


def make(base: Path, *files: str) -> None:
    for rel in files:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text("")


def test_defaults_root_and_src(tmp_path: Path) -> None:
    make(
        tmp_path,
        "pkg/__init__.py",
        "src/pkg2/sub.py",  # a namespace package: no __init__.py
        "src/deep/a/b/c.py",  # python files at some depth
        "mod.py",
        "setup.py",
        "conftest.py",
        "tests/test_x.py",
        "docs/conf.py",
        "build/lib/pkg/__init__.py",
        ".venv/lib/site.py",
        "venv2/pyvenv.cfg",
        "venv2/lib/x.py",
        "empty/readme.txt",
    )
    src = str((tmp_path / "src").resolve())
    top = str(tmp_path.resolve())
    assert roots.find(tmp_path) == {
        "pkg": top,
        "mod": top,
        "pkg2": src,
        "deep": src,
    }


def test_projects_below_the_top_provide_their_roots(tmp_path: Path) -> None:
    """A monorepo's libraries and a project kept in a subfolder are the checkout's; test and
    example projects, vendored code, submodules and environments are not."""
    make(
        tmp_path,
        "libs/common/pyproject.toml",
        "libs/common/src/common/__init__.py",
        "services/api/setup.py",
        "services/api/api/__init__.py",
        "python/setup.cfg",
        "python/binding.py",
        "tests/fixtures/proj/pyproject.toml",
        "tests/fixtures/proj/fixturepkg/__init__.py",
        "vendor/requests/setup.py",
        "vendor/requests/requests/__init__.py",
        "sub/.git",
        "sub/pyproject.toml",
        "sub/subpkg/__init__.py",
        ".venv/lib/pyproject.toml",
        "a/b/c/d/pyproject.toml",
        "a/b/c/d/toodeep/__init__.py",
        "tools/codegen/pyproject.toml",
        "tools/codegen/codegen/__init__.py",
        "samples/demo/setup.py",
        "samples/demo/demo/__init__.py",
        "{{cookiecutter.slug}}/pyproject.toml",
        "{{cookiecutter.slug}}/main.py",
        "services/worker/setup.cfg",
        "services/worker/queue.py",  # named like the standard library's: never what loads
        "services/worker/worker.py",
        "libs/alpha/pyproject.toml",
        "libs/alpha/acme/alpha/__init__.py",  # one namespace package, two projects
        "libs/beta/pyproject.toml",
        "libs/beta/acme/beta/__init__.py",
        "packages/testing/pyproject.toml",  # a library of test helpers: code
        "packages/testing/helpers/__init__.py",
    )
    found = roots.find(tmp_path)
    at = {
        name: Path(folder).relative_to(tmp_path.resolve()).as_posix()
        for name, folder in found.items()
    }
    assert at["common"] == "libs/common/src"
    assert at["api"] == "services/api"
    assert at["binding"] == "python"
    assert at["codegen"] == "tools/codegen"
    assert at["worker"] == "services/worker"
    assert at["helpers"] == "packages/testing"
    gone = {"fixturepkg", "requests", "subpkg", "toodeep", "demo", "main", "queue", "acme"}
    assert not gone & set(at), at
    assert [p.relative_to(tmp_path).as_posix() for p in roots.projects(tmp_path)] == [
        "python",
        "libs/alpha",
        "libs/beta",
        "libs/common",
        "packages/testing",
        "services/api",
        "services/worker",
        "tools/codegen",
    ]


@pytest.mark.parametrize("deep", [False, True])
def test_a_submodules_project_is_the_checkouts_a_nested_clone_is_not(
    tmp_path: Path, deep: bool
) -> None:
    """A folder holding a .git is another repository's: a nested clone (not the checkout's
    code), unless .gitmodules names it, a submodule, whose commit the tree records."""
    at = "a/b/" if deep else "libs/"  # the deepest level is asked by name, not listed
    make(
        tmp_path,
        f"{at}dep/.git",
        f"{at}dep/pyproject.toml",
        f"{at}dep/depx/__init__.py",
        f"{at}kept/.git",
        f"{at}kept/pyproject.toml",
        f"{at}kept/keptpkg/__init__.py",
    )
    assert not {"depx", "keptpkg"} & set(roots.find(tmp_path))
    (tmp_path / ".gitmodules").write_text(f'[submodule "dep"]\n\tpath = {at}dep\n\turl = x\n')
    found = roots.find(tmp_path)
    assert "depx" in found and "keptpkg" not in found, found
    assert [p.relative_to(tmp_path).as_posix() for p in roots.projects(tmp_path)] == [f"{at}dep"]


def test_projects_at_the_deepest_level_are_told_by_their_metadata_files(tmp_path: Path) -> None:
    """Three folders down, a project is a folder holding a metadata file (a link to one too);
    a folder or a dangling link of that name is none, nor is an environment or a submodule
    holding one."""
    make(tmp_path, "a/b/toml/pyproject.toml", "a/b/py/setup.py", "a/b/cfg/setup.cfg")
    make(
        tmp_path, "a/b/env/pyproject.toml", "a/b/env/pyvenv.cfg", "a/b/sub/setup.py", "a/b/sub/.git"
    )
    (tmp_path / "a/b/folder/pyproject.toml").mkdir(parents=True)
    (tmp_path / "a/b/dangling").mkdir()
    (tmp_path / "a/b/dangling/setup.py").symlink_to(tmp_path / "nowhere")
    (tmp_path / "a/b/linked").mkdir()
    (tmp_path / "a/b/linked/setup.cfg").symlink_to(tmp_path / "a/b/cfg/setup.cfg")
    found = [p.relative_to(tmp_path).as_posix() for p in roots.projects(tmp_path)]
    assert found == ["a/b/cfg", "a/b/linked", "a/b/py", "a/b/toml"]


def test_a_folder_python_imports_from_elsewhere_is_no_root(tmp_path: Path) -> None:
    """With no ``__init__.py``, a folder named like a module of the standard library (research
    scripts in ``code/``) or an installed regular package (alembic's ``alembic/``; here
    pluggy, which pytest brings) is no import root: Python imports theirs under that name. The
    same folders as regular packages, and a namespace folder no other module names, are."""
    make(tmp_path, "code/analysis.py", "pluggy/env.py", "email/x.py", "shared_ns/util.py")
    make(tmp_path / "regular", "code/__init__.py", "pluggy/__init__.py")
    top = str(tmp_path.resolve())
    assert roots.find(tmp_path) == {"shared_ns": top, "regular": top}
    assert set(roots.find(tmp_path / "regular")) == {"code", "pluggy"}
    # the project's own name: an older install of it is what would load (foreign-origin)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "Pluggy"\n')
    assert roots.find(tmp_path) == {"shared_ns": top, "regular": top, "pluggy": top}


@pytest.mark.parametrize(
    "config, folder",
    [
        ('[tool.setuptools.package-dir]\n"" = "lib"\n', "lib"),
        ("[tool.setuptools.packages.find]\nwhere = ['code']\n", "code"),
        ("[tool.hatch.build.targets.wheel]\npackages = ['python/calc']\n", "python"),
        ('[tool.poetry]\npackages = [{include = "calc", from = "source"}]\n', "source"),
        ('[tool.poetry]\npackages = [{include = "calc/**/*.py", from = "source"}]\n', "source"),
        (  # hatch's sources: a prefix taken off, with only-include naming the package
            '[tool.hatch.build.targets.wheel]\nonly-include = ["code/calc"]\nsources = ["code"]\n',
            "code",
        ),
        ('[tool.hatch.build.targets.wheel.sources]\n"code" = ""\n', "code"),
        ('[tool.hatch.build]\nsources = ["code"]\n', "code"),
        ('[tool.scikit-build]\nwheel.packages = ["python/calc"]\n', "python"),
        ('[tool.scikit-build.wheel.packages]\ncalc = "python/calc"\n', "python"),
        (
            '[build-system]\nbuild-backend = "scikit_build_core.build"\n'
            '[project]\nname = "calc"\n',  # its auto-discovery: src/, python/, the root
            "python",
        ),
    ],
    ids=[
        "setuptools-package-dir",
        "setuptools-find",
        "hatch",
        "poetry",
        "poetry-glob",
        "hatch-sources",
        "hatch-sources-table",
        "hatch-sources-of-the-build",
        "scikit-build",
        "scikit-build-table",
        "scikit-build-discovered",
    ],
)
def test_declared_package_folders(tmp_path: Path, config: str, folder: str) -> None:
    make(tmp_path, f"{folder}/calc/__init__.py")
    (tmp_path / "pyproject.toml").write_text(config)
    assert roots.find(tmp_path)["calc"] == str((tmp_path / folder).resolve())


def test_setup_cfg(tmp_path: Path) -> None:
    make(tmp_path, "lib/calc/__init__.py")
    (tmp_path / "setup.cfg").write_text("[options]\npackage_dir =\n    =lib\n")
    assert roots.find(tmp_path)["calc"] == str((tmp_path / "lib").resolve())


@pytest.mark.parametrize(
    ("setup_py", "found"),
    [
        ('setup(package_dir={"": "lib"})', True),
        ("setup(packages=find_packages('lib', exclude=['tests']))", True),
        ('setup(packages=setuptools.find_namespace_packages(where="lib"))', True),
        ("setup(package_dir={'': os.environ['WHERE']})", False),  # not a literal: not run
        ("setup(package_dir={'': 'lib'}", False),  # not Python: nothing, and no traceback
        ("open('ran', 'w')\nsetup(package_dir={'': 'lib'})", True),  # read, never run
    ],
)
def test_setup_py_is_read_not_run(
    tmp_path: Path, setup_py: str, found: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(tmp_path, "lib/calc/__init__.py")
    (tmp_path / "setup.py").write_text(f"import os, setuptools\n{setup_py}\n")
    monkeypatch.chdir(tmp_path)
    assert ("calc" in roots.find(tmp_path)) is found
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    ("files", "config", "found"),
    [
        (
            ["tools/__init__.py"],
            ("pyproject.toml", '[tool.setuptools]\npackages = ["tools"]\n'),
            {"tools"},
        ),
        (
            ["src/scripts/__init__.py"],
            (
                "pyproject.toml",
                '[tool.setuptools]\npackages = ["scripts", "scripts.sub"]\n'
                'package-dir = {"" = "src"}\n',
            ),
            {"scripts"},
        ),
        (
            ["tasks.py", "testutils.py"],
            ("pyproject.toml", '[tool.setuptools]\npy-modules = ["tasks", "testutils"]\n'),
            {"tasks", "testutils"},
        ),
        (
            ["src/bench/__init__.py"],
            ("pyproject.toml", '[tool.hatch.build.targets.wheel]\npackages = ["src/bench"]\n'),
            {"bench"},
        ),
        (
            ["testing/__init__.py"],
            ("pyproject.toml", '[tool.poetry]\npackages = [{include = "testing"}]\n'),
            {"testing"},
        ),
        (["manage.py"], ("pyproject.toml", '[tool.flit.module]\nname = "manage"\n'), {"manage"}),
        (
            ["tools/__init__.py", "setup.py"],
            ("setup.cfg", "[options]\npackages = tools\npy_modules = setup\n"),
            {"tools"},
        ),
        (
            ["tools/__init__.py"],
            ("setup.py", "from setuptools import setup\nsetup(packages=['tools'])\n"),
            {"tools"},
        ),
        (["tools/__init__.py", "tasks.py"], ("pyproject.toml", '[project]\nname = "x"\n'), set()),
    ],
    ids=[
        "setuptools",
        "package-dir",
        "py-modules",
        "hatch",
        "poetry",
        "flit",
        "setup-cfg",
        "setup-py",
        "control",
    ],
)
def test_a_package_the_metadata_declares_is_a_root_whatever_its_name(
    tmp_path: Path, files: list[str], config: tuple[str, str], found: set[str]
) -> None:
    """`tools/`, `scripts/`, `bench/`, `testing/`, `tasks.py`, `test*.py` are no project's
    code as a rule; one the project's metadata names as its package or module is its root
    all the same (an old copy of it on the import path is another checkout's code, h203).
    `setup.py` stays the build's, named or not."""
    make(tmp_path, *files)
    (tmp_path / config[0]).write_text(config[1])
    assert set(roots.find(tmp_path)) == found


def test_folders_pytest_puts_on_the_path(tmp_path: Path) -> None:
    make(tmp_path, "lib/calc/__init__.py", "helpers/tools.py")
    # test helpers on the path are not the project's code: a namespace folder of them named
    # as an installed package (``packaging``) would make that package foreign
    make(tmp_path, "tests/helper.py", "tests/packaging/wheel_check.py", "tests/unit/x.py")
    extra = [tmp_path / "lib", tmp_path.parent, tmp_path / "tests", tmp_path / "tests" / "unit"]
    assert roots.find(tmp_path, extra) == {
        "calc": str((tmp_path / "lib").resolve()),
        "helpers": str(tmp_path.resolve()),
    }


def test_a_declared_folder_outside_the_tree_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    make(tmp_path, "outside/calc/__init__.py")
    (tmp_path / "work" / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"" = "../outside"\n'
    )
    assert roots.find(tmp_path / "work") == {}


def test_bases_of_configured_packages(tmp_path: Path) -> None:
    make(tmp_path, "src/calc/__init__.py")
    assert roots.bases(tmp_path, ["calc", "gone"]) == {
        "calc": str((tmp_path / "src").resolve()),
        "gone": str(tmp_path),
    }


def test_run_text_round_trip(tmp_path: Path) -> None:
    run = loads.Run(str(tmp_path), "/w\tith tab", {"a": "/x\ny", "b": "/b"}, None, 12)
    (tmp_path / loads.RUN_FILE).write_text(loads.run_text(run))
    assert loads.read_run(str(tmp_path)) == run
    (tmp_path / loads.RUN_FILE).write_text("version\t0\n")
    assert loads.read_run(str(tmp_path)) is None


def test_a_run_in_a_folder_whose_path_is_no_utf8(tmp_path: Path) -> None:
    """A work tree named in Latin-1 (``caf\\xe9``, surrogate-escaped as the OS gives it): the
    run's file could not be written, and the run bound nothing (a linked worktree's pytest
    through a git alias). It is written and read back whole."""
    from genstamp import child

    work = tmp_path / os.fsdecode(b"caf\xe9")
    work.mkdir()
    recording = child.open_run(str(work), {"calc": str(work / "src")}, None, None, follow=False)
    try:
        run = loads.read_run(recording.run.folder)
    finally:
        child.close_run(recording)
    assert run is not None and run.workdir == str(work), run
    assert run.roots == {"calc": str(work / "src")}


# -- roots that only an installed distribution of this project provides -------------------------


def install(site: Path, files: list[str], direct_url: str | None = None) -> None:
    """What an installer leaves for project ``calc`` in ``site``: the files and the dist-info
    whose RECORD lists them (and the PEP 610 record, when given)."""
    info = "calc-1.0.dist-info"
    make(site, *files)
    (site / info).mkdir(parents=True)
    (site / info / "METADATA").write_text("Metadata-Version: 2.1\nName: calc\nVersion: 1.0\n")
    listed = [*files, f"{info}/METADATA", f"{info}/RECORD"]
    if direct_url is not None:
        (site / info / "direct_url.json").write_text(direct_url)
        listed.append(f"{info}/direct_url.json")
    (site / info / "RECORD").write_text("".join(f"{f},,\n" for f in listed))


NAMED = '[project]\nname = "Calc"\nversion = "1.0"\n'


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("pip-install", ["calc_util"]),  # an extension alone is stale-extension's to judge
        ("editable", []),  # its finder module and .pth are the installer's, the code the tree's
        ("another-project", []),
    ],
)
def test_roots_only_an_install_of_this_project_provides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, expected: list[str]
) -> None:
    work = tmp_path / "work"
    make(work, "src/calc/__init__.py")
    (work / "pyproject.toml").write_text(
        NAMED.replace("Calc", "calc-tools") if how == "another-project" else NAMED
    )
    site = tmp_path / "env" / "site-packages"
    # as pip records an install of this very tree (an editable one's code is the tree's); the
    # other project's, of its own folder
    editable = f'{{"url": "{work.as_uri()}", "dir_info": {{"editable": true}}}}'
    origin = tmp_path / "calc-tools" if how == "another-project" else work
    install(
        site,
        [
            "calc/__init__.py",
            "calc_util.py",
            "fast.cpython-311-x86_64-linux-gnu.so",
            "_calc.py" if how == "editable" else "calc/more.py",
            "__editable___calc_1_0_finder.py",
            "calc.pth",
            "../../bin/calc",
        ],
        editable if how == "editable" else f'{{"url": "{origin.as_uri()}", "dir_info": {{}}}}',
    )
    monkeypatch.syspath_prepend(str(site))
    found = roots.find(work)
    assert list(found) == ["calc"]
    src = str((work / "src").resolve())
    assert roots.installed_only(work, found) == dict.fromkeys(expected, src)


def test_a_builds_metadata_in_the_tree_is_not_an_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pip install .` builds in place: ``src/calc.egg-info`` lists the project's sources
    (``src/…``, ``tests/…``), and ``src`` is on the path. Not an installed distribution."""
    work = tmp_path / "work"
    make(work, "src/calc/__init__.py", "tests/test_calc.py")
    (work / "pyproject.toml").write_text(NAMED)
    info = work / "src" / "calc.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: calc\nVersion: 1.0\n")
    (info / "SOURCES.txt").write_text("pyproject.toml\nsrc/calc/__init__.py\ntests/test_calc.py\n")
    monkeypatch.syspath_prepend(str(work / "src"))
    assert roots.installed_only(work, roots.find(work)) == {}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.setuptools.package-dir]\npkgx = "source"\n"" = "lib"\n'),
        ("setup.cfg", "[options]\npackage_dir =\n    pkgx = source\n    = lib\n"),
        ("setup.py", 'setup(package_dir={"pkgx": "source", "": "lib"})\n'),
    ],
)
def test_a_package_mapped_to_a_folder_of_another_name(tmp_path: Path, name: str, text: str) -> None:
    """``pkgx`` lives in ``source/`` (the folder is the package); ``lib/`` holds packages."""
    make(tmp_path, "source/__init__.py", "source/calc.py", "lib/other/__init__.py")
    (tmp_path / name).write_text(text)
    source = str((tmp_path / "source").resolve())
    assert roots.mapped(tmp_path) == {"pkgx": source}
    assert roots.find(tmp_path) == {"pkgx": source, "other": str((tmp_path / "lib").resolve())}


@pytest.mark.parametrize("key", ["sources", "force-include"])
def test_a_package_hatch_renames(tmp_path: Path, key: str) -> None:
    """hatch's wheel puts lib/foo_impl at foo: a ``sources`` rewrite of that prefix, or a
    ``force-include`` of the folder; foo is the checkout's, in that folder."""
    make(tmp_path, "lib/foo_impl/__init__.py")
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.hatch.build.targets.wheel.{key}]\n"lib/foo_impl" = "foo"\n'
    )
    impl = str((tmp_path / "lib" / "foo_impl").resolve())
    assert roots.mapped(tmp_path) == {"foo": impl}
    assert roots.find(tmp_path)["foo"] == impl


def test_scikit_builds_package_mapped_to_a_folder_of_another_name(tmp_path: Path) -> None:
    """scikit-build-core's table form names a package's folder (``fast`` is ``python/impl``);
    its auto-discovery is for its own builds only: another project's ``python/`` is a folder
    like any other."""
    make(tmp_path, "python/impl/__init__.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.scikit-build.wheel.packages]\nfast = "python/impl"\n'
    )
    impl = str((tmp_path / "python" / "impl").resolve())
    assert roots.mapped(tmp_path) == {"fast": impl}
    assert roots.find(tmp_path)["fast"] == impl
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "impl"\n')
    assert "impl" not in roots.find(tmp_path)


def test_extensions_the_metadata_declares_are_roots_before_they_are_built(tmp_path: Path) -> None:
    """A top-level extension built in place is in no tree: its name is read from setup.py's
    ``Extension`` calls (read, never run) and setuptools' ``ext-modules`` table; one inside a
    package is that package's."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup, Extension\n"
        'NAME = "_computed"\n'
        'setup(ext_modules=[Extension("_fast", ["fast.c"]), Extension(name="pkg._inner",'
        ' sources=["i.c"]), Extension(NAME, ["c.c"])])\n'
    )
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.setuptools.ext-modules]]\nname = "_table"\nsources = ["t.c"]\n'
    )
    top = str(tmp_path.resolve())
    found = roots.find(tmp_path)
    assert {n: found.get(n) for n in ("_fast", "pkg", "_table")} == dict.fromkeys(
        ("_fast", "pkg", "_table"), top
    )
    assert "_computed" not in found


def test_maturins_python_source_holds_packages(tmp_path: Path) -> None:
    make(tmp_path, "python/pkgm/__init__.py", "src/lib.rs")
    (tmp_path / "pyproject.toml").write_text('[tool.maturin]\npython-source = "python"\n')
    assert roots.find(tmp_path) == {"pkgm": str((tmp_path / "python").resolve())}


def test_a_name_the_trees_history_never_held_is_the_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A top-level package only the build writes (maturin's, for a Rust crate) was never in the
    tree: not a root. One the history held and the tree dropped is."""
    from conftest import commit_all, init_repo

    work = init_repo(tmp_path / "work")
    make(work, "src/calc/__init__.py")
    (work / "pyproject.toml").write_text(NAMED)
    commit_all(work, "calc")
    site = tmp_path / "env" / "site-packages"
    install(site, ["calc/__init__.py", "generated/__init__.py", "calc_util.py"])
    monkeypatch.syspath_prepend(str(site))
    assert roots.installed_only(work, roots.find(work)) == {}
    make(work, "src/calc_util.py")
    commit_all(work, "calc_util")
    (work / "src" / "calc_util.py").unlink()
    commit_all(work, "calc_util dropped")
    src = str((work / "src").resolve())
    assert roots.installed_only(work, roots.find(work)) == {"calc_util": src}


def test_a_name_an_install_built_from_another_clone_provides_is_a_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular install built from another folder (`pip install ../other`, another clone on a
    branch that adds a package): what it provides that the tree does not and that folder holds
    is that clone's code, whatever this tree's history held (h200); a name neither holds is the
    build's (h202: from a worktree or an export of the same commit)."""
    from conftest import commit_all, init_repo

    work = init_repo(tmp_path / "work")
    make(work, "src/calc/__init__.py")
    (work / "pyproject.toml").write_text(NAMED)
    commit_all(work, "calc")
    other = tmp_path / "other"  # another clone, on a branch that adds plug and calc_util
    make(other, "src/calc/__init__.py", "src/plug/__init__.py", "src/calc_util.py")
    (other / "pyproject.toml").write_text(NAMED)
    site = tmp_path / "env" / "site-packages"
    install(
        site,
        # (calc_pb2: written by the build, as protoc's output, from any copy of the project)
        ["calc/__init__.py", "plug/__init__.py", "calc_util.py", "calc_pb2.py"],
        f'{{"url": "{other.as_uri()}", "dir_info": {{}}}}',
    )
    monkeypatch.syspath_prepend(str(site))
    src = str((work / "src").resolve())
    assert roots.installed_only(work, roots.find(work)) == dict.fromkeys(["calc_util", "plug"], src)
    # the same install built from this work tree, or from an export of its commit (a worktree
    # of it): the names are the build's
    info = site / "calc-1.0.dist-info" / "direct_url.json"
    info.write_text(f'{{"url": "{work.as_uri()}", "dir_info": {{}}}}')
    assert roots.installed_only(work, roots.find(work)) == {}
    export = tmp_path / "export"
    make(export, "src/calc/__init__.py")
    (export / "pyproject.toml").write_text(NAMED)
    info.write_text(f'{{"url": "{export.as_uri()}", "dir_info": {{}}}}')
    assert roots.installed_only(work, roots.find(work)) == {}


@pytest.mark.parametrize("what", ["fifo", "device"])
def test_a_pyproject_that_is_no_file_is_read_without_waiting(tmp_path: Path, what: str) -> None:
    """A FIFO (or a link to ``/dev/zero``) named pyproject.toml: the plugin's search for the
    import roots waited on it forever (every pytest run with genstamp hung) or read it without
    end; it is no configuration now, and the package beside it is still found."""
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "__init__.py").write_text("")
    if what == "fifo":
        os.mkfifo(tmp_path / "pyproject.toml")
    else:
        (tmp_path / "pyproject.toml").symlink_to("/dev/zero")
    code = f"import pathlib, genstamp.roots as r; print(r.find(pathlib.Path({str(tmp_path)!r})))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "'calc'" in proc.stdout, proc.stdout


@pytest.mark.parametrize("framework", ["regular", "namespace", "absent"])
def test_a_package_the_project_maps_a_subpackage_of_is_a_root_only_as_a_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, framework: str
) -> None:
    """`package-dir = {"fw.plugins.mine" = "mine"}`: a plugin mapped into its framework's
    package. Where ``fw`` is a regular package another distribution installs, it is that
    distribution's (made a root of the checkout, its own modules were foreign-origin); where
    it is a namespace package (or none is installed yet), the checkout gives a portion of it."""
    project = tmp_path / "p"
    (project / "mine").mkdir(parents=True)
    (project / "mine" / "__init__.py").write_text("X = 1\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "fw-plugin-mine"\nversion = "1"\n'
        '[tool.setuptools]\npackage-dir = {"fw.plugins.mine" = "mine"}\n'
    )
    site = tmp_path / "site"
    if framework != "absent":
        (site / "fw" / "plugins").mkdir(parents=True)
        if framework == "regular":
            (site / "fw" / "__init__.py").write_text("VERSION = 3\n")
    monkeypatch.syspath_prepend(str(site))
    assert ("fw" in roots.find(project)) is (framework != "regular")


@pytest.mark.parametrize(
    "installer",
    ["__pypackages__/3.11/lib", "vendor/site-packages", "usr/lib/python3/dist-packages"],
)
def test_an_installers_folder_on_pytests_pythonpath_provides_no_root(
    tmp_path: Path, installer: str
) -> None:
    """pytest's ``pythonpath`` naming an installer's folder (PEP 582's ``__pypackages__``, as
    pdm keeps one; a site-packages): what is installed there is a copy of the checkout's
    package, never where its root lives (a stale copy there is then judged as installed
    code that provides the checkout's root: foreign-origin)."""
    make(tmp_path, "pkg/__init__.py", "pkg/mod.py", f"{installer}/pkg/__init__.py")
    found = roots.find(tmp_path, extra=[tmp_path / installer])
    assert found == {"pkg": str(tmp_path.resolve())}
