"""DSSE envelopes (secure-systems-lab/dsse): the payload, its type, and signatures over PAE.

Pure. A signature covers ``PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP
body`` (lengths as ASCII decimal byte counts), never the JSON it travels in. ``keyid`` is a hint
only. Readers accept standard and URL-safe base64, as the protocol asks.
"""

from __future__ import annotations

import base64
import binascii
import json

from genstamp.typedtuple import NamedTuple

PAYLOAD_TYPE = "application/vnd.in-toto+json"


class Signature(NamedTuple):
    keyid: str
    sig: bytes


class Envelope(NamedTuple):
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...] = ()


def pae(payload_type: str, body: bytes) -> bytes:
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def to_json(envelope: Envelope) -> str:
    """One line of JSON (a JSON Lines bundle holds one envelope per line)."""
    return json.dumps(
        {
            "payload": base64.b64encode(envelope.payload).decode("ascii"),
            "payloadType": envelope.payload_type,
            "signatures": [
                {"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")}
                for s in envelope.signatures
            ],
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def b64decode(text: object) -> bytes:
    """Standard or URL-safe base64, padded or not; ValueError on anything else."""
    if not isinstance(text, str):
        raise ValueError("not a base64 string")
    padded = text + "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64decode(padded.encode("ascii"))
        return base64.b64decode(padded.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("not valid base64") from None


def from_json(text: str) -> Envelope:
    """Raises ValueError on anything but a DSSE envelope."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: arrays nested past the stack
        raise ValueError("not JSON") from None
    if not isinstance(data, dict) or not {"payload", "payloadType"} <= set(data):
        raise ValueError("payload and payloadType are required")
    signatures = data.get("signatures") or []
    if not isinstance(signatures, list) or not all(isinstance(s, dict) for s in signatures):
        raise ValueError("its signatures are not a list of objects")
    payload_type = data["payloadType"]
    if not isinstance(payload_type, str):
        raise ValueError("its payloadType is not a string")
    return Envelope(
        payload_type,
        b64decode(data["payload"]),
        tuple(Signature(str(s.get("keyid") or ""), b64decode(s.get("sig"))) for s in signatures),
    )
