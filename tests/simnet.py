"""An in-process network of softswitches running ``p4src/dhc.p4``, programmed with the controller's
intended entries and wired as the topology says.

It proves the *entries* (not just their shape): a frame a host injects is processed by its switch,
every frame a switch emits is fed to whatever the topology links to that port (another switch's
port, or a host, which receives it), until nothing is in flight::

    net = SimNet(topo, placement)
    delivered = net.inject("h1", frame)     # {host: [frame, ...]}

Everything goes through the in-process ``softswitch.Switch`` API, so no process, port or gRPC
is involved; the host-agent tests reuse it as a network model.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from controller.entries import DEFAULT_MAX_JOBS, intended_state, lanes_of
from controller.intent import SwitchState
from controller.placement import Placement
from controller.topology import Topology
from dhcwire.lanes import DEFAULT_LANES

PROGRAM = Path(__file__).resolve().parents[1] / "p4src" / "dhc.p4"


def program_defines(lanes: int, pool_size: int, max_jobs: int = DEFAULT_MAX_JOBS) -> dict[str, str]:
    """``-D`` values for p4src/dhc.p4 (one place, shared with the deployment's pipeline push)."""
    return {"DHC_LANES": str(lanes), "DHC_POOL_SIZE": str(pool_size), "DHC_MAX_JOBS": str(max_jobs)}


def apply_in_process(sw, state: SwitchState) -> None:
    """Install ``state`` on an in-process ``softswitch.Switch`` (empty tables assumed)."""
    from softswitch.api import Exact, Lpm, Replica

    for d in state.defaults.values():
        sw.table_set_default(d.table, d.action, dict(d.params))
    for e in state.entries.values():
        match = {m.name: (Exact(m.value) if m.prefix_len is None else Lpm(m.value, m.prefix_len)) for m in e.match}
        sw.table_add(e.table, e.action, match, dict(e.params))
    for g in state.groups.values():
        sw.mc_group_set(g.group_id, [Replica(port, rid) for port, rid in g.replicas])


class SimNet:
    """Softswitches wired per ``topology`` and programmed with ``intended_state(topology, placement)``."""

    def __init__(self, topology: Topology, placement: Placement, *, lanes: int | None = None,
                 program: str | Path = PROGRAM, max_jobs: int = DEFAULT_MAX_JOBS, max_steps: int = 100_000):
        from softswitch import Switch

        self.topology = topology
        self.placement = placement
        self.lanes = lanes or lanes_of(topology, placement) or DEFAULT_LANES
        self.max_steps = max_steps
        self.state = intended_state(topology, placement, max_jobs)
        self.switches = {}
        for name, spec in topology.switches.items():
            sw = Switch.load(str(program), defines=program_defines(self.lanes, spec.register_slots, max_jobs))
            apply_in_process(sw, self.state[name])
            self.switches[name] = sw
        # (switch, port) -> (neighbour, neighbour's port); hosts are leaves of this map
        self._wire: dict[tuple[str, int], tuple[str, int]] = {}
        for link in topology.links:
            self._wire[(link.a, link.a_port)] = (link.b, link.b_port)
            self._wire[(link.b, link.b_port)] = (link.a, link.a_port)
        #: frames a switch sent out of a port with nothing attached: (switch, port, frame)
        self.unwired: list[tuple[str, int, bytes]] = []
        #: frame transfers between switches during the last inject (a proxy for link traffic)
        self.hops = 0

    def switch(self, name: str):
        return self.switches[name]

    def inject(self, host: str, frame: bytes) -> dict[str, list[bytes]]:
        """Send ``frame`` from ``host``; return every frame delivered to a host, per host, in order."""
        if host not in self.topology.hosts:
            raise KeyError(f"{host!r} is not a host of topology {self.topology.name}")
        att = self.topology.attachment(host)
        return self.run([(att.switch, att.switch_port, frame)])

    def run(self, arrivals: list[tuple[str, int, bytes]]) -> dict[str, list[bytes]]:
        """Process frames arriving at (switch, port) and everything they cause."""
        delivered: dict[str, list[bytes]] = {}
        todo = deque(arrivals)
        steps = 0
        self.hops = 0
        while todo:
            steps += 1
            if steps > self.max_steps:
                raise RuntimeError(f"more than {self.max_steps} frames in flight: forwarding loop?")
            name, port, frame = todo.popleft()
            for out_port, out in self.switches[name].process(port, frame):
                peer = self._wire.get((name, out_port))
                if peer is None:
                    self.unwired.append((name, out_port, out))
                elif peer[0] in self.topology.hosts:
                    delivered.setdefault(peer[0], []).append(out)
                else:
                    self.hops += 1
                    todo.append((peer[0], peer[1], out))
        return delivered
