"""git's hook protocol, written down as data: what each hook receives and what genstamp does."""

from __future__ import annotations

from genstamp.errors import EXIT_REFUSED, GenstampError

# The post-* hooks import this module and must start fast (issue 16): no pygit2, and no typing
# at run time (it imports re); PushedRef is a NamedTuple for mypy, a namedtuple at run time.
TYPE_CHECKING = False

Z40 = "0" * 40
RESTAMP_HOOKS = ("post-checkout", "post-merge", "post-rewrite")
# git's own arguments per hook (pre-commit's `hook-impl` keeps the same table)
ARG_COUNTS = {"post-checkout": (3,), "post-merge": (1,), "post-rewrite": (1,), "pre-push": (2,)}
SKIP_ENV = "_PRE_COMMIT_SKIP_POST_CHECKOUT"  # set while pre-commit checks out its own stash

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import NamedTuple

    import pygit2

    class _Ref(NamedTuple):
        local_ref: str
        local_sha: str
        remote_ref: str
        remote_sha: str

else:
    from collections import namedtuple

    _Ref = namedtuple("PushedRef", "local_ref local_sha remote_ref remote_sha")


class PushedRef(_Ref):
    __slots__ = ()

    @property
    def is_delete(self) -> bool:
        return set(self.local_sha) == {"0"}


def parse_pre_push(stdin: str) -> list[PushedRef]:
    """git's pre-push stdin: ``<local ref> SP <local sha> SP <remote ref> SP <remote sha> LF``."""
    shape = "`<local ref> <local sha> <remote ref> <remote sha>`"
    # a ref name may hold spaces: the shas are counted from the right
    return [
        PushedRef(*parts)
        for parts in stdin_lines(stdin, "pre-push", shape, lambda line: line.rsplit(" ", 3), (1, 3))
    ]


def stdin_lines(
    stdin: str,
    hook: str,
    shape: str,
    split: Callable[[str], list[str]],
    shas: Sequence[int],
) -> list[list[str]]:
    """The fields of each line a hook reads on stdin (as many as ``shape`` names in `<…>`),
    ``shas`` the places of object ids; one error line (the push refused) for a line that is
    not of that ``shape``.

    Lines end at LF only: a ref name may hold U+0085 or U+2028, which ``splitlines`` breaks at."""
    out = []
    for number, line in enumerate(stdin.split("\n"), 1):
        if not line.strip():
            continue
        parts = split(line)
        if len(parts) != shape.count("<") or not all(_is_sha(parts[i]) for i in shas):
            raise GenstampError(
                f"{hook} line {number} does not parse: {line[:200]!r}",
                f"git gives {shape} on stdin",
                code=EXIT_REFUSED,
            )
        out.append(parts)
    return out


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and _is_hex(text)


def commits_to_judge(repo: pygit2.Repository, refs: Sequence[PushedRef]) -> dict[str, str]:
    """The commit each pushed ref points at (tags peeled), each once, with a label naming the
    refs that point at it; deletions, notes (``refs/notes/*``: what is said about commits,
    genstamp's own attestations among them, not code) and tags of a blob (a file kept as a
    tag, git.git's signing key: no tree, nothing to test) judged by nothing. A tag of a tree
    is refused: code no commit holds, that no evidence can speak for."""
    import pygit2

    out: dict[str, list[str]] = {}
    for ref in refs:
        if ref.is_delete or (is_notes(ref) and holds_notes(repo, ref.local_sha)):
            continue
        try:
            obj = repo.get(ref.local_sha)
            if obj is None:
                raise KeyError(ref.local_sha)
            target = obj
            while isinstance(target, pygit2.Tag):
                target = target.get_object()
            if isinstance(target, pygit2.Blob):
                continue
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise GenstampError(
                f"{ref.local_ref} ({ref.local_sha[:12]}) does not point at a commit",
                "genstamp judges branches and tags that point at commits (a tag of a file passes)",
                code=EXIT_REFUSED,
            ) from None
        out.setdefault(str(commit.id), []).append(ref_name(ref.local_ref, ref.remote_ref))
    return {commit: _label(commit, names) for commit, names in out.items()}


def is_notes(ref: PushedRef) -> bool:
    """A push of git notes: its commits hold notes on other commits, not a tree to test. Where
    it goes decides (a commit pushed from ``refs/notes/x`` to a branch is that branch's)."""
    return pushed_to_notes(ref.local_ref, ref.remote_ref)


def pushed_to_notes(local: str, remote: str) -> bool:
    """Whether a push from ``local`` to ``remote`` updates notes: the remote ref's name says;
    the local one only where the remote one is not told."""
    return notes_ref(remote) if remote else notes_ref(local)


def notes_ref(name: str) -> bool:
    return name.startswith("refs/notes/")


def holds_notes(repo: pygit2.Repository, rev: str) -> bool:
    """Whether ``rev`` is a commit of notes: its tree names only objects (each file named by an
    object id, split over fan-out folders of two hex digits as git notes spreads them). A
    commit of code pushed to a notes ref is code all the same: it is judged, as a branch is."""
    import pygit2

    try:
        tree = repo.revparse_single(rev).peel(pygit2.Commit).tree
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return False
    width = len(str(tree.id))
    folders: list[tuple[pygit2.Tree, str]] = [(tree, "")]
    while folders:
        folder, prefix = folders.pop()
        for entry in folder:
            name = prefix + (entry.name or "")
            if not _is_hex(name):
                return False
            if isinstance(entry, pygit2.Tree):
                if len(name) >= width or len(entry.name or "") != 2:
                    return False
                folders.append((entry, name))
            elif not isinstance(entry, pygit2.Blob) or len(name) != width:
                return False
    return True


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdef" for c in text)


def ref_name(local: str, remote: str) -> str:
    """A pushed ref by its name; ``main:release`` when it is pushed under another name."""
    return local if remote in (local, "") else f"{local}:{remote}"


# what pre-commit tells a pre-push hook of the pushed ref: where from, and where to
PRE_COMMIT_REFS = ("PRE_COMMIT_LOCAL_BRANCH", "PRE_COMMIT_REMOTE_BRANCH")


def pre_commit_label(env: Mapping[str, str], rev: str) -> str:
    """The ref pre-commit's pre-push judges, named as the plain hook names it."""
    local, remote = (env.get(n, "") for n in PRE_COMMIT_REFS)
    name = ref_name(local, remote) if local else remote or "the pushed ref"
    # a commit's id, shortened; a ref (a new branch's push, which pre-commit hands by name)
    # is named as it is
    is_id = len(rev) in (40, 64) and all(c in "0123456789abcdef" for c in rev)
    return f"{name} ({rev[:12]})" if is_id else f"{name} ({rev})" if rev != local else name


def _label(commit: str, names: Sequence[str]) -> str:
    """``refs/heads/x (0123456789ab)``; a commit many refs point at is named once."""
    more = len(names) - 1
    also = f", and {more} more {'ref' if more == 1 else 'refs'}" if more else ""
    return f"{names[0]} ({commit[:12]}{also})"


def pre_commit_rev(env: Mapping[str, str]) -> str:
    """The commit pre-commit hands a pre-push hook, failing closed when it hands none."""
    to_ref = env.get("PRE_COMMIT_TO_REF")
    if to_ref:
        return to_ref
    # A push of a whole new history: pre-commit passes the local branch but no refs.
    local = env.get("PRE_COMMIT_LOCAL_BRANCH")
    if local:
        return local
    raise GenstampError(
        "pre-commit gave this pre-push hook no ref to judge (PRE_COMMIT_TO_REF is unset)",
        "run `genstamp verify --rev <branch>` yourself, or use genstamp's plain hooks/pre-push",
        code=EXIT_REFUSED,
    )


def restamp_trigger(hook: str, env: Mapping[str, str]) -> str | None:
    """The generation trigger for a hook, or None when this invocation must not restamp."""
    if hook == "restamp":  # the pre-commit entry: tell the stage from pre-commit's environment
        if "PRE_COMMIT_CHECKOUT_TYPE" in env:
            hook = "post-checkout"
        elif "PRE_COMMIT_IS_SQUASH_MERGE" in env:
            hook = "post-merge"
        elif "PRE_COMMIT_REWRITE_COMMAND" in env:
            hook = "post-rewrite"
        else:
            hook = "post-checkout"
    if hook == "post-checkout" and env.get(SKIP_ENV):
        return None
    return hook
