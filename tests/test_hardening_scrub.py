"""Scrub deletes only bytecode: a randomised tree of look-alike names, links out of the tree,
read-only folders, virtual environments and nested repositories, run through `genstamp scrub`;
every byte that is not bytecode, inside the tree or outside it, is unchanged afterwards.

test_scrub.py proves each rule on a hand-built tree (one link, one venv, one nested .git, one
undeletable file); here hypothesis mixes them, and an undeletable *folder* is followed through
the stamp's record and the gate.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2
from conftest import RunGenstamp, git, run_genstamp, run_pytest, undeletable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genstamp.cli import main as genstamp_main

PYC = "m{}.cpython-311.pyc"

# Names that merely contain "pyc" or "__pycache__": data, never bytecode.
DATA_NAMES = [
    "pyc.txt",
    "x.pyc.bak",
    "backup.pyc.1",
    "__pycache__.md",
    "notes.pyc~",
    "pyc",
    "data.pyc.json",
    "m.cpython-311.pyc.txt",
    "__pycache__",  # a plain file with the folder's name
    "README",
]
FOLDER_NAMES = ["pkg", "my__pycache__", "pycache", "a.pyc", "lib.pyo.d", "sub"]
KINDS = [
    "source",
    "data",
    "pycache",
    "pycache-with-notes",
    "legacy-pyc",
    "legacy-pyo",
    "link-to-outside-folder",
    "link-to-outside-file",
    "pycache-link",
    "venv",
    "nested-repo",
    "gitlink-file",
    "read-only-folder",
    "read-only-file",
]

Snapshot = dict[str, tuple[object, ...]]


def snapshot(root: Path, *, times: bool = False) -> Snapshot:
    """Every entry under ``root`` by relative path, links never followed: folders with their
    mode, files with their mode and a hash of their bytes, links with their target."""
    out: Snapshot = {}

    def walk(folder: Path) -> None:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            full = Path(entry.path)
            rel = full.relative_to(root).as_posix()
            st_ = entry.stat(follow_symlinks=False)
            when = (st_.st_mtime_ns,) if times else ()
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(full), *when)
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st_.st_mode), *when)
                walk(full)
            else:
                digest = hashlib.sha256(full.read_bytes()).hexdigest()
                out[rel] = ("file", stat.S_IMODE(st_.st_mode), digest, *when)

    walk(root)
    return out


def is_bytecode(rel: str, before: Snapshot) -> bool:
    """The specification, independent of scrub's code: what scrub may delete."""
    parts = rel.split("/")
    if ".git" in parts:
        return False
    for n in range(1, len(parts)):  # inside a virtual environment (below the root)
        if "/".join([*parts[:n], "pyvenv.cfg"]) in before:
            return False
    kind = before[rel][0]
    name = parts[-1]
    if kind == "link" and name == "__pycache__":
        return True
    if kind not in ("file", "link"):
        return False
    return name.endswith((".pyc", ".pyo"))


def expected_after(before: Snapshot) -> Snapshot:
    """What a clean scrub leaves: everything but bytecode, and the folders that still hold
    something (a folder emptied by the scrub goes; one that was empty stays)."""
    keep = {rel for rel, entry in before.items() if entry[0] != "dir"}
    keep -= {rel for rel in keep if is_bytecode(rel, before)}
    folders = {rel for rel, entry in before.items() if entry[0] == "dir"}
    empty = {f for f in folders if not any(r.startswith(f + "/") for r in before)}
    held = set()
    for rel in keep | empty:
        parts = rel.split("/")
        held.update("/".join(parts[:n]) for n in range(1, len(parts)))
    return {rel: before[rel] for rel in keep | empty | held}


def build_outside(base: Path) -> Path:
    """Bytecode and data outside the work tree that links from inside point at."""
    out = base / "outside"
    (out / "pkg" / "__pycache__").mkdir(parents=True)
    (out / "pkg" / "__pycache__" / PYC.format("o")).write_bytes(b"outside bytecode")
    (out / "pkg" / "mod.py").write_text("X = 1\n")
    (out / "cache").mkdir()
    (out / "cache" / PYC.format("c")).write_bytes(b"a cache someone links to")
    (out / "legacy.pyc").write_bytes(b"outside legacy bytecode")
    (out / "data.txt").write_text("outside data\n")
    return out


def place(root: Path, outside: Path, folder: str, kind: str, n: int, name: str) -> None:
    """Make one element of the tree; an element that collides with an earlier one is skipped."""
    where = root / folder if folder else root
    try:
        where.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        return  # a file already has this folder's name
    if not where.is_dir() or where.is_symlink():
        return

    def fresh(rel: str) -> Path | None:
        path = where / rel
        return None if os.path.lexists(path) else path

    if kind == "source" and (p := fresh(f"mod{n}.py")):
        p.write_text(f"VALUE = {n}\n")
    elif kind == "data" and (p := fresh(name)):
        p.write_bytes(f"data {name} {n}\n".encode())
    elif kind in ("pycache", "pycache-with-notes"):
        cache = where / "__pycache__"
        if os.path.lexists(cache) and (cache.is_symlink() or not cache.is_dir()):
            return
        cache.mkdir(exist_ok=True)
        for i in range(n % 3 + 1):
            (cache / PYC.format(f"{n}_{i}")).write_bytes(bytes([n % 256]) * (i + 1))
        if kind == "pycache-with-notes":
            (cache / "notes.txt").write_text("someone's notes in a cache folder\n")
    elif kind in ("legacy-pyc", "legacy-pyo") and (p := fresh(f"legacy{n}.{kind[-3:]}")):
        p.write_bytes(b"legacy bytecode")
    elif kind == "link-to-outside-folder":
        for i, target in enumerate((outside / "pkg", outside / "cache")):
            if p := fresh(f"linked{n}_{i}"):
                p.symlink_to(target, target_is_directory=True)
    elif kind == "link-to-outside-file":
        for link, target in ((f"linked{n}.pyc", "legacy.pyc"), (name, "data.txt")):
            if p := fresh(link):
                p.symlink_to(outside / target)
    elif kind == "pycache-link" and (p := fresh("__pycache__")):
        p.symlink_to(outside / "cache", target_is_directory=True)
    elif kind == "venv" and (p := fresh(f"venv{n}")):
        site = p / "lib" / "python3.11" / "site-packages" / "dep"
        (site / "__pycache__").mkdir(parents=True)
        (site / "__pycache__" / PYC.format("d")).write_bytes(b"venv bytecode")
        (site / "__init__.py").write_text("")
        (p / "legacy.pyc").write_bytes(b"venv legacy")
        (p / "pyvenv.cfg").write_text("home = /usr/bin\n")
    elif kind == "nested-repo" and (p := fresh(f"nested{n}")):
        pygit2.init_repository(str(p))  # real libgit2: a real .git folder
        (p / ".git" / "objects" / "stray.pyc").write_bytes(b"a file git keeps")
        (p / ".git" / "hooks" / "__pycache__").mkdir(parents=True)
        (p / ".git" / "hooks" / "__pycache__" / PYC.format("h")).write_bytes(b"hook bytecode")
        (p / "__pycache__").mkdir()
        (p / "__pycache__" / PYC.format("n")).write_bytes(b"the nested work tree's bytecode")
        (p / "n.py").write_text("")
    elif kind == "gitlink-file" and (p := fresh(f"submodule{n}")):
        p.mkdir()
        (p / ".git").write_text("gitdir: ../.git/modules/x\n")
        (p / "s.py").write_text("")
    elif kind == "read-only-file":
        for child in where.iterdir():
            if child.is_file() and not child.is_symlink():
                child.chmod(0o444)


def make_read_only(root: Path, folder: str) -> None:
    """Last, so that nothing is placed in a folder after it became read-only."""
    where = root / folder
    if folder and where.is_dir() and not where.is_symlink():
        where.chmod(0o555)


@contextlib.contextmanager
def scratch(base: Path) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir=base))
    try:
        yield folder
    finally:
        for dirpath, dirnames, _ in os.walk(folder):
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if not os.path.islink(full):
                    os.chmod(full, 0o755)
        shutil.rmtree(folder)


def cli_scrub(root: Path) -> tuple[int, dict[str, object]]:
    """`genstamp -C root scrub --json`, in-process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = genstamp_main(["-C", str(root), "scrub", "--json"])
    return code, json.loads(out.getvalue())


folders_strategy = st.lists(
    st.lists(st.sampled_from(FOLDER_NAMES), min_size=0, max_size=3).map("/".join),
    min_size=1,
    max_size=5,
)
elements_strategy = st.lists(
    st.tuples(
        st.integers(0, 10),  # which folder
        st.sampled_from(KINDS),
        st.integers(0, 99),
        st.sampled_from(DATA_NAMES),
    ),
    min_size=1,
    max_size=18,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(folders=folders_strategy, elements=elements_strategy)
def test_scrub_deletes_only_bytecode(
    tmp_path: Path, folders: list[str], elements: list[tuple[int, str, int, str]]
) -> None:
    with scratch(tmp_path) as base:
        outside = build_outside(base)
        root = base / "work"
        pygit2.init_repository(str(root))
        (root / ".git" / "stray.pyc").write_bytes(b"in the git dir: never scrubbed")
        for which, kind, n, name in elements:
            place(root, outside, folders[which % len(folders)], kind, n, name)
        for which, kind, _, _ in elements:
            if kind == "read-only-folder":
                make_read_only(root, folders[which % len(folders)])
        before = snapshot(root)
        outside_before = snapshot(outside, times=True)
        base_before = sorted(os.listdir(base))

        code, result = cli_scrub(root)

        after = snapshot(root)
        assert snapshot(outside, times=True) == outside_before  # nothing outside touched
        assert sorted(os.listdir(base)) == base_before
        errors = result["errors"]
        assert isinstance(errors, list)
        assert code == (1 if errors else 0)
        # Every entry that is not bytecode is there, byte for byte, with its mode.
        for rel, entry in before.items():
            if entry[0] != "dir" and not is_bytecode(rel, before):
                assert after.get(rel) == entry, rel
        removed = result["removed"]
        assert isinstance(removed, list)
        for path in removed:
            rel = Path(str(path).rstrip("/")).relative_to(root).as_posix()
            assert before[rel][0] == "dir" or is_bytecode(rel, before), rel
        if not errors:  # as root, permissions stop nothing: all bytecode went
            assert after == expected_after(before)
        else:  # a normal user: what could not go sits in a read-only folder
            for error in errors:
                assert isinstance(error, dict)
                folder = Path(str(error["path"]))
                assert any(not os.access(p, os.W_OK) for p in (folder, folder.parent))


def test_the_specification_sees_what_the_property_relies_on(tmp_path: Path) -> None:
    """The property test's model classifies the look-alikes as data and the real thing as
    bytecode, so a scrub that deleted a look-alike would fail it."""
    with scratch(tmp_path) as base:
        outside = build_outside(base)
        root = base / "work"
        root.mkdir()
        for n, kind in enumerate(KINDS):
            for name in DATA_NAMES:
                place(root, outside, f"f{n}", kind, n, name)
        before = snapshot(root)
        bytecode = {rel for rel in before if is_bytecode(rel, before)}
        names = {rel.rsplit("/", 1)[-1] for rel in bytecode}
        assert not names & (set(DATA_NAMES) - {"__pycache__"})
        assert all(before[r][0] == "link" for r in bytecode if r.endswith("/__pycache__"))
        assert "f2/__pycache__/m2_0.cpython-311.pyc" in bytecode
        assert "f8/__pycache__" in bytecode  # the link, not what it points to
        assert "f4/legacy4.pyc" in bytecode and "f5/legacy5.pyo" in bytecode
        assert not any(".git/" in rel or "venv" in rel for rel in bytecode)
        expected = expected_after(before)
        assert "f2" not in expected  # emptied by the scrub: goes
        assert "f3/__pycache__/notes.txt" in expected and "f3/__pycache__" in expected


# -- a folder scrub cannot delete ---------------------------------------------------------------


def test_a_folder_scrub_cannot_delete_is_reported_and_the_generation_is_not_clean(
    project: Path, genstamp: RunGenstamp
) -> None:
    """The parent of a __pycache__ is undeletable-into: the cache is emptied but stays."""
    locked = project / "src" / "calc"
    cache = locked / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-311.pyc").write_bytes(b"bytecode")
    free = project / "src" / "other" / "__pycache__"
    free.mkdir(parents=True)
    (free / PYC.format("f")).write_bytes(b"bytecode")
    with undeletable(locked):
        proc = run_genstamp(project, "scrub")
        assert proc.returncode == 1
        assert f"genstamp: cannot remove {cache}: " in proc.stderr
        assert "Traceback" not in proc.stderr

        proc = run_genstamp(project, "stamp", "--json")
        assert proc.returncode == 1
        data = json.loads(proc.stdout)
        assert data["clean"] is False
        assert [e["path"] for e in data["generation"]["scrub"]["errors"]] == [str(cache)]
        assert f"genstamp: cannot remove {cache}: " in proc.stderr
        assert "not clean" in proc.stderr

        # the record the gate reads carries the error too
        stamp = json.loads((project / ".git" / "genstamp" / "generation.json").read_text())
        assert stamp["id"] == data["generation"]["id"]
        assert [e["path"] for e in stamp["scrub"]["errors"]] == [str(cache)]
        assert stamp["scrub"]["errors"][0]["reason"]

        # a post-checkout hook reports it but never fails the checkout
        head = git(project, "rev-parse", "HEAD")
        proc = run_genstamp(project, "hook", "post-checkout", head, head, "1")
        assert proc.returncode == 0
        assert f"genstamp: cannot remove {cache}: " in proc.stderr
    assert cache.is_dir() and not any(cache.iterdir())  # emptied, kept
    assert not free.exists() and (locked / "__init__.py").is_file()


def test_bytecode_scrub_could_not_delete_is_refused_by_the_gate(project: Path) -> None:
    """A pyc in an undeletable cache survives the stamp; a green run later, the gate names it."""
    cache = project / "src" / "calc" / "__pycache__"
    cache.mkdir()
    pyc = cache / "__init__.cpython-311.pyc"
    pyc.write_bytes(b"stale bytecode from before the generation")
    with undeletable(cache):
        proc = run_genstamp(project, "stamp")
        assert proc.returncode == 1 and str(pyc) in proc.stderr
        tested = run_pytest(project)
        assert tested.returncode == 0, tested.stdout
        proc = run_genstamp(project, "verify")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout.startswith("stale-bytecode: ")
        assert "src/calc/__pycache__/__init__.cpython-311.pyc" in proc.stdout
    assert pyc.exists()


def test_a_real_nested_checkout_keeps_its_git_dir_and_status(project: Path, tmp_path: Path) -> None:
    """A real clone inside the work tree, with bytecode both in its work tree and in its .git:
    scrub empties the former, leaves the latter, and the clone's git status is unchanged."""
    nested = project / "vendor" / "lib"
    git(tmp_path, "clone", "-q", str(project), str(nested))
    (nested / "src" / "calc" / "__pycache__").mkdir()
    (nested / "src" / "calc" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"x")
    (nested / ".git" / "hooks" / "__pycache__").mkdir(parents=True)
    (nested / ".git" / "hooks" / "__pycache__" / PYC.format("h")).write_bytes(b"x")
    (nested / "notes.pyc.txt").write_text("keep\n")
    status = git(nested, "status", "--porcelain")
    inner = snapshot(nested / ".git")
    proc = run_genstamp(project, "scrub")
    assert proc.returncode == 0, proc.stderr
    assert not (nested / "src" / "calc" / "__pycache__").exists()
    assert snapshot(nested / ".git") == inner
    assert (nested / "notes.pyc.txt").read_text() == "keep\n"
    assert git(nested, "status", "--porcelain") == status
