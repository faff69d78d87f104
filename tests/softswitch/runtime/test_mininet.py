"""Mininet with P4Switch (softswitch target): three hosts, one switch, pingall."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.softswitch.runtime.conftest import PROGRAMS, compile_config
from tests.softswitch.runtime.netns import REPO
from tests.softswitch.runtime.p4rt import Client, U

pytestmark = [pytest.mark.root, pytest.mark.slow]

if os.geteuid() != 0:
    pytest.skip("needs root for Mininet", allow_module_level=True)


def _ip_int(ip: str) -> int:
    return int.from_bytes(bytes(map(int, ip.split("/")[0].split("."))), "big")


def _mac_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


@pytest.fixture
def net_factory(tmp_path):
    """Build a Mininet net of P4Switches (no OpenFlow controller); always stopped afterwards."""
    from topologies.mininet_env import ensure_mininet

    ensure_mininet()
    from mininet.log import setLogLevel
    from mininet.net import Mininet

    from topologies.p4switch import P4Switch

    setLogLevel("warning")
    nets = []
    tag = os.getpid() % 1000

    def build(program, nhosts: int = 3):
        net = Mininet(switch=P4Switch, controller=None, build=False, autoSetMacs=True, autoStaticArp=True)
        nets.append(net)
        sw = net.addSwitch(f"s{tag}", p4_program=str(program), log_dir=str(tmp_path))
        hosts = [net.addHost(f"h{tag}x{i}", ip=f"10.0.0.{i}/24") for i in range(1, nhosts + 1)]
        for h in hosts:
            net.addLink(h, sw)
        net.build()
        net.start()
        return net, sw, hosts

    def stop(net) -> None:
        nets.remove(net)
        net.stop()

    build.stop = stop
    yield build
    for net in nets:
        net.stop()


def _routes_fwd_cpu(ctl: Client, routes) -> None:
    for ip, mac, port in routes:
        ctl.write_ok((U.INSERT, ctl.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (ip, 32)},
                                                "MyIngress.ipv4_forward", {"dstAddr": mac, "port": port})))


def _routes_dhc(ctl: Client, routes) -> None:
    """dhc.p4's plain forwarding: switch MAC in switch_config, one /32 per host in ipv4_lpm."""
    ctl.write_ok((U.MODIFY, ctl.table_entry("DhcIngress.forwarding.switch_config",
                                            action="DhcIngress.forwarding.set_switch_mac",
                                            params={"mac": 0x0200000000FE}, default=True)))
    for ip, mac, port in routes:
        ctl.write_ok(
            (
                U.INSERT,
                ctl.table_entry(
                    "DhcIngress.forwarding.ipv4_lpm",
                    {"dst_addr": (ip, 32)},
                    "DhcIngress.forwarding.set_nhop",
                    {"dmac": mac, "port": port},
                ),
            )
        )


_SERVER = ("import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
           "s.bind(('0.0.0.0', 7777)); s.listen(1); print('ready', flush=True); c,_=s.accept(); n=0\n"
           "while (b:=c.recv(65536)): n+=len(b)\nprint(n, flush=True)")
_CLIENT = ("import socket,sys; c=socket.create_connection((sys.argv[1], 7777), timeout=20); "
           "c.sendall(b'x'*int(sys.argv[2])); c.close()")


def _tcp_transfer(src, dst, nbytes: int) -> None:
    """Kernel TCP through the switch: needs correct checksums and no TSO super-frames (offloads off)."""
    server = dst.popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert server.stdout.readline().strip() == b"ready"
        out = src.cmd(f"{sys.executable} -c \"{_CLIENT}\" {dst.IP()} {nbytes}; echo rc=$?")
        assert "rc=0" in out, out
        server.wait(timeout=30)
        assert server.stdout.read().split() == [str(nbytes).encode()]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


PROGRAM_CASES = {
    "fwd_cpu": (PROGRAMS / "fwd_cpu.p4", _routes_fwd_cpu),
    "dhc": (REPO / "p4src" / "dhc.p4", _routes_dhc),
}


@pytest.mark.parametrize("case", sorted(PROGRAM_CASES))
def test_pingall_through_p4switch(net_factory, case):
    program, install = PROGRAM_CASES[case]
    if not program.exists():
        pytest.skip(f"{program} is not in this checkout yet")
    p4info, _ = compile_config(program)
    net, sw, hosts = net_factory(program)
    assert sw.proc is not None and sw.proc.poll() is None
    ctl = Client(sw.grpc_address, device_id=sw.device_id, election_id=1)
    ctl.p4info = p4info
    try:
        install(ctl, [(_ip_int(h.IP()), _mac_int(h.MAC()), sw.ports[h.intf().link.intf2]) for h in hosts])
        loss = net.pingAll(timeout=2)
        assert loss == 0, f"pingall lost {loss}%; switch log:\n{sw.read_log()}"
        _tcp_transfer(hosts[0], hosts[1], 200_000)
    finally:
        ctl.close()
    pid = sw.proc.pid
    net_factory.stop(net)
    assert sw.proc is None and not os.path.exists(f"/proc/{pid}")


def test_p4switch_command_line_and_target_checks(tmp_path):
    from topologies.mininet_env import ensure_mininet

    ensure_mininet()
    import shutil

    from topologies.p4switch import P4Switch

    program = PROGRAMS / "fwd_cpu.p4"
    if shutil.which("simple_switch_grpc") is None:
        with pytest.raises(FileNotFoundError, match="simple_switch_grpc"):
            P4Switch("s901", target="bmv2")
    with pytest.raises(ValueError, match="target"):
        P4Switch("s902", target="tofino")
    with pytest.raises(FileNotFoundError, match="nope.p4"):
        P4Switch("s903", p4_program=str(tmp_path / "nope.p4"))
    a = P4Switch(f"s9{os.getpid() % 100}1", p4_program=str(program), cpu_port=64, p4_defines={"X": "1"})
    b = P4Switch(f"s9{os.getpid() % 100}2")
    try:
        assert a.device_id != b.device_id and a.grpc_port != b.grpc_port
        cmd = a.command()
        tail = cmd[cmd.index("--device-id"):]
        assert tail == [
            "--device-id",
            str(a.device_id),
            "--log-level",
            "warn",
            "--p4-define",
            "X=1",
            str(program),
            "--",
            "--grpc-server-addr",
            f"0.0.0.0:{a.grpc_port}",
            "--cpu-port",
            "64",
        ]
        assert "--no-p4" in b.command()
    finally:
        a.terminate()
        b.terminate()
