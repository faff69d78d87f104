"""A real softswitch P4Runtime server on 127.0.0.1 running p4src/dhc.p4 (small tables), and the
controller's own client connected to it as primary."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.intent import entry
from controller.p4rt_client import PendingUpdate, SwitchAddress, SwitchConnection
from controller.p4rt_codec import P4InfoNames
from dhcwire.p4names import A_SET_LOCAL, T_LOCAL
from softswitch.server import Device, pipeline_config, serve

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "dhc.p4"
LOCAL_SIZE = 64   # LOCAL_ADDR_TABLE_SIZE in p4src/include/size.p4
DEFINES = {"DHC_POOL_SIZE": "64", "DHC_MAX_JOBS": "8"}


@dataclass
class Running:
    device: Device
    addr: str
    conn: SwitchConnection
    names: P4InfoNames


_CONFIG: p4runtime_pb2.ForwardingPipelineConfig | None = None


class IdleStreams:
    """``n`` StreamChannels that send nothing; records how each one ended."""

    def __init__(self, addr: str, n: int, hold: float = 30.0):
        self.hold = hold
        self.channel = grpc.insecure_channel(addr)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.stop = threading.Event()
        self.codes: list[grpc.StatusCode] = []
        self.calls = [stub.StreamChannel(self._requests()) for _ in range(n)]
        for c in self.calls:
            threading.Thread(target=self._consume, args=(c,), daemon=True).start()

    def _requests(self):
        self.stop.wait(self.hold)
        yield from ()

    def _consume(self, call) -> None:
        try:
            for _ in call:
                pass
        except grpc.RpcError as err:
            self.codes.append(err.code())

    def close(self) -> None:
        self.stop.set()
        for c in self.calls:
            c.cancel()
        self.channel.close()


def config() -> p4runtime_pb2.ForwardingPipelineConfig:
    global _CONFIG
    if _CONFIG is None:
        _CONFIG = pipeline_config(str(PROGRAM), DEFINES)
    return _CONFIG


@contextmanager
def running_switch(max_workers: int = 16, **serve_args) -> Iterator[Running]:
    device = Device(device_id=0)
    srv, port = serve(device, "127.0.0.1:0", max_workers=max_workers, **serve_args)
    addr = f"127.0.0.1:{port}"
    conn = SwitchConnection(SwitchAddress("s1", addr), timeout=30.0)
    try:
        conn.connect()
        cfg = config()
        conn.set_pipeline(cfg.p4info, cfg.p4_device_config)
        yield Running(device, addr, conn, conn.names)
    finally:
        conn.close()
        srv.stop(grace=None).wait(5)


def local_insert(names: P4InfoNames, ip: int, kind: int = p4runtime_pb2.Update.INSERT) -> PendingUpdate:
    e = entry(T_LOCAL, {"dst_addr": ip}, A_SET_LOCAL)
    ent = p4runtime_pb2.Entity(table_entry=names.entry_to_proto(e))
    return PendingUpdate(kind, ent, e.describe())
