"""Real BMv2 (``simple_switch_grpc``) behind the switch interface the softswitch STF runner drives.

``softswitch.stf.run_stf_file`` executes an STF file against any object with the softswitch's
control and packet methods; :class:`Bmv2StfSwitch` is such an object for BMv2, so the softswitch
and BMv2 are held to the same parser and the same expectations (p4c's own STF runner is not in
the toolchain).  Control: P4Runtime over a unix socket (tables, defaults, multicast groups,
counters; registers over ``simple_switch_CLI``:
BMv2's P4Runtime does not serve them).  Packets: veth pairs in a network namespace this module creates and
removes by name; BMv2 owns the ``sN`` ends, the test sends and receives on the ``hN`` ends.
Pipelines are p4c's, built by ``controller.bmv2_build`` with the STF file's defines (cached).
"""

from __future__ import annotations

import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.bmv2_build import build
from controller.pipeline import read_pipeline_files
from softswitch.api import Replica
from softswitch.server.ids import index as p4info_index
from softswitch.server.translate import encode_action, encode_match
from softswitch.target.ports import ignore_outgoing, run_in_netns

#: one namespace per test process, so two runs on one machine never share (or delete) each other's
NETNS_PREFIX = "dhc-stf-bmv2-"
NETNS = f"{NETNS_PREFIX}{os.getpid()}"
_ETH_P_ALL = 3
#: a frame BMv2 emits arrives within this after the last one (BMv2 adds well under 1 ms; the
#: margin is for a loaded machine)
QUIET_S = 0.25
U = p4runtime_pb2.Update
#: simple_switch_CLI's port, inside the namespace (BMv2's P4Runtime does not read registers)
THRIFT_PORT = 9090


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@contextmanager
def stf_namespace(ports: list[int]):
    """Netns ``NETNS`` with veth pairs sN <-> hN for each port, IPv6 off (no stray frames);
    removed by name on exit (and first, those that interrupted runs left: their process is gone)."""
    _remove_orphans()
    _ip("netns", "add", NETNS)
    try:
        ns = ["ip", "netns", "exec", NETNS]
        _ip("-n", NETNS, "link", "set", "lo", "up")   # simple_switch_CLI reaches Thrift on it
        for key in ("all", "default"):
            subprocess.run([*ns, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1"], check=True)
        for p in ports:
            _ip("-n", NETNS, "link", "add", f"s{p}", "type", "veth", "peer", "name", f"h{p}")
            for end in (f"s{p}", f"h{p}"):
                _ip("-n", NETNS, "link", "set", end, "mtu", "9000", "up")
        yield NETNS
    finally:
        _ip("netns", "del", NETNS, check=False)


def _remove_orphans() -> None:
    """Namespaces of this kind whose test process no longer runs (a killed run cannot remove its own)."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        pid = name.removeprefix(NETNS_PREFIX)
        if name.startswith(NETNS_PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _ip("netns", "del", name, check=False)


def _uint128(v: int) -> p4runtime_pb2.Uint128:
    return p4runtime_pb2.Uint128(high=v >> 64, low=v & ((1 << 64) - 1))


@dataclass
class Bmv2StfSwitch:
    """One ``simple_switch_grpc`` with a pushed pipeline; the STF runner's switch methods."""

    json_path: Path
    p4info_path: Path
    ports: list[int]
    workdir: Path
    cpu_port: int | None = None
    proc: subprocess.Popen | None = None
    socks: dict[int, socket.socket] = field(default_factory=dict)
    groups: set[int] = field(default_factory=set)

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> None:
        config = read_pipeline_files(self.p4info_path, self.json_path)
        self.p4info = config.p4info
        self.index = p4info_index(self.p4info)
        sock_path = self.workdir / "p4rt.sock"
        sock_path.unlink(missing_ok=True)
        cmd = ["ip", "netns", "exec", NETNS, "simple_switch_grpc", "--device-id", "0", "--no-p4",
               "--log-level", "warn", *[a for p in self.ports for a in ("-i", f"{p}@s{p}")],
               "--thrift-port", str(THRIFT_PORT), "--", "--grpc-server-addr", f"unix://{sock_path}"]
        if self.cpu_port is not None:
            cmd += ["--cpu-port", str(self.cpu_port)]
        self.log = self.workdir / "simple_switch_grpc.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        self.channel = grpc.insecure_channel(f"unix://{sock_path}")
        try:
            grpc.channel_ready_future(self.channel).result(timeout=30)
        except grpc.FutureTimeoutError:
            raise RuntimeError(f"simple_switch_grpc did not answer on {sock_path}: "
                               f"{self.log.read_text(errors='replace')[-2000:]}") from None
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._arbitrate()
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.election_id.CopyFrom(_uint128(1))
        req.config.p4info.CopyFrom(self.p4info)
        req.config.p4_device_config = config.device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=120)
        self.socks = run_in_netns(f"/var/run/netns/{NETNS}", _open_sockets, self.ports)

    def _arbitrate(self) -> None:
        import queue
        self._out: queue.Queue = queue.Queue()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = 0
        req.arbitration.election_id.CopyFrom(_uint128(1))
        self._out.put(req)
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        next(self._stream)   # the arbitration answer: we are primary

    def stop(self) -> None:
        for s in self.socks.values():
            s.close()
        if getattr(self, "_out", None) is not None:
            self._out.put(None)
        if getattr(self, "channel", None) is not None:
            self.channel.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    # ---------------------------------------------------------------- P4Runtime
    def _write(self, utype: int, entity: p4runtime_pb2.Entity) -> None:
        req = p4runtime_pb2.WriteRequest(device_id=0)
        req.election_id.CopyFrom(_uint128(1))
        req.updates.add(type=utype, entity=entity)
        self.stub.Write(req, timeout=30)

    def _read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=0)
        req.entities.append(entity)
        return [e for resp in self.stub.Read(req, timeout=30) for e in resp.entities]

    def _entry(self, table: str, match: dict, priority: int | None) -> p4runtime_pb2.TableEntry:
        tid = self.index.table_by_name[table]
        te = p4runtime_pb2.TableEntry(table_id=tid, priority=priority or 0)
        te.match.extend(encode_match(self.index.tables[tid], match))
        return te

    def table_add(self, table: str, action: str, match: dict, params: dict, priority=None) -> None:
        te = self._entry(table, match, priority)
        te.action.CopyFrom(encode_action(self.index, action, params))
        self._write(U.INSERT, p4runtime_pb2.Entity(table_entry=te))

    def table_delete(self, table: str, match: dict, priority=None) -> None:
        self._write(U.DELETE, p4runtime_pb2.Entity(table_entry=self._entry(table, match, priority)))

    def table_set_default(self, table: str, action: str, params: dict) -> None:
        te = p4runtime_pb2.TableEntry(table_id=self.index.table_by_name[table], is_default_action=True)
        te.action.CopyFrom(encode_action(self.index, action, params))
        self._write(U.MODIFY, p4runtime_pb2.Entity(table_entry=te))

    def mc_group_set(self, group: int, replicas: list[Replica]) -> None:
        e = p4runtime_pb2.Entity()
        mg = e.packet_replication_engine_entry.multicast_group_entry
        mg.multicast_group_id = group
        for r in replicas:
            mg.replicas.add(egress_port=r.port, instance=r.rid)
        self._write(U.MODIFY if group in self.groups else U.INSERT, e)
        self.groups.add(group)

    def mc_group_delete(self, group: int) -> None:
        e = p4runtime_pb2.Entity()
        e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = group
        self._write(U.DELETE, e)
        self.groups.discard(group)

    def clone_session_set(self, session: int, replicas: list[Replica]) -> None:
        e = p4runtime_pb2.Entity()
        cs = e.packet_replication_engine_entry.clone_session_entry
        cs.session_id = session
        for r in replicas:
            cs.replicas.add(egress_port=r.port, instance=r.rid)
        self._write(U.INSERT, e)

    def _id(self, kind: str, name: str) -> int:
        for obj in getattr(self.p4info, kind):
            if obj.preamble.name == name:
                return obj.preamble.id
        raise LookupError(f"no {kind[:-1]} {name!r} in the P4Info")

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        e = p4runtime_pb2.Entity()
        e.counter_entry.counter_id = self._id("counters", name)
        e.counter_entry.index.index = index
        (got,) = self._read(e)
        return got.counter_entry.data.packet_count, got.counter_entry.data.byte_count

    def _cli(self, command: str) -> str:
        # this Python (it has the thrift package) runs BMv2's CLI script, inside the namespace
        cli = shutil.which("simple_switch_CLI") or "simple_switch_CLI"
        done = subprocess.run(["ip", "netns", "exec", NETNS, sys.executable, cli, "--thrift-port",
                               str(THRIFT_PORT)], input=command + "\n", capture_output=True, text=True,
                              timeout=60)
        if done.returncode != 0 or "Error" in done.stdout:
            raise RuntimeError(f"simple_switch_CLI {command!r}: {(done.stdout + done.stderr)[-500:]}")
        return done.stdout

    def register_read(self, name: str, index: int) -> int:
        """Over simple_switch_CLI: BMv2's P4Runtime says "register reads are not supported yet"."""
        self._id("registers", name)
        out = self._cli(f"register_read {name} {index}")
        m = re.search(rf"{re.escape(name)}\[{index}\]\s*=\s*(\d+)", out)
        if m is None:
            raise RuntimeError(f"simple_switch_CLI register_read {name} {index}: no value in {out!r}")
        return int(m.group(1))

    def register_write(self, name: str, index: int, value: int) -> None:
        self._id("registers", name)
        self._cli(f"register_write {name} {index} {value}")

    # ---------------------------------------------------------------- packets
    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Send ``data`` into ``port``; every frame BMv2 emits until it has been quiet QUIET_S."""
        if port not in self.socks:
            raise LookupError(f"port {port} has no interface (ports: {sorted(self.socks)})")
        self.socks[port].send(data)
        by_fd = {s.fileno(): (p, s) for p, s in self.socks.items()}
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + QUIET_S
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(by_fd), [], [], left)
            for fd in ready:
                p, s = by_fd[fd]
                frame, addr = s.recvfrom(65535)
                if addr[2] == socket.PACKET_OUTGOING:   # our own send (kernel without IGNORE_OUTGOING)
                    continue
                out.append((p, frame))
                deadline = time.monotonic() + QUIET_S
        return out


def _open_sockets(ports: list[int]) -> dict[int, socket.socket]:
    socks = {}
    for p in ports:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
        s.bind((f"h{p}", 0))
        ignore_outgoing(s)
        socks[p] = s
    return socks


def bmv2_pipeline(defines: dict[str, str]):
    """p4c's build of p4src/dhc.p4 with ``defines`` (cached by content; shared by every test)."""
    return build(defines)


@contextmanager
def bmv2_switch(defines: dict[str, str], ports: list[int], workdir: Path, cpu_port: int | None = None):
    """A started :class:`Bmv2StfSwitch` in its own namespace; everything removed on exit."""
    files = bmv2_pipeline(defines)
    os.makedirs(workdir, exist_ok=True)
    with stf_namespace(ports):
        sw = Bmv2StfSwitch(files.json, files.p4info, ports, Path(workdir), cpu_port)
        try:
            sw.start()
            yield sw
        finally:
            sw.stop()
