"""Build a Mininet network from a topology file: one P4Switch per switch, hosts, numbered ports.

The topology file is the single description of the network: the same object drives the
placement ILP, the deployment and this builder.  Every switch runs the P4 target with no
program (``--no-p4``); the controller pushes ``p4src/dhc.p4`` over P4Runtime, as it would to
BMv2.  Hosts get their address in 10.0.0.0/8 so every destination is on-link: the switches
answer ARP for all addresses they know (proxy ARP in the data plane) and route by /32.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

from controller.topology import Topology
from topologies.mininet_env import ensure_mininet
from topologies.shaping import Shaping, gbps_to_bps, parse_rate, shape

ensure_mininet()
from mininet.link import Link  # noqa: E402
from mininet.net import Mininet  # noqa: E402
from mininet.node import Host  # noqa: E402

from topologies.p4switch import P4Switch  # noqa: E402
from topologies.runreg import record_net, write_record  # noqa: E402

#: Every host address is configured with this prefix length: all of 10/8 is on-link.
HOST_PREFIX_LEN = 8


@dataclass
class NetHandle:
    """A running network: the Mininet object and the gRPC address of every switch."""

    net: Mininet
    topology: Topology
    grpc_addresses: dict[str, str]
    device_ids: dict[str, int]
    #: the rate every link was shaped to (bits/s), or None when each link kept its topology rate
    bandwidth_bps: int | None = None

    def host(self, name: str) -> Host:
        return self.net.get(name)


def choose_target(requested: str = "auto") -> str:
    """'softswitch' unless BMv2 is present (and p4c to build its JSON) or explicitly asked for."""
    if requested != "auto":
        return requested
    if shutil.which("simple_switch_grpc") and shutil.which("p4c"):
        return "bmv2"
    return "softswitch"


def build_net(topo: Topology, target: str = "auto", log_dir: str | None = None,
              log_level: str = "warn", bandwidth: str | None = None) -> Mininet:
    """A Mininet object (not started) wired exactly as ``topo`` says, ports included, every
    link shaped to its ``bandwidth_gbps`` (or to ``bandwidth``, a tc rate, on every link)."""
    override = parse_rate(bandwidth) if bandwidth else None
    target = choose_target(target)
    net = Mininet(controller=None, switch=P4Switch, host=Host, link=Link,
                  autoSetMacs=False, autoStaticArp=False, build=False, waitConnected=False)
    for i, sw in enumerate(sorted(topo.switches.values(), key=lambda s: s.name)):
        net.addSwitch(sw.name, cls=P4Switch, target=target, device_id=sw.device_id
                      if sw.device_id is not None else i, grpc_port=sw.grpc_port,
                      log_dir=log_dir, log_level=log_level)
    for h in topo.hosts.values():
        net.addHost(h.name, ip=f"{h.ip}/{HOST_PREFIX_LEN}", mac=h.mac)
    mn_links = [(net.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port), link)
                for link in topo.links]
    net.build()
    try:
        for mn_link, link in mn_links:
            rate = Shaping(override or gbps_to_bps(link.bandwidth_gbps))
            for intf in (mn_link.intf1, mn_link.intf2):
                shape(intf.name, rate, _runner(intf.node))
    except BaseException:
        net.stop()   # links and namespaces exist already: leave none behind
        raise
    for h in topo.hosts.values():  # addLink may have reset the MAC of eth0
        host = net.get(h.name)
        host.intf().setMAC(h.mac)
        host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
    return net


def _runner(node):
    """Run a command in ``node``'s namespace: (exit status, stdout + stderr)."""
    def run(args: list[str]) -> tuple[int, str]:
        out, err, status = node.pexec(args)
        return status, out + err
    return run


@contextlib.contextmanager
def running_net(topo: Topology, target: str = "auto", log_dir: str | None = None,
                log_level: str = "warn", bandwidth: str | None = None) -> Iterator[NetHandle]:
    """Start the network, yield it, and always tear it down (processes, namespaces, links)."""
    net = build_net(topo, target, log_dir, log_level, bandwidth)
    record = None
    try:
        # recorded before and after start: an interrupted run is ended by `make stop`
        record = write_record(record_net(net))
        net.start()
        record.unlink(missing_ok=True)
        record = write_record(record_net(net))
        switches = {name: net.get(name) for name in topo.switches}
        yield NetHandle(net=net, topology=topo,
                        grpc_addresses={n: s.grpc_address for n, s in switches.items()},
                        device_ids={n: s.device_id for n, s in switches.items()},
                        bandwidth_bps=parse_rate(bandwidth) if bandwidth else None)
    finally:
        net.stop()
        if record is not None:
            record.unlink(missing_ok=True)
