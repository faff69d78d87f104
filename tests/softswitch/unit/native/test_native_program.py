"""Differential test on the project's P4 program (``p4src/dhc.p4``, read as it is now): random
table state, multicast groups, clone sessions and register contents, then random frames; the
native and the python backend must emit byte-identical frames and end with identical register,
counter and direct-counter state.

Nothing here knows the program's headers or tables: frames are chains of the program's own
header types (in the order of its headers struct) whose fields take the program's constants or
values used in the installed entries, so the parser's paths and the tables' keys are hit.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from softswitch.api import EntryExistsError, Exact, Lpm, Optional, Range, Replica, RuntimeAPIError, Ternary
from softswitch.check.decls import cp_name
from softswitch.check.types import BitT, HeaderT
from softswitch.native.build import compiler
from softswitch.native.switch import NativeSwitch
from softswitch.target.externs import csum16
from softswitch.target.switch import Switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")
PROGRAM = Path(__file__).resolve().parents[4] / "p4src" / "dhc.p4"
DEFINES = {"DHC_LANES": "4", "DHC_POOL_SIZE": "64", "DHC_MAX_JOBS": "8"}


def _pool(sw: Switch) -> list[int]:
    vals = {0, 1, 2, 3}
    for c in sw.prog.decls.consts.values():
        if isinstance(c.value, int) and c.value >= 0:
            vals.add(c.value)
    return sorted(vals)


def _value(r: random.Random, pool: list[int], w: int) -> int:
    """A value for a w-bit field: mostly a program constant of about that width."""
    fits = [v for v in pool if v < 1 << w]
    close = [v for v in fits if v.bit_length() > w // 2]
    x = r.random()
    if close and x < 0.5:
        return r.choice(close)
    if fits and x < 0.8:
        return r.choice(fits)
    return r.getrandbits(w)


def _match(r, pool, key):
    w = key.width
    v = _value(r, pool, w)
    kind = key.match_kind
    if kind == "exact":
        return Exact(v)
    if kind == "lpm":
        plen = r.choice([w // 2, w - 1, w, w, w]) if w > 1 else w
        return Lpm(v & (((1 << plen) - 1) << (w - plen)) if plen else 0, plen)
    if kind == "ternary":
        return Ternary(v, r.choice([(1 << w) - 1] * 6 + [r.getrandbits(w)] * 3 + [0]))
    if kind == "range":
        a, b = sorted((v, _value(r, pool, w)))
        return Range(a, b)
    return Optional(None if r.random() < 0.1 else v)


def _ops(sw: Switch, r: random.Random) -> list[tuple]:
    """A random control-plane history (method name, args), replayed on both switches."""
    pool = _pool(sw)
    ops: list[tuple] = []
    for info in sw.prog.tables.values():
        if info.entries_const:
            continue
        t = sw.inst.tables[info.name]
        for _ in range(r.randint(0, 6)):
            cands = [i for i, a in enumerate(info.actions) if "defaultonly" not in info.action_annotations[i]]
            if not cands:
                break
            a = info.actions[r.choice(cands)]
            params = {cp_name(p): _value(r, pool, getattr(p.type, "width", 1)) for p in a.data_params}
            match = {k.name: _match(r, pool, k) for k in info.keys}
            prio = r.randint(1, 20) if t.needs_priority else None
            ops.append(("table_add", info.name, a.name, match, params, prio))
            for mv in match.values():  # key values become packet field values
                if hasattr(mv, "value") and isinstance(mv.value, int):
                    pool.append(mv.value)
        if not info.default_const and r.random() < 0.5:
            cands = [a for i, a in enumerate(info.actions) if "tableonly" not in info.action_annotations[i]]
            a = r.choice(cands)
            params = {cp_name(p): _value(r, pool, getattr(p.type, "width", 1)) for p in a.data_params}
            ops.append(("table_set_default", info.name, a.name, params))
    for gid in range(1, 9):
        reps = [Replica(r.randint(0, 8), r.randint(0, 3)) for _ in range(r.randint(1, 3))]
        ops.append(("mc_group_set", gid, reps))
    for sid in range(0, 4):
        ops.append(("clone_session_set", sid, [Replica(r.randint(0, 8), 0)]))
    for inst in sw.prog.extern_insts.values():
        if inst.extern == "register":
            for _ in range(4):
                ops.append(
                    ("register_write", inst.name, r.randrange(inst.obj.size), _value(r, pool, inst.obj.width))
                )
    return ops


def _apply(sw: Switch, ops: list[tuple]) -> None:
    for op in ops:
        try:
            getattr(sw, op[0])(*op[1:])
        except (EntryExistsError, RuntimeAPIError, ValueError):
            pass


def _fields(r: random.Random, pool: list[int], keys: list[int], h: HeaderT) -> list[int]:
    ipv4 = any(f == "hdrChecksum" for f, _ in h.fields) and r.random() < 0.9
    out = []
    for f, ft in h.fields:
        fw = ft.width if isinstance(ft, BitT) else 1
        if ipv4 and f in ("version", "ihl"):  # an IPv4 header without options, most of the time
            out.append(4 if f == "version" else 5)
            continue
        fk = [k for k in keys if k < 1 << fw]
        out.append(r.choice(fk) if fk and r.random() < 0.3 else _value(r, pool, fw))
    return out


def _encode(chain: list[HeaderT], vals: list[list[int] | None], cut: int | None) -> bytes:
    data = b""
    for h, fv in zip(chain, vals, strict=True):
        if fv is None:
            continue
        v, w, ck = 0, 0, None
        for (f, ft), x in zip(h.fields, fv, strict=True):
            fw = ft.width if isinstance(ft, BitT) else 1
            if f == "hdrChecksum":  # an IPv4-style header checksum, computed
                ck, x = w, 0
            v, w = (v << fw) | x, w + fw
        b = v.to_bytes(w // 8, "big")
        if ck is not None:
            b = b[: ck // 8] + csum16(b).to_bytes(2, "big") + b[ck // 8 + 2:]
        data += b
    return data if cut is None else data[:cut]


def _counters(sw: Switch) -> dict:
    return {(i.name, k): sw.counter_read(i.name, k)[0] for i in sw.prog.extern_insts.values()
            if i.extern == "counter" for k in range(i.obj.size)}


def _corpus(sw: Switch, r: random.Random, pool: list[int], keys: list[int], n: int) -> list[bytes]:
    """Frames found by mutating header fields, kept when they reach a parser/table path not seen
    yet (coverage from a traced python switch with the same state)."""
    chain = [ft for _n, ft in sw.prog.hdr_t.fields if isinstance(ft, HeaderT)]
    seen: set = set()
    corpus: list[list] = []
    frames: list[bytes] = []
    for _ in range(n):
        if corpus and r.random() < 0.8:
            vals = [None if fv is None else list(fv) for fv in r.choice(corpus)]
            i = r.randrange(len(chain))
            if vals[i] is None or r.random() < 0.2:
                vals[i] = None if vals[i] is not None and i else _fields(r, pool, keys, chain[i])
            else:
                j = r.randrange(len(vals[i]))
                vals[i][j] = _fields(r, pool, keys, chain[i])[j]
        else:
            vals = [
                _fields(r, pool, keys, h) if not i or r.random() < 0.7 else None for i, h in enumerate(chain)
            ]
        frame = _encode(chain, vals, None)
        before = _counters(sw)
        sw.process(r.randint(0, 8), frame)
        after = _counters(sw)
        sig = tuple(t for t in sw.last_trace if t.startswith(("parser state", "table", "drop", "multicast",
                                                                "clone", "output")))
        sig += tuple(k for k in after if after[k] != before[k])  # e.g. which drop reason was counted
        if sig not in seen:
            seen.add(sig)
            corpus.append(vals)
            frames.append(frame)
    return frames


def _state(sw: Switch) -> dict:
    out: dict = {}
    for inst in sw.prog.extern_insts.values():
        if inst.extern == "register":
            out[inst.name] = [sw.register_read(inst.name, i) for i in range(inst.obj.size)]
        elif inst.extern == "counter":
            out[inst.name] = [sw.counter_read(inst.name, i) for i in range(inst.obj.size)]
    for name, info in sw.prog.tables.items():
        if info.direct_counter is not None:
            out[name] = [e.counter for e in sw.table_entries(name)]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_state_and_frames_agree(seed: int):
    py = Switch.load(PROGRAM, defines=DEFINES)
    nat = NativeSwitch.load(PROGRAM, defines=DEFINES)
    r = random.Random(seed)
    ops = _ops(py, r)
    _apply(py, ops)
    _apply(nat, ops)
    pool = _pool(py)
    keys = [op[3][k].value for op in ops if op[0] == "table_add"
            for k in op[3] if isinstance(getattr(op[3][k], "value", None), int)]
    guide = Switch.load(PROGRAM, defines=DEFINES, trace=True)
    _apply(guide, ops)
    frames = _corpus(guide, r, pool, keys, 400)
    assert len(frames) >= 4, "the frames reach too few parser/table paths to compare anything"
    for i in range(300):
        port = r.randint(0, 8)
        frame = r.choice(frames)
        if r.random() < 0.1:
            frame = frame[: r.randrange(len(frame) + 1)]  # short frames: parser errors
        assert nat.process(port, frame) == py.process(port, frame), (seed, i, frame.hex())
    assert _state(nat) == _state(py)
    assert nat.digests() == py.digests()
