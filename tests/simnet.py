"""Test oracle: an in-process network of softswitches running ``p4src/dhc.p4``, programmed with the
controller's intended entries (:class:`controller.plan.DeploymentPlan`) and wired as the topology says.

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

from bench.softswitch.inprocess import apply_in_process, load_in_process
from controller.entries import DEFAULT_MAX_JOBS
from controller.pipeline import PROGRAM
from controller.placement import Placement
from controller.plan import DeploymentPlan
from controller.topology import Topology


class SimNet:
    """Softswitches wired per ``topology`` and programmed with the deployment plan's state."""

    def __init__(self, topology: Topology, placement: Placement, *, lanes: int | None = None,
                 program: str | Path = PROGRAM, max_jobs: int = DEFAULT_MAX_JOBS, max_steps: int = 100_000):
        self.topology = topology
        self.placement = placement
        self.plan = DeploymentPlan.build(topology, placement, max_jobs)
        self.lanes = lanes or self.plan.lanes
        self.max_steps = max_steps
        self.state = self.plan.states
        self.switches = {}
        for name, spec in topology.switches.items():
            sw = load_in_process(self.lanes, spec.register_slots, max_jobs, Path(program))
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
