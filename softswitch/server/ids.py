"""The P4Runtime server's side of the shared P4Info vocabulary (``p4rt``): an id a request names
that the P4Info lacks, or a byte string that does not fit its field, is INVALID_ARGUMENT; and a
P4Info a controller sends must match the program compiled from its device config."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2

from p4rt import P4InfoIndex, decode
from p4rt import encode as encode_bytes
from softswitch.server.errors import invalid


def index(p4info: p4info_pb2.P4Info) -> P4InfoIndex:
    """The index of ``p4info`` whose lookups of unknown ids are INVALID_ARGUMENT."""
    return P4InfoIndex.build(p4info, missing=invalid)


def decode_bytes(data: bytes, bitwidth: int, what: str) -> int:
    """``p4rt.decode``, its refusals INVALID_ARGUMENT."""
    try:
        return decode(data, bitwidth, what)
    except ValueError as err:
        raise invalid(str(err)) from None


def check_compatible(given: p4info_pb2.P4Info, compiled: p4info_pb2.P4Info) -> None:
    """Refuse a P4Info whose ids or names disagree with the program in the device config.

    The controller speaks in the ids of the P4Info it sends; the switch resolves
    them against its own compiled program, so the two must name the same objects.
    """
    mine = index(compiled)
    theirs = index(given)
    problems: list[str] = []
    for tid, t in theirs.tables.items():
        m = mine.tables.get(tid)
        if m is None or m.name != t.name:
            problems.append(f"table {t.name} (id {tid}) is not in the program")
            continue
        for fid, f in t.fields.items():
            mf = m.fields.get(fid)
            if mf is None or (mf.name, mf.bitwidth, mf.match_type) != (f.name, f.bitwidth, f.match_type):
                problems.append(f"match field {t.name}.{f.name} (id {fid}) differs from the program")
    for aid, a in theirs.actions.items():
        m = mine.actions.get(aid)
        if m is None or m.name != a.name:
            problems.append(f"action {a.name} (id {aid}) is not in the program")
            continue
        for pid, p in a.params.items():
            mp = m.params.get(pid)
            if mp is None or (mp.name, mp.bitwidth) != (p.name, p.bitwidth):
                problems.append(f"parameter {a.name}.{p.name} (id {pid}) differs from the program")
    for cid, c in theirs.counters.items():
        m = mine.counters.get(cid)
        if m is None or m.name != c.name:
            problems.append(f"counter {c.name} (id {cid}) is not in the program")
    if problems:
        shown = "; ".join(problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise invalid(f"P4Info does not match the P4 program in p4_device_config: {shown}{more}")


__all__ = ["check_compatible", "decode_bytes", "encode_bytes", "index"]
