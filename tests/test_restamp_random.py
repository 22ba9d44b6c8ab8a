"""Issue 16's proof: random sequences of checkouts (branches, ``-b``, ``-- path``), merges
(fast-forward and real), rebases and amends in a real repository whose Python files have
bytecode, with genstamp's plain hooks run by git itself, each step followed by a reader.

After every step:
1. no bytecode in the work tree is stale: a timestamp pyc whose header matches its source's
   mtime and size was compiled from the source's present content; no legacy ``m.pyc`` is
   left without its ``m.py``; no folder is left holding nothing but bytecode (CPython would
   import it as a namespace package);
2. the generation the reader sees is the one today's full rule gives: git's own tree of the
   work tree (``git add -A && git write-tree`` on a scratch index, recorded by each hook as
   git runs it) compared with the generation's tree, kept when equal, begun when not. The
   one deliberate difference: the checkout a rebase makes before replaying is decided with
   the rebase's result (``generation.claimed``), so the oracle skips what it saw there.

Sources change between same-size contents and git rewrites them within the second their
bytecode was compiled: the case CPython's own mtime check misses.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import commit_all, git, init_repo, repository_property
from hypothesis import Phase, given
from hypothesis import strategies as st

from genstamp import generation
from genstamp.bytecode import is_bytecode_path, matches_stat, parse_header
from genstamp.repo import open_checkout

pytestmark = pytest.mark.e2e

HOOKS = Path(__file__).resolve().parent.parent / "hooks"
FILES = ("pkg/__init__.py", "pkg/m.py", "pkg/sub/__init__.py", "pkg/sub/n.py", "top.py")
BRANCHES = ("main", "b1", "b2")
ORACLE_HOOK = """#!/bin/sh
gitdir=$(git rev-parse --absolute-git-dir)
cp -p "$gitdir/index" "$gitdir/oracle-index" 2>/dev/null || rm -f "$gitdir/oracle-index"
export GIT_INDEX_FILE="$gitdir/oracle-index"
git add -A && tree=$(git write-tree)
unset GIT_INDEX_FILE
busy=n
[ "$(basename "$0")" = post-checkout ] && [ -d "$gitdir/rebase-merge" ] && busy=y
echo "$(basename "$0") $busy $tree" >> "$gitdir/oracle.log"
exec "{hooks}/$(basename "$0")" "$@"
"""

content = st.sampled_from(["X = 1\n", "X = 2\n", "X = 3\n", None])  # None: the file is absent
tree_strategy = st.fixed_dictionaries({f: content for f in FILES})
steps = st.lists(
    st.one_of(
        st.tuples(st.just("switch"), st.sampled_from(BRANCHES)),
        st.tuples(st.just("new"), st.just("")),
        st.tuples(st.just("restore"), st.sampled_from(FILES)),
        st.tuples(st.just("commit"), st.sampled_from(FILES)),
        st.tuples(st.just("merge"), st.sampled_from(BRANCHES)),
        st.tuples(st.just("rebase"), st.sampled_from(BRANCHES)),
        st.tuples(st.just("pull-rebase"), st.sampled_from(BRANCHES)),
        st.tuples(st.just("reword"), st.just("")),
        st.tuples(st.just("amend"), st.sampled_from(["message", "content"])),
    ),
    min_size=3,
    max_size=7,
)


def write_tree(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            if path.exists():
                path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args], cwd=root, capture_output=True, text=True
    )


def compile_all(root: Path, compiled: dict[Path, bytes]) -> None:
    """Bytecode for every source now, of three kinds: __pycache__ (two optimization levels)
    and a legacy pyc beside top.py; ``compiled`` remembers what each was compiled from."""
    for path in root.rglob("*.py"):
        if ".git" in path.parts:
            continue
        source = path.read_bytes()
        targets = [
            Path(importlib.util.cache_from_source(str(path))),
            Path(importlib.util.cache_from_source(str(path), optimization=1)),
        ]
        if path.name == "top.py":
            targets.append(path.with_suffix(".pyc"))
        for target in targets:
            py_compile.compile(str(path), cfile=str(target), doraise=True)
            compiled[target] = source


def check_bytecode(root: Path, compiled: dict[Path, bytes]) -> None:
    for pyc, source_was in compiled.items():
        if not pyc.exists():
            continue
        if pyc.parent.name != "__pycache__":  # legacy: imported only when its source is gone
            assert pyc.with_suffix(".py").exists(), f"sourceless legacy {pyc} left"
            continue
        source = pyc.parent.parent / (pyc.name.split(".", 1)[0] + ".py")
        if not source.exists():
            continue  # CPython never imports a __pycache__ pyc without its source
        st_ = source.stat()
        header = parse_header(pyc.read_bytes())
        assert header is not None
        if matches_stat(header, st_.st_mtime, st_.st_size):
            assert source.read_bytes() == source_was, f"stale {pyc} runs for {source}"
    for folder, dirs, _files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        here = Path(folder)
        if here == root or here.name == "__pycache__":
            continue
        everything = [p for p in here.rglob("*") if p.is_file()]
        rel = [p.relative_to(root).as_posix() for p in everything]
        assert not all(is_bytecode_path(r) for r in rel), f"{here} holds only bytecode: {rel}"


def apply(root: Path, op: tuple[str, str], counter: list[int], compiled: dict[Path, bytes]) -> bool:
    """One step; what the test edits itself is compiled at once, so that only what git writes
    can leave bytecode stale (an edit of the user's own is no hook's business). False when a
    merge or rebase stopped and was aborted: git runs no hook for the abort, which rewrites
    files (today's hooks do not see it either; ``genstamp stamp`` is the remedy)."""
    kind, arg = op
    counter[0] += 1
    if kind == "switch":
        run(root, "checkout", "-q", arg)
    elif kind == "new":
        run(root, "checkout", "-q", "-b", f"n{counter[0]}")
    elif kind == "restore":
        path = root / arg
        if path.exists():
            path.write_text("X = 9\n")  # an edit git restores: same size
            compile_all(root, compiled)
            run(root, "checkout", "--", arg)
    elif kind == "commit":  # no hook runs on commit
        write_tree(root, {arg: "X = 8\n" if (root / arg).exists() else "X = 7\n"})
        compile_all(root, compiled)
        commit_all(root, f"edit {counter[0]}")
    elif kind == "merge":
        if run(root, "merge", "-q", "--no-edit", "-X", "theirs", arg).returncode:
            run(root, "merge", "--abort")
            return False
    elif kind == "rebase":
        if run(root, "rebase", "-q", "-X", "theirs", arg).returncode:
            run(root, "rebase", "--abort")
            return False
    elif kind == "pull-rebase":  # its reflogs name the action "pull --rebase …"
        if run(root, "pull", "-q", "--rebase", "-X", "theirs", ".", arg).returncode:
            run(root, "rebase", "--abort")
            return False
    elif kind == "reword":  # the message kept: a rebase that leaves the branch where it was
        env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "true"}
        reworded = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "rebase", "-q", "-i", "HEAD~1"],
            cwd=root,
            capture_output=True,
            env=env,
        )
        if reworded.returncode:
            run(root, "rebase", "--abort")
            return False
    elif kind == "amend":
        if arg == "content":
            write_tree(root, {"pkg/m.py": "X = 6\n"})
            compile_all(root, compiled)
            run(root, "commit", "-q", "-a", "--amend", "-m", "amended")
        else:
            run(root, "commit", "-q", "--amend", "-m", f"reworded {counter[0]}")
    return True


@repository_property(
    6,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure names its steps already
)
@given(trees=st.lists(tree_strategy, min_size=3, max_size=3), ops=steps)
def test_random_git_histories_never_leave_stale_bytecode_and_decide_as_the_full_rule(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    trees: list[dict[str, str | None]],
    ops: list[tuple[str, str]],
) -> None:
    base = tmp_path_factory.mktemp("random")
    root = init_repo(base / "repo")
    hooks = base / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-merge", "post-rewrite"):
        (hooks / name).write_text(ORACLE_HOOK.replace("{hooks}", str(HOOKS)))
        (hooks / name).chmod(0o755)
    wrapper = base / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    for branch, files in zip(BRANCHES, trees, strict=True):
        if branch != "main":
            git(root, "checkout", "-q", "-b", branch, "main")
        write_tree(root, files)
        commit_all(root, branch)
    git(root, "checkout", "-q", "main")
    git(root, "config", "core.hooksPath", str(hooks))
    gitdir = root / ".git"
    subprocess.run([str(wrapper), "stamp"], cwd=root, check=True, capture_output=True)
    checkout = open_checkout(root)
    gen = generation.current(checkout)
    assert gen is not None
    model_tree, model_id = gen.tree, gen.id
    compiled: dict[Path, bytes] = {}
    counter = [0]
    for step, op in enumerate(ops):
        compile_all(root, compiled)
        log = gitdir / "oracle.log"
        log.unlink(missing_ok=True)
        where = f"step {step} {op} of {ops}"
        if not apply(root, op, counter, compiled):
            subprocess.run([str(wrapper), "stamp"], cwd=root, check=True, capture_output=True)
            gen = generation.current(checkout)
            assert gen is not None
            model_tree, model_id = gen.tree, gen.id
            continue
        seen = log.read_text().split("\n") if log.exists() else []
        try:
            check_bytecode(root, compiled)
        except AssertionError as exc:
            raise AssertionError(f"{where}: {exc}") from None
        began = False
        ends = any(line.startswith("post-rewrite ") for line in seen)
        for line in filter(None, seen):
            _hook, busy, tree = line.split(" ")
            if busy == "y" and ends:
                continue  # a rebase's own checkout: decided with the rebase's result
            if tree != model_tree:
                began, model_tree = True, tree
        gen = generation.current(checkout)  # the reader that settles the hooks' claim
        assert gen is not None and gen.pending is None, where
        assert gen.tree == model_tree, where
        assert (gen.id != model_id) == began, f"{where}: {seen}"
        model_id = gen.id
