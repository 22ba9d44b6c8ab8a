"""Signing with the SSH key git signs with, and checking against git's allowed signers.

``ssh-keygen -Y sign -n genstamp -f <user.signingkey>`` over the DSSE PAE bytes (the convention
gittuf uses inside DSSE), and ``ssh-keygen -Y find-principals`` then ``-Y verify -I <principal>
-n genstamp`` against an allowed signers file (git's ``gpg.ssh.allowedSignersFile`` format). The
namespace keeps a genstamp signature from passing as a git commit signature and back.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from genstamp.errors import GenstampError
from genstamp.typedtuple import NamedTuple

NAMESPACE = "genstamp"


class Checked(NamedTuple):
    signer: str  # the principal whose signature verified ("" when none did)
    problem: str  # why not ("" when one did)
    fingerprint: str = ""  # the verifying key's (SHA256:…), as ssh-keygen names it


def git_config(cwd: Path, name: str) -> str:
    """A git config value as git reads it here ("" when unset)."""
    proc = subprocess.run(
        ["git", "config", "--get", name], cwd=cwd, capture_output=True, text=True, check=False
    )
    return proc.stdout.strip() if proc.returncode == 0 else ""


def config_path(cwd: Path, name: str) -> Path | None:
    """A path git's configuration gives (``gpg.ssh.allowedSignersFile``), as git reads it:
    ``~`` expanded, a relative one from the top of the work tree ``cwd`` (where git runs its
    commands), wherever genstamp was started; None when unset."""
    found = git_config(cwd, name)
    return cwd / os.path.expanduser(found) if found else None


def revocation_file(cwd: Path) -> Path | None:
    """git's ``gpg.ssh.revocationFile``: the keys and certificates no signature may be made
    with any longer (a KRL, or public keys), as ``git verify-commit`` takes it."""
    return config_path(cwd, "gpg.ssh.revocationFile")


def signing_key(cwd: Path) -> str:
    """The key git signs with (``user.signingkey``, ``gpg.format=ssh``): a path (a relative one
    from the top of the work tree ``cwd``, as git reads it), or a literal ``key::`` public key
    whose private half an ssh-agent holds (given as ``key::`` for one written bare, ``ssh-…``,
    which git still takes for a literal key)."""
    fmt = git_config(cwd, "gpg.format")
    key = git_config(cwd, "user.signingkey")
    if fmt != "ssh" or not key:
        raise GenstampError(
            "git is not set up to sign with an SSH key (gpg.format=ssh and user.signingkey)",
            "git config gpg.format ssh && git config user.signingkey ~/.ssh/id_ed25519.pub",
        )
    if key.startswith("ssh-"):
        return f"key::{key}"
    return key if key.startswith("key::") else str(cwd / os.path.expanduser(key))


def _ssh_keygen(args: Sequence[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["ssh-keygen", *args], input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise GenstampError(
            "ssh-keygen is not on PATH", "install OpenSSH (8.2 or later) to sign and verify"
        ) from None


class Signed(NamedTuple):
    signature: bytes  # armored (-----BEGIN SSH SIGNATURE-----)
    fingerprint: str  # the signing key's, SHA256:…: the envelope's keyid


def sign(data: bytes, key: str) -> Signed:
    """The armored SSH signature of ``data`` by ``key``, and the key's fingerprint."""
    with tempfile.TemporaryDirectory(prefix="genstamp-sign-") as tmp:
        if key.startswith("key::"):
            path = Path(tmp, "key.pub")
            path.write_text(key[len("key::") :] + "\n")
        else:
            path = Path(os.path.expanduser(key))
        proc = _ssh_keygen(["-q", "-Y", "sign", "-n", NAMESPACE, "-f", str(path)], data)
        listed = _ssh_keygen(["-l", "-f", str(path)], b"")
    if proc.returncode != 0 or b"BEGIN SSH SIGNATURE" not in proc.stdout:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason"]
        raise GenstampError(
            f"ssh-keygen could not sign with {key}: {why[0]}",
            "check user.signingkey (a key file, or an agent holding the key)",
        )
    return Signed(proc.stdout, _fingerprint(listed.stdout))


def _fingerprint(output: bytes) -> str:
    """The first ``SHA256:…`` word of ssh-keygen's output ("" when none)."""
    words = output.decode("utf-8", "replace").split()
    return next((w.rstrip(".") for w in words if w.startswith("SHA256:")), "")


def verify(data: bytes, signature: bytes, allowed: Path, revoked: Path | None = None) -> Checked:
    """Whether ``signature`` over ``data`` is by a principal of the allowed signers file, by a
    key the revocation file (``revoked``: git's ``gpg.ssh.revocationFile``) does not revoke."""
    if not allowed.is_file():
        return Checked("", f"the allowed signers file {allowed} does not exist")
    if revoked is not None and not revoked.is_file():  # (ssh-keygen, and git, refuse then)
        return Checked("", f"the revocation file {revoked} (gpg.ssh.revocationFile) does not exist")
    with tempfile.TemporaryDirectory(prefix="genstamp-verify-") as tmp:
        sig = Path(tmp, "sig")
        sig.write_bytes(signature)
        found = _ssh_keygen(["-Y", "find-principals", "-s", str(sig), "-f", str(allowed)], b"")
        principals = found.stdout.decode("utf-8", "replace").split()
        if found.returncode != 0 or not principals:
            return Checked(
                "",
                f"signed by a key that is not in {allowed}, or is listed there with"
                " valid-after/valid-before dates that leave out the present",
            )
        for principal in principals:
            args = ["-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE]
            against = ["-r", str(revoked)] if revoked is not None else []
            proc = _ssh_keygen([*args, *against, "-s", str(sig)], data)
            if proc.returncode == 0:
                return Checked(principal, "", _fingerprint(proc.stdout + proc.stderr))
            if against and _ssh_keygen([*args, "-s", str(sig)], data).returncode == 0:
                return Checked("", f"signed by {principal} with a key that {revoked} revokes")
    return Checked(
        "",
        f"the signature does not verify for namespace {NAMESPACE} (by {principals[0]}: a key"
        " the file allows only for other namespaces, or a signature of other data)",
    )
