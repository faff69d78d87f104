"""The v1model packet flow as BMv2 simple_switch implements it (docs/simple_switch.md).

ingress pass: parser -> verifyChecksum -> ingress, then in BMv2's order: I2E clone, resubmit,
multicast (mcast_grp != 0), drop (egress_spec == 511), unicast to egress_spec.
egress pass: egress, then E2E clone, drop (egress_spec == 511), computeChecksum -> deparser,
recirculate or transmit.

A parser error does NOT drop the packet in v1model.  BMv2's simple_switch.md ("Restrictions on
parser code"): a packet reaching the reject state, e.g. by failing a verify call, is not
automatically dropped; it begins Ingress processing with standard_metadata.parser_error equal to
the error that occurred.  The header being extracted when the error happened stays invalid.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from ..api import Replica
from ..check.fields import pyfield
from ..check.program import Program
from ..check.types import StructT
from ..pygen import PyCode, rtlib
from .instances import Instances, PacketCtx

DROP_PORT = 511
# standard_metadata.instance_type values (BMv2 simple_switch.h PktInstanceType)
NORMAL, INGRESS_CLONE, EGRESS_CLONE, COALESCED, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 3, 4, 5, 6
MAX_PASSES = 64


@dataclass
class _Egress:
    hdr: Any
    meta: Any
    std: Any
    payload: bytes
    depth: int
    truncate: int = 0  # bytes to keep on output (truncate() in ingress, clone session length); 0 = all


@dataclass
class _Ingress:
    data: bytes
    port: int
    itype: int
    preserved: dict | None
    depth: int


class PacketFlow:
    """The v1model packet flow of one compiled program (parser .. deparser, PRE, clones)."""

    def __init__(self, program: Program, code: PyCode | None, inst: Instances):
        """``code``: the program compiled by the python backend (None: another backend runs the
        packets and only the control-plane state here is used); ``inst``: this switch's
        run-time objects."""
        self.prog = program
        self.inst = inst
        self.code = code
        if code is not None:
            self._ns = code.ns
            self._parser = code.fn("parser")
            self._verify = code.fn("verify")
            self._ingress = code.fn("ingress")
            self._egress = code.fn("egress")
            self._compute = code.fn("compute")
            self._deparser = code.fn("deparser")
            self._hdr_cls = code.cls(program.hdr_t)
            self._meta_cls = code.cls(program.meta_t)
            self._std_cls = code.cls(program.std_t)
        self._pn = {role: [f"p_{p.name}" for p in ps] for role, ps in program.block_params.items()}
        self.mc: dict[int, list[Replica]] = {}
        self.sessions: dict[int, tuple[list[Replica], int]] = {}
        self.digest_queue: deque = deque()
        self.last_trace: list[str] = []
        self._field_lists = self._collect_field_lists(program.meta_t, program.decls.field_annotations)

    @property
    def drop_reason_trace(self) -> list[str]:
        return self.last_trace

    @staticmethod
    def _collect_field_lists(meta_t: StructT, anns: dict) -> dict[int, list[str]]:
        """``@field_list(i, ...)`` annotations on user metadata fields -> field names per list."""
        out: dict[int, list[str]] = {}
        for (sname, fname), ann in anns.items():
            if sname != meta_t.name:
                continue
            for idx in ann.get("field_list", []):
                if isinstance(idx, int):
                    out.setdefault(idx, []).append(fname)
        return out

    def _preserve(self, meta, idx) -> dict | None:
        if idx is None:
            return None
        if isinstance(idx, tuple):  # resubmit/recirculate/clone3 with an explicit field list
            return {f: getattr(meta, f) for f in idx if hasattr(meta, f)}
        return {pyfield(f): getattr(meta, pyfield(f)) for f in self._field_lists.get(idx, [])}

    def _L(self, role: str, *vals):
        L = rtlib.Locals()
        for n, v in zip(self._pn[role], vals, strict=False):
            setattr(L, n, v)
        return L

    # ------------------------------------------------------------ entry
    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the pipeline; return (egress port, frame) in emission order."""
        if not 0 <= port < DROP_PORT:
            raise ValueError(f"ingress port {port} out of range 0..510")
        out: list[tuple[int, bytes]] = []
        self.last_trace = trace = []
        work: deque = deque([_Ingress(bytes(data), port, NORMAL, None, 0)])
        passes = 0
        while work:
            item = work.popleft()
            passes += 1
            if passes > MAX_PASSES:
                trace.append("drop: too many resubmit/recirculate/clone passes")
                break
            if isinstance(item, _Ingress):
                self._ingress_pass(item, work, trace)
            else:
                self._egress_pass(item, work, out, trace)
        return out

    def _parse(self, data: bytes, port: int, itype: int, preserved: dict | None, ctx: PacketCtx):
        hdr, meta, std = self._hdr_cls(), self._meta_cls(), self._std_cls()
        std.ingress_port = port
        # simple_switch.md: packet_length is set for new and recirculated packets; for clones and
        # resubmitted packets it becomes 0 unless preserved in a field list.
        std.packet_length = len(data) if itype in (NORMAL, RECIRC) else 0
        std.instance_type = itype
        if preserved:
            for k, v in preserved.items():
                setattr(meta, k, v)
        pk = rtlib.PacketIn(data)
        try:
            self._parser(self._L("parser", pk, hdr, meta, std))
        except rtlib.Reject as r:
            std.parser_error = r.code
            ctx.trace.append(f"parser error {self.prog.decls.errors[r.code]} (packet continues to ingress)")
        ctx.payload = data[pk.pos >> 3:]
        return hdr, meta, std

    # ------------------------------------------------------------ ingress
    def _ingress_pass(self, item: _Ingress, work: deque, trace: list) -> None:
        ctx = PacketCtx(trace=trace)
        self._ns["_C"] = ctx
        self.inst.state.cur_len = len(item.data)
        self.inst.state.dm_color = -1
        hdr, meta, std = self._parse(item.data, item.port, item.itype, item.preserved, ctx)
        try:
            self._verify(self._L("verify", hdr, meta))
        except rtlib.Exit:
            pass
        std.checksum_error = ctx.checksum_error
        ctx.std = std
        try:
            self._ingress(self._L("ingress", hdr, meta, std))
        except rtlib.Exit:
            trace.append("exit in ingress")
        except rtlib.Reject as r:
            err = self.prog.decls.errors[r.code]
            trace.append(f"drop: {err} in ingress (header stack index out of range)")
            return
        self.digest_queue.extend(ctx.digests)
        if ctx.clone is not None and ctx.clone[0] == 0:  # CloneType.I2E
            self._clone(ctx.clone, item.data, item.port, meta, INGRESS_CLONE, item.depth, work, trace)
        elif ctx.clone is not None:
            trace.append("clone(E2E) called in ingress: ignored (E2E clones are made after egress)")
        if ctx.resubmit is not None:
            trace.append("resubmit")
            work.append(_Ingress(item.data, item.port, RESUBMIT, self._preserve(meta, ctx.resubmit),
                                 item.depth + 1))
            return
        if std.mcast_grp != 0:
            reps = self.mc.get(std.mcast_grp)
            if not reps:
                trace.append(f"drop: multicast group {std.mcast_grp} has no replicas")
                return
            trace.append(f"multicast group {std.mcast_grp}: {len(reps)} replicas")
            for r in reps:
                s2 = std.copy()
                s2.egress_port, s2.egress_rid, s2.instance_type = r.port, r.rid, REPLICATION
                work.append(_Egress(hdr.copy(), meta.copy(), s2, ctx.payload, item.depth, ctx.truncate or 0))
            return
        if std.egress_spec == DROP_PORT:
            trace.append("drop: egress_spec == 511 after ingress (mark_to_drop or no forwarding decision)")
            return
        std.egress_port = std.egress_spec
        work.append(_Egress(hdr, meta, std, ctx.payload, item.depth, ctx.truncate or 0))

    def _clone(self, req, data, port, meta, itype, depth, work, trace) -> None:
        _t, session, fl = req
        sess = self.sessions.get(session)
        if sess is None:
            trace.append(f"clone to session {session}: no such session, ignored")
            return
        reps, trunc = sess
        pres = self._preserve(meta, fl)
        for r in reps:
            ctx = PacketCtx(trace=trace)
            saved = self._ns["_C"]
            self._ns["_C"] = ctx
            try:
                hdr, m2, std = self._parse(data, port, itype, pres, ctx)
            finally:
                self._ns["_C"] = saved
            std.egress_port, std.egress_rid, std.instance_type = r.port, r.rid, itype
            std.egress_spec = r.port
            work.append(_Egress(hdr, m2, std, ctx.payload, depth + 1, trunc))
            kind = "I2E" if itype == INGRESS_CLONE else "E2E"
            trace.append(f"clone ({kind}) session {session} -> port {r.port}")

    # ------------------------------------------------------------ egress
    def _egress_pass(self, item: _Egress, work: deque, out: list, trace: list) -> None:
        ctx = PacketCtx(trace=trace, payload=item.payload)
        self._ns["_C"] = ctx
        hdr, meta, std = item.hdr, item.meta, item.std
        ctx.std = std
        self.inst.state.cur_len = std.packet_length
        self.inst.state.dm_color = -1
        try:
            self._egress(self._L("egress", hdr, meta, std))
        except rtlib.Exit:
            trace.append("exit in egress")
        except rtlib.Reject as r:
            err = self.prog.decls.errors[r.code]
            trace.append(f"drop: {err} in egress (header stack index out of range)")
            return
        self.digest_queue.extend(ctx.digests)
        frame = None
        if ctx.clone is not None and ctx.clone[0] == 1:  # CloneType.E2E
            frame = self._deparse(hdr, meta, ctx)
            self._clone(ctx.clone, frame, std.ingress_port, meta, EGRESS_CLONE, item.depth, work, trace)
        elif ctx.clone is not None:
            trace.append("clone(I2E) called in egress: ignored (I2E clones are made after ingress)")
        if std.egress_spec == DROP_PORT:
            trace.append("drop: mark_to_drop in egress")
            return
        if frame is None:
            frame = self._deparse(hdr, meta, ctx)
        # truncate(): v1model cuts the packet to the given length when it is transmitted
        if ctx.truncate is not None:
            frame = frame[: ctx.truncate]
        if item.truncate:
            frame = frame[: item.truncate]
        if ctx.recirculate is not None:
            trace.append("recirculate")
            work.append(_Ingress(frame, std.ingress_port, RECIRC, self._preserve(meta, ctx.recirculate),
                                 item.depth + 1))
            return
        trace.append(f"output port {std.egress_port} ({len(frame)} bytes)")
        out.append((std.egress_port, frame))

    def _deparse(self, hdr, meta, ctx: PacketCtx) -> bytes:
        try:
            self._compute(self._L("compute", hdr, meta))
        except rtlib.Exit:
            pass
        po = rtlib.PacketOut()
        self._deparser(self._L("deparser", po, hdr))
        return b"".join(po.parts) + ctx.payload
