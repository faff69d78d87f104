"""A small P4Runtime client for the runtime tests (names -> ids from the P4Info, one stream)."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

import grpc
from google.rpc import status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from softswitch.server.ids import encode_bytes

U = p4runtime_pb2.Update


def _uint128(value: int) -> p4runtime_pb2.Uint128:
    return p4runtime_pb2.Uint128(high=value >> 64, low=value & ((1 << 64) - 1))


@dataclass
class WriteFailure:
    """A failed Write: the gRPC code and the per-update (canonical code, message) list."""

    code: grpc.StatusCode
    details: list[tuple[int, str]]


class Client:
    def __init__(self, address: str, device_id: int = 0, election_id: int | None = 1):
        self.channel = grpc.insecure_channel(address)
        grpc.channel_ready_future(self.channel).result(timeout=10)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.device_id = device_id
        self.election_id = election_id or 0
        self.p4info: p4info_pb2.P4Info | None = None
        self._out: queue.Queue = queue.Queue()
        self.arbitrations: queue.Queue = queue.Queue()
        self.packets: queue.Queue = queue.Queue()
        self.errors: queue.Queue = queue.Queue()
        self.stream_error: grpc.RpcError | None = None
        self._stream = None
        self.first_reply: p4runtime_pb2.MasterArbitrationUpdate | None = None
        if election_id is not None:
            self.open_stream()
            self.first_reply = self.arbitrate(election_id)

    # ---------------------------------------------------------------- stream
    def open_stream(self) -> None:
        def requests():
            while True:
                msg = self._out.get()
                if msg is None:
                    return
                yield msg

        self._stream = self.stub.StreamChannel(requests())
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()

    def _read_stream(self) -> None:
        try:
            for msg in self._stream:
                kind = msg.WhichOneof("update")
                {"arbitration": self.arbitrations, "packet": self.packets}.get(kind, self.errors).put(msg)
        except grpc.RpcError as err:
            self.stream_error = err
            self.arbitrations.put(None)

    def arbitrate(self, election_id: int, device_id: int | None = None,
                  timeout: float = 5) -> p4runtime_pb2.MasterArbitrationUpdate | None:
        self.election_id = election_id
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id if device_id is None else device_id
        req.arbitration.election_id.CopyFrom(_uint128(election_id))
        self._out.put(req)
        msg = self.arbitrations.get(timeout=timeout)
        return None if msg is None else msg.arbitration

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for m in self._cpm("packet_out").metadata:
            if m.name in metadata:
                req.packet.metadata.add(metadata_id=m.id, value=encode_bytes(metadata[m.name]))
        self._out.put(req)

    def packet_in(self, timeout: float = 5) -> tuple[bytes, dict[str, int]]:
        msg = self.packets.get(timeout=timeout).packet
        names = {m.id: m.name for m in self._cpm("packet_in").metadata}
        return msg.payload, {names[m.metadata_id]: int.from_bytes(m.value, "big") for m in msg.metadata}

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()

    # ---------------------------------------------------------------- pipeline
    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes,
                     action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id, action=action)
        req.election_id.CopyFrom(_uint128(self.election_id))
        if p4info is not None:
            req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req)
        if action != p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY:
            self.p4info = p4info

    def get_pipeline(self, response_type=0) -> p4runtime_pb2.ForwardingPipelineConfig:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=self.device_id,
                                                               response_type=response_type)
        return self.stub.GetForwardingPipelineConfig(req).config

    # ---------------------------------------------------------------- ids
    def _find(self, items, name: str):
        for it in items:
            if it.preamble.name == name or it.preamble.alias == name:
                return it
        raise KeyError(name)

    def _cpm(self, name: str):
        return self._find(self.p4info.controller_packet_metadata, name)

    def table_id(self, name: str) -> int:
        return self._find(self.p4info.tables, name).preamble.id

    def counter_id(self, name: str) -> int:
        return self._find(self.p4info.counters, name).preamble.id

    # ---------------------------------------------------------------- entities
    def table_entry(self, table: str, match: dict | None = None, action: str | None = None,
                    params: dict[str, int] | None = None, priority: int = 0,
                    default: bool = False) -> p4runtime_pb2.TableEntry:
        """Build a TableEntry; match values: int (exact/optional), (v, plen) lpm,
        ('t', v, mask) ternary, ('r', lo, hi) range."""
        t = self._find(self.p4info.tables, table)
        te = p4runtime_pb2.TableEntry(table_id=t.preamble.id, priority=priority, is_default_action=default)
        fields = {f.name: f for f in t.match_fields}
        for name, v in (match or {}).items():
            f = fields[name]
            fm = te.match.add(field_id=f.id)
            mt = p4info_pb2.MatchField
            if f.match_type == mt.EXACT:
                fm.exact.value = encode_bytes(v)
            elif f.match_type == mt.LPM:
                fm.lpm.value, fm.lpm.prefix_len = encode_bytes(v[0]), v[1]
            elif f.match_type == mt.TERNARY:
                fm.ternary.value, fm.ternary.mask = encode_bytes(v[1]), encode_bytes(v[2])
            elif f.match_type == mt.RANGE:
                fm.range.low, fm.range.high = encode_bytes(v[1]), encode_bytes(v[2])
            elif f.match_type == mt.OPTIONAL:
                fm.optional.value = encode_bytes(v)
        if action is not None:
            a = self._find(self.p4info.actions, action)
            te.action.action.action_id = a.preamble.id
            pids = {p.name: p.id for p in a.params}
            for pname, pv in (params or {}).items():
                te.action.action.params.add(param_id=pids[pname], value=encode_bytes(pv))
        return te

    def write(
        self, *updates: tuple[int, p4runtime_pb2.Entity | p4runtime_pb2.TableEntry]
    ) -> WriteFailure | None:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.CopyFrom(_uint128(self.election_id))
        for utype, ent in updates:
            if isinstance(ent, p4runtime_pb2.TableEntry):
                ent = p4runtime_pb2.Entity(table_entry=ent)
            req.updates.add(type=utype, entity=ent)
        try:
            self.stub.Write(req)
            return None
        except grpc.RpcError as err:
            details: list[tuple[int, str]] = []
            for key, value in err.trailing_metadata() or ():
                if key == "grpc-status-details-bin":
                    st = status_pb2.Status.FromString(value)
                    for d in st.details:
                        e = p4runtime_pb2.Error()
                        d.Unpack(e)
                        details.append((e.canonical_code, e.message))
            return WriteFailure(err.code(), details)

    def write_ok(self, *updates) -> None:
        failure = self.write(*updates)
        assert failure is None, f"write failed: {failure}"

    def read(self, *entities: p4runtime_pb2.Entity | p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        for ent in entities:
            if isinstance(ent, p4runtime_pb2.TableEntry):
                ent = p4runtime_pb2.Entity(table_entry=ent)
            req.entities.append(ent)
        return [e for resp in self.stub.Read(req) for e in resp.entities]


def mc_group(group_id: int, replicas: list[tuple[int, int]]) -> p4runtime_pb2.Entity:
    ent = p4runtime_pb2.Entity()
    g = ent.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = group_id
    for port, inst in replicas:
        g.replicas.add(egress_port=port, instance=inst)
    return ent


def clone_session(session_id: int, replicas: list[tuple[int, int]], length: int = 0,
                  cos: int = 0) -> p4runtime_pb2.Entity:
    ent = p4runtime_pb2.Entity()
    s = ent.packet_replication_engine_entry.clone_session_entry
    s.session_id, s.packet_length_bytes, s.class_of_service = session_id, length, cos
    for port, inst in replicas:
        s.replicas.add(egress_port=port, instance=inst)
    return ent
