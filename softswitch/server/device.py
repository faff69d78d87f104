"""One switch device: the loaded pipeline, its lock, and the CPU-port packet plumbing.

The Switch is not thread-safe, and two threads touch it (the port receive loop
and gRPC workers), so every call goes through ``Device.lock``.  Frames the
pipeline sends to the CPU port become PacketIn messages; PacketOut messages are
injected as frames arriving on the CPU port.

Device config format (``ForwardingPipelineConfig.p4_device_config``): the
preprocessed, self-contained P4_16 source text of the program, UTF-8 encoded,
as produced by ``softswitch.frontend.preprocess(path, defines, include_dirs)``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt import P4InfoIndex

from ..api import P4CompileError, Replica
from .errors import P4RuntimeError
from .ids import check_compatible, decode_bytes, encode_bytes, index

log = logging.getLogger("softswitch.device")


@dataclass
class InstalledProgram:
    """A compiled program plus what the controller gave us for it."""

    switch: object  # softswitch.Switch
    index: P4InfoIndex
    p4info: p4info_pb2.P4Info  # as given by the controller (returned by Get)
    device_config: bytes
    cookie: int = 0
    clone_params: dict[int, tuple[int, int]] | None = None  # session -> (packet_length_bytes, cos)

    def __post_init__(self) -> None:
        if self.clone_params is None:
            self.clone_params = {}


def pipeline_config(path: str, defines: dict[str, str] | None = None, include_dirs: Sequence[str] = (),
                    cpu_port: int | None = None) -> p4runtime_pb2.ForwardingPipelineConfig:
    """What a controller sends a softswitch for the P4 program at ``path``: P4Info + source blob
    (the compiled program's; no switch is built).  ``cpu_port`` is not part of either."""
    from ..compiler import compile as compile_p4

    compiled = compile_p4(Path(path), defines or {}, include_dirs)
    return p4runtime_pb2.ForwardingPipelineConfig(p4info=compiled.p4info,
                                                  p4_device_config=compiled.source.encode("utf-8"))


def compile_pipeline(config: p4runtime_pb2.ForwardingPipelineConfig,
                     cpu_port: int | None) -> InstalledProgram:
    """Build (but do not install) a pipeline from a ForwardingPipelineConfig."""
    from .. import backend
    from ..compiler import compile as compile_p4

    if not config.p4_device_config:
        raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                             "p4_device_config is empty: expected the preprocessed P4_16 source (UTF-8)")
    try:
        text = config.p4_device_config.decode("utf-8")
    except UnicodeDecodeError as err:
        raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                             f"p4_device_config is not UTF-8 P4 source text ({err}); "
                             "a BMv2 JSON or binary config is not accepted by this target") from None
    try:
        # compiled as given: #include refused, so a config cannot make the server read its files
        compiled = compile_p4(text, filename="<p4_device_config>", allow_include=False)
        switch = backend.build(compiled, cpu_port=cpu_port)
    except P4CompileError as err:
        raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                             f"p4_device_config does not compile: {err}") from None
    if config.HasField("p4info"):
        check_compatible(config.p4info, compiled.p4info)
    p4info = config.p4info if config.HasField("p4info") else switch.p4info
    return InstalledProgram(switch=switch, index=index(switch.p4info), p4info=p4info,
                    device_config=bytes(config.p4_device_config), cookie=config.cookie.cookie)


class Device:
    """The device a P4Runtime server exposes: pipeline swap, packet in/out, frame dispatch."""

    def __init__(self, device_id: int = 0, cpu_port: int | None = None):
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.lock = threading.RLock()
        self.pipeline: InstalledProgram | None = None
        self.saved: InstalledProgram | None = None
        #: where non-CPU frames go: (egress port, frame); set by the port layer
        self.emit: Callable[[int, bytes], None] = self._drop
        #: where PacketIn messages go; set by the P4Runtime service
        self.packet_in: Callable[[p4runtime_pb2.PacketIn], None] = lambda msg: None
        #: called after the pipeline changed (the native port loop restarts on it)
        self.on_change: Callable[[], None] = lambda: None
        #: custom CRC parameters applied to every pipeline installed: (calculation name, or None
        #: for every calculation of that width; ``crc.CrcParams``)
        self.crc_params: list = []
        #: ports reported down (``port_set_status``); every pipeline installed is told
        self.ports_down: set[int] = set()

    @staticmethod
    def _drop(port: int, frame: bytes) -> None:
        log.debug("no interface for egress port %d, frame of %d bytes dropped", port, len(frame))

    # ------------------------------------------------------------ pipeline

    def install_program(self, switch, device_config: bytes) -> None:
        """Install a program loaded outside P4Runtime (the CLI's PROGRAM.p4)."""
        with self.lock:
            self._apply_crc_params(switch)
            self.pipeline = InstalledProgram(switch=switch, index=index(switch.p4info),
                                     p4info=switch.p4info, device_config=device_config)
        self.on_change()

    def port_set_status(self, port: int, up: bool) -> None:
        """A port went up or down (PI's port status event): selector group members watching it
        are (de)activated in the running pipeline and in any installed later."""
        with self.lock:
            (self.ports_down.discard if up else self.ports_down.add)(port)
            if self.pipeline is not None:
                self.pipeline.switch.port_set_status(port, up)

    def _apply_crc_params(self, switch) -> None:
        """The command line's custom CRC parameters; a calculation the program lacks is logged
        and skipped (a pipeline without it is still a valid pipeline)."""
        for port in self.ports_down:
            switch.port_set_status(port, False)
        for calc, params in self.crc_params:
            if calc is not None and switch.crc_calculations().get(calc) != params.width:
                log.warning("--crc%d-parameters %s: the program has no crc%d_custom calculation of "
                            "that name (it has %s); not applied", params.width, calc, params.width,
                            switch.crc_calculations() or "none")
                continue
            switch.crc_set_parameters(params, calc)

    def commit(self, new: InstalledProgram, reconcile: bool = False) -> None:
        with self.lock:
            if reconcile and self.pipeline is not None:
                _carry_state(self.pipeline, new)
            self._apply_crc_params(new.switch)
            self.pipeline = new
            self.saved = None
        self.on_change()

    def require_pipeline(self) -> InstalledProgram:
        p = self.pipeline
        if p is None:
            raise P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION,
                                 "no forwarding pipeline config set (SetForwardingPipelineConfig first)")
        return p

    # ------------------------------------------------------------ packets

    def receive(self, port: int, frame: bytes) -> None:
        """A frame arrived on ``port``: run it and dispatch what the pipeline emits."""
        with self.lock:
            p = self.pipeline
            if p is None:
                return
            try:
                outputs = p.switch.process(port, frame)
            except Exception:  # noqa: BLE001 - a bad frame must not stop the switch
                log.exception("processing a %d-byte frame from port %d failed", len(frame), port)
                return
            for out_port, data in outputs:
                if self.cpu_port is not None and out_port == self.cpu_port:
                    msg = self._to_packet_in(p, data)
                    if msg is not None:
                        self.packet_in(msg)
                else:
                    self.emit(out_port, data)

    def _to_packet_in(self, p: InstalledProgram, frame: bytes) -> p4runtime_pb2.PacketIn | None:
        fields = p.index.packet_metadata.get("packet_in", [])
        msg = p4runtime_pb2.PacketIn()
        total = sum(f.bitwidth for f in fields)
        nbytes = (total + 7) // 8
        if len(frame) < nbytes:
            log.warning("frame to CPU port shorter than the packet_in header; dropped")
            return None
        if fields:
            header = int.from_bytes(frame[:nbytes], "big") >> (nbytes * 8 - total)
            shift = total
            for f in fields:
                shift -= f.bitwidth
                value = (header >> shift) & ((1 << f.bitwidth) - 1)
                msg.metadata.add(metadata_id=f.id, value=encode_bytes(value))
        msg.payload = frame[nbytes:]
        return msg

    def packet_out(self, msg: p4runtime_pb2.PacketOut) -> None:
        """Inject a controller packet as a frame arriving on the CPU port."""
        if self.cpu_port is None:
            raise P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION,
                                 "PacketOut: the switch was started without --cpu-port")
        p = self.require_pipeline()
        fields = p.index.packet_metadata.get("packet_out", [])
        by_id = {f.id: f for f in fields}
        values: dict[int, int] = {}
        for m in msg.metadata:
            f = by_id.get(m.metadata_id)
            if f is None:
                raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                                     f"PacketOut: unknown packet_out metadata id {m.metadata_id}")
            values[f.id] = decode_bytes(m.value, f.bitwidth, f"PacketOut metadata {f.name}")
        total = sum(f.bitwidth for f in fields)
        header = 0
        for f in fields:
            header = (header << f.bitwidth) | values.get(f.id, 0)
        pad = (-total) % 8
        prefix = (header << pad).to_bytes((total + pad) // 8, "big") if fields else b""
        self.receive(self.cpu_port, prefix + msg.payload)


def _carry_state(old: InstalledProgram, new: InstalledProgram) -> None:
    """RECONCILE_AND_COMMIT: replay the old program's runtime state into the new one.

    Entries of tables that keep their name (and whose actions still exist) are
    re-inserted with their direct meter configurations; configurations of meters that keep their
    name and size, and PRE state, are copied.  Anything that no longer fits fails the
    request and the old pipeline stays in place.
    """
    src, dst = old.switch, new.switch
    try:
        kept = {p.name for p in new.index.profiles.values()}
        for prof in (p.name for p in old.index.profiles.values() if p.name in kept):
            for mid, (action, params) in src.act_prof_members(prof).items():
                dst.act_prof_add_member(prof, mid, action, params)
            for gid, members in src.act_prof_group_members(prof).items():
                dst.act_prof_create_group(prof, gid, [m for m, _w, _p in members],
                                          [w for _m, w, _p in members], 0, [p for _m, _w, p in members])
        for name in old.index.table_by_name:
            if name not in new.index.table_by_name:
                continue
            metered = old.index.tables[old.index.table_by_name[name]].direct_meter_id is not None and \
                new.index.tables[new.index.table_by_name[name]].direct_meter_id is not None
            for e in src.table_entries(name):
                if e.action_set is not None:
                    dst.table_add_one_shot(name, e.match, e.action_set, e.priority)
                elif e.member_id is not None or e.group_id is not None:
                    dst.table_add_indirect(name, e.match, e.member_id, e.group_id, e.priority)
                else:
                    dst.table_add(name, e.action, e.match, e.params, e.priority)
                cfg = src.direct_meter_get_config(name, e.match, e.priority) if metered else None
                if cfg is not None:
                    dst.direct_meter_set_config(name, e.match, cfg, e.priority)
        new_meters = {m.name: m for m in new.index.meters.values()}
        for m in old.index.meters.values():
            if m.name in new_meters and new_meters[m.name].size == m.size:
                for i in range(m.size):
                    cfg = src.meter_get_config(m.name, i)
                    if cfg is not None:
                        dst.meter_set_config(m.name, i, cfg)
        for gid, reps in src.mc_groups().items():
            dst.mc_group_set(gid, [Replica(r.port, r.rid) for r in reps])
        for sid, reps in src.clone_sessions().items():
            plen, cos = old.clone_params.get(sid, (0, 0))
            dst.clone_session_set(sid, [Replica(r.port, r.rid) for r in reps], plen, cos)
        new.clone_params.update(old.clone_params)
    except Exception as err:  # noqa: BLE001
        raise P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION,
                             "RECONCILE_AND_COMMIT: state of the old pipeline does not fit the new one: "
                             f"{err}"
                             ) from None
