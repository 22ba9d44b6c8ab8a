"""What a hook script does with genstamp's call, read from its text.

A hook genstamp writes carries ``MARKER``. A hook of the user's (one the repository commits,
husky's, a pre-commit ``.legacy``) may call ``genstamp hook HOOK`` itself: whether it does, and
whether it then lets a refused push through (its status ignored) or reads git's ref lines
before or after genstamp (which then judges no ref), is read here from the script's lines, per
simple command, with quoted words masked. ``install`` names what it finds; ``doctor`` warns."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

MARKER = "# genstamp-hook: installed by `genstamp install`"


def holds(path: Path, text: str) -> bool:
    """Whether the file at ``path`` holds ``text`` (False when it cannot be read)."""
    try:
        return text.encode() in path.read_bytes()
    except OSError:
        return False


def is_genstamp_hook(path: Path) -> bool:
    return holds(path, MARKER)


def pre_push_gone(workdir: str, paths: Sequence[str] | None = None) -> str | None:
    """After git changed the work tree (the paths it wrote, None: unknown): the warning that
    the hooks folder git runs, when it is a folder of the work tree (``core.hooksPath =
    .githooks``, or ``.git/hooks`` a link there: the commit's), holds no pre-push that runs
    genstamp's: the checked-out commit lacks the team's, or commits one that does not call
    genstamp (git overwrites the ignored one install wrote). A push from here is judged by no
    hook. None when it holds one, or the hooks folder is no folder of the work tree."""
    from genstamp import changed

    if paths is not None and not any(p.rpartition("/")[2] == "pre-push" for p in paths):
        return None  # (git wrote no pre-push: the one install left stands)
    said = changed.git_output(workdir, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
    folder = os.fsdecode((said or b"").strip())
    if not folder:
        return None
    top = os.path.realpath(workdir)
    real = os.path.realpath(folder)
    if not real.startswith(top + os.sep) or f"{os.sep}.git{os.sep}" in real[len(top) :] + os.sep:
        return None  # (the git dir's own hooks folder, which no checkout writes)
    hook = Path(real, "pre-push")
    if calls_genstamp(hook, "pre-push"):
        return None
    return (
        f"{os.path.relpath(hook, top)}, the hooks folder being a folder of the work tree, is "
        "not in this checkout or does not run genstamp's (the commit lacks the team's "
        "pre-push, or commits one that does not call genstamp): a push from here is judged by "
        "no hook — where the commit has none, `genstamp install` writes genstamp's own there; "
        'a committed one must call `genstamp hook pre-push "$@" || exit $?` itself'
    )


def calls_genstamp(path: Path, hook: str) -> bool:
    """Whether the hook at ``path`` is genstamp's or runs ``genstamp hook HOOK`` itself (a
    hook the repository commits, which the user made call genstamp)."""
    if is_genstamp_hook(path):
        return True
    return _call_lines(path, hook) is not None


def _users_call(path: Path, hook: str) -> tuple[list[str], int] | None:
    """``_call_lines`` of a hook of the user's (None for genstamp's own)."""
    return None if is_genstamp_hook(path) else _call_lines(path, hook)


def _call_lines(path: Path, hook: str) -> tuple[list[str], int] | None:
    """The hook's command lines (comments and blank lines left out, a line continued with
    ``\\`` joined to the next) and the index of the first that runs ``genstamp hook HOOK``;
    None when none does."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    quote = "[\"']"
    call = re.compile(
        rf"(?:^|[\s;&|(`]|{quote}|[\w./-]/)genstamp{quote}?\s+hook\s+{re.escape(hook)}"
        rf"(?:{quote}|[\s;]|$)"
    )
    lines: list[str] = []
    for raw in text.replace("\\\n", " ").splitlines():
        if raw.strip() and not raw.lstrip().startswith("#"):
            lines.append(raw.strip())
    found = next((n for n, line in enumerate(lines) if call.search(line)), None)
    return None if found is None else (lines, found)


# what makes a call's failure end the hook: `|| exit`, `|| { ...; exit 1; }` (an exit in a
# `( ... )` leaves only its subshell), its `$?` read and then an exit
_EXITS_ON_FAILURE = re.compile(r"\|\|\s*(?:exit|return)\b(?!\s+0*0\b)")  # (`exit 0`: success)
_PIPE = re.compile(r"(?<!\|)\|(?!\|)")
_PIPEFAIL = re.compile(r"^set\s+.*-o\s+pipefail|^set\s+-[a-zA-Z]*o\s+pipefail")
_BLOCK_ON_FAILURE = re.compile(r"\|\|\s*\{")
_EXITS = re.compile(r"\b(?:exit|return)\b(?!\s+0*0\b)")  # a failure's (not `exit 0`)
_STATUS_READ = re.compile(r"\$\?")
# `set -e` (`set -eu`, `set -o errexit`), or husky's v8 script, which runs the hook `sh -e`
_ERREXIT = re.compile(r"^set\s+(?:-[a-zA-Z]*e|-o\s+errexit)|husky\.sh")


def _shebang_errexit(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            first = fh.readline(200).decode("utf-8", "replace")
    except OSError:
        return False
    words = first[2:].split()[1:] if first.startswith("#!") else []
    return any(re.fullmatch(r"-[a-zA-Z]*e[a-zA-Z]*", w) for w in words)


STDIN_TAKEN = (
    "{} reads git's ref lines before genstamp's call ({}): genstamp's then reads none and "
    "judges no ref (a refused push would go through)"
)
STDIN_LEFT_NONE = (
    "{} runs a command that reads git's ref lines after genstamp's call ({}), which read them "
    "first: it gets none (git-lfs then pushes no object)"
)
STDIN_REMEDY = (
    "read them once and give them to both, `refs=$(cat)`, then "
    '`printf \'%s\\n\' "$refs" | git lfs pre-push "$@"` and '
    '`printf \'%s\\n\' "$refs" | genstamp hook pre-push "$@" || exit $?`'
)
STATUS_IGNORED = (
    "{} seems to go on when genstamp refuses (its status is not the hook's: a refused push "
    'would go through): end that line with `|| exit $?` (`genstamp hook pre-push "$@" || exit '
    "$?`), or set -e before it"
)


def status_ignored(path: Path, hook: str) -> bool:
    """Whether a hook of the user's that runs ``genstamp hook HOOK`` may go on past its
    refusal, as far as its text tells: the call is not ``exec``'d, no ``|| exit`` follows it
    (nor a ``|| { ... }`` block that exits), its ``$?`` is not read (on its line or the next)
    and then exited on, it is not negated in an ``if !``, no ``set -e`` (or husky's script,
    which runs the hook with ``sh -e``) comes before it, and it is not the hook's last
    command (whose status is the hook's) alone on its line. A plain ``#!/bin/sh`` hook whose
    first line calls genstamp, then runs more, exits with its last command's status."""
    found = _users_call(path, hook)
    if found is None:
        return False
    lines, at = found
    line = lines[at]
    before, after = _around_call(line)
    last = at == len(lines) - 1
    errexit = any(_ERREXIT.search(earlier) for earlier in lines[:at]) or _shebang_errexit(path)
    pipefail = any(_PIPEFAIL.search(earlier) for earlier in lines[:at])
    if _PIPE.search(_masked(after).split("||", 1)[0]) and not pipefail:
        # `genstamp … | tee log || exit $?`: the status is tee's, unless bash's PIPESTATUS is
        # read and then exited on
        return not any("PIPESTATUS" in ln and _EXITS.search(ln) for ln in lines[at : at + 3])
    inner = _subshell(before, after)
    if inner is not None:  # `( cd top && genstamp … || exit 1 )`: that exit ends the subshell
        within, rest = inner
        passed = bool(_EXITS_ON_FAILURE.search(within)) or _alone(within)
        ended = bool(_EXITS_ON_FAILURE.search(rest)) or errexit or (last and _alone(rest))
        return not (passed and ended)
    if line.startswith(("exec ", "if !", "if ! ", "until ")) or _EXITS_ON_FAILURE.search(after):
        return False
    if line.startswith("if ") and _EXITS.search(_else_branch(" ".join(lines[at:]))):
        return False  # `if genstamp …; then :; else exit 1; fi`
    if _BLOCK_ON_FAILURE.search(line):  # `|| {` ... `}`: an exit inside it
        block = " ".join([line.split("||", 1)[1], *lines[at + 1 :]]).split("}", 1)[0]
        if _EXITS.search(block):
            return False
    read = [n for n in (at, at + 1) if n < len(lines) and _STATUS_READ.search(lines[n])]
    if read and any(_EXITS.search(ln) for ln in lines[read[0] : read[0] + 3]):
        return False  # its status looked at, then an exit: `status=$?`, `[ ... ] || exit`
    if errexit:
        return False
    # the last command, alone (`|| false` keeps a failure one): its status is the hook's
    return not (last and _alone(re.sub(r"\|\|\s*false\s*$", "", after)))


def _else_branch(text: str) -> str:
    """The ``else`` branch of the ``if`` that ``text`` begins with, up to its own ``fi`` (an
    inner ``if … fi`` kept whole); "" where it has none."""
    depth, start = 0, None
    for word in re.finditer(r"\b(?:if|fi|else|elif)\b", _masked(text)):
        kind = word.group()
        if kind == "if":
            depth += 1
        elif kind == "fi":
            depth -= 1
            if depth == 0:
                return text[start : word.start()] if start is not None else ""
        elif depth == 1:
            start = word.end() if kind == "else" else None  # (an elif's test: not the else)
    return text[start:] if start is not None else ""


def _alone(after: str) -> bool:
    """Whether nothing runs after the call in the text ``after`` it: no ``;``, pipe, ``&&``
    or ``||`` (whose command's status would be the line's)."""
    return not re.search(r";\s*\S|\||&&", after)


def _around_call(line: str) -> tuple[str, str]:
    """The text of ``line`` before the call's ``genstamp hook``, and after its ``genstamp``."""
    found = re.search(r"genstamp[\"']?\s+hook\b", line)
    at = found.start() if found is not None else line.find("genstamp")
    return line[:at], line[at + len("genstamp") :]


def _subshell(before: str, after: str) -> tuple[str, str] | None:
    """Where the call is in a ``( ... )`` subshell: the text after the call inside it, and the
    text after it closes; None where it is not (``$( ... )`` is no subshell of the hook's)."""
    depth: list[bool] = []  # True: a subshell's parenthesis, False: a command substitution's
    for n, char in enumerate(before):
        if char == "(":
            depth.append(not (n and before[n - 1] == "$"))
        elif char == ")" and depth:
            depth.pop()
    if not depth or not depth[-1]:
        return None
    level = 0
    for n, char in enumerate(after):
        if char == "(":
            level += 1
        elif char == ")":
            if level == 0:
                return after[:n], after[n + 1 :]
            level -= 1
    return after, ""


def stdin_taken(path: Path, hook: str) -> str | None:
    """The command of a user's hook that reads git's ref lines (its stdin) before the line
    that runs ``genstamp hook HOOK``, which then reads none: genstamp judges no ref (``git lfs
    pre-push``, a ``while read`` loop, ``cat``); None where none does, or where the call is
    given its own input (``printf … | genstamp hook …``, ``< file``)."""
    return _stdin_readers(path, hook)[0]


def stdin_left_none(path: Path, hook: str) -> str | None:
    """The command of a user's hook after its ``genstamp hook HOOK`` line that reads git's ref
    lines, which genstamp's call read first (``git lfs pre-push`` then pushes no object); None
    where none does, or where genstamp's call is given its own input."""
    return _stdin_readers(path, hook)[1]


def _stdin_readers(path: Path, hook: str) -> tuple[str | None, str | None]:
    """The first command before a user's hook's ``genstamp hook HOOK`` line, and the first
    after it, that read the hook's stdin (``_reads_stdin``); none where the call is given its
    own input."""
    found = _users_call(path, hook)
    if found is None:
        return None, None
    lines, at = found
    before, after = _around_call(lines[at])
    if _PIPE.search(_masked(before)) or re.search(r"<(?!\()", _masked(after)):
        return None, None  # given its input
    readers = [n for n, line in enumerate(lines) if n != at and _reads_stdin(line, lines[n + 1 :])]
    first = next((lines[n] for n in readers if n < at), None)
    return first, next((lines[n] for n in readers if n > at), None)


def _masked(text: str) -> str:
    """``text`` with each quoted string (``'…'``, ``"…"``) put as ``Q``s, as long: what is
    quoted is a word, never a pipe, a redirect or a command."""
    return re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", lambda m: "Q" * len(m.group()), text)


# commands that read their standard input always, and those that do without a file operand
# (grep's and awk's first operand is their pattern or program)
_ALWAYS_READ = frozenset({"read", "xargs", "tee", "tr"})
_FILE_OR_STDIN = frozenset({"cat", "head", "tail", "sort", "uniq", "wc", "cut", "base64"})
_PATTERN_THEN_FILES = frozenset({"grep", "egrep", "fgrep", "awk", "gawk", "sed", "jq"})
_SCRIPTS = ("python", "perl", "ruby", "node")
_NEW_COMMAND = re.compile(r"\|\||&&|[;&(){}`]|\$\(|(?<![|])\|(?![|])")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "while", "until", "do", "!", "time"})


def _reads_stdin(line: str, rest: Sequence[str] = ()) -> bool:
    """Whether a command of the hook's ``line`` reads the hook's stdin (git's ref lines): one
    of ``_ALWAYS_READ``, a ``_FILE_OR_STDIN`` or ``_PATTERN_THEN_FILES`` command given no file,
    another tool's pre-push (``git lfs pre-push "$@"``), a script that names its stdin; not
    one fed by a pipe or a redirect (``< file``, a loop whose ``done`` in ``rest`` is)."""
    masked = _masked(line)
    fed = False
    start = 0
    for match in [*_NEW_COMMAND.finditer(masked), None]:
        end = match.start() if match is not None else len(masked)
        words = masked[start:end].split()
        while words and (words[0] in _KEYWORDS or re.match(r"^\w+=", words[0])):
            words = words[1:]
        if words and not fed and not any(re.match(r"^\d*<", w) for w in words):
            if _a_reader(words, line[start:end]) and not _loop_redirected(words, rest):
                return True
        fed = match is not None and match.group() == "|"
        start = match.end() if match is not None else end
    return False


def _a_reader(words: list[str], text: str) -> bool:
    """Whether the simple command ``words`` (quoted words masked; ``text`` as written) reads its
    standard input."""
    name = os.path.basename(words[0])
    operands = _operands(name, words[1:])
    if name in _ALWAYS_READ:
        return True
    if name in _FILE_OR_STDIN:
        return not operands or "-" in operands
    if name in _PATTERN_THEN_FILES:
        return len(operands) <= 1
    if words[1:3] == ["lfs", "pre-push"] or (len(words) > 1 and words[1] == "pre-push"):
        return "genstamp" not in text  # another tool's pre-push: git-lfs', "$LFS" pre-push
    return name.startswith(_SCRIPTS) and "stdin" in text.lower()


# the options of those commands that take a value as the next word
_VALUED = {
    "head": "nc",
    "tail": "nc",
    "cut": "dfcb",
    "sort": "kto",
    "grep": "efmABC",
    "egrep": "efmABC",
    "fgrep": "efmABC",
    "awk": "Fvf",
    "gawk": "Fvf",
    "sed": "ef",
    "jq": "",
    "uniq": "fs",
}


def _operands(name: str, words: Sequence[str]) -> list[str]:
    """The operands of the command ``name`` given ``words``: not its options, the values of
    those that take one (``head -n 1``), redirections (``> file``, ``2>/dev/null``) or what
    they name."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif re.match(r"^\d*[<>]", word):
            skip = re.fullmatch(r"\d*(?:>>?|<|>&|&>)", word) is not None  # the file next
        elif word.startswith("-") and word != "-":
            letters = word[1:] if not word.startswith("--") else ""
            skip = len(letters) == 1 and letters in _VALUED.get(name, "")
        else:
            out.append(word)
    return out


def _loop_redirected(words: list[str], rest: Sequence[str]) -> bool:
    """Whether the ``read`` of a ``while read`` loop reads a file its ``done`` redirects."""
    if words[0] != "read":
        return False
    for line in rest:
        if re.match(r"done\b", line):
            return "<" in _masked(line)
    return False
