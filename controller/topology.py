"""Topology model: hosts, switches, links, jobs, and deterministic shortest-path routing.

One ``Topology`` drives Mininet, the placement ILP and the deployment.  Routing is ECMP-free:
between any two nodes there is exactly one route, the shortest in hops, ties broken by giving
link ``i`` (file order) the tiny extra weight ``2**i``.  Distinct link sets then always have
distinct weights, so shortest routes are unique, which makes them

* symmetric: the route b -> a is the route a -> b reversed (results retrace contributions), and
* prefix-consistent: if p lies on the route a -> r, the route a -> p is its prefix (a partial sum
  addressed to an aggregator p travels exactly along the job's tree toward the root r).

The placement model relies on both properties; ``next_hop_port`` is what the deployment turns
into ``ipv4_lpm`` entries.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property

from dhcwire.lanes import DEFAULT_LANES
from dhcwire.limits import SUPPORTED_LANES  # noqa: F401 (re-exported: the program's lane counts)

#: v1model switch ports that are not front-panel ports.
RESERVED_PORTS: dict[int, str] = {255: "the CPU port of BMv2 and the softswitch",
                                  511: "v1model's drop port"}

#: Default per-switch register capacity in slots (see ``Switch.register_slots``).
DEFAULT_REGISTER_SLOTS: int = 4096
#: Default window of a job, in slots per shadow set.
DEFAULT_WINDOW: int = 64


@dataclass(frozen=True)
class Host:
    """An end host (a worker runs on it).  Single-homed: exactly one link, to a switch."""

    name: str
    ip: str
    mac: str


@dataclass(frozen=True)
class Switch:
    """A switch.  ``register_slots`` is the number of entries of each of its per-slot register
    arrays (the K lane registers, the worker bitmap and the counter all have this many entries,
    i.e. ``register_slots * (K + 2)`` 32-bit cells).  A job with window W occupies 2*W consecutive
    entries (both shadow sets) on every switch that aggregates it.  ``ip``/``mac`` are the switch's
    own addresses: it answers ARP for them and is the destination of partial sums sent to it.
    ``grpc_port``/``device_id`` are for P4Runtime; the Mininet builder assigns them if absent."""

    name: str
    ip: str
    mac: str
    programmable: bool = True
    register_slots: int = DEFAULT_REGISTER_SLOTS
    deploy_cost: int = 1
    grpc_port: int | None = None
    device_id: int | None = None


@dataclass(frozen=True)
class Link:
    """A full-duplex link.  Switch ports are P4 port numbers (>= 1); a host's port is its
    interface index (0 = eth0)."""

    a: str
    a_port: int
    b: str
    b_port: int
    bandwidth_gbps: float = 10.0

    def port_of(self, node: str) -> int:
        if node == self.a:
            return self.a_port
        if node == self.b:
            return self.b_port
        raise ValueError(f"{node} is not an endpoint of link {self.a}-{self.b}")

    def other(self, node: str) -> str:
        if node == self.a:
            return self.b
        if node == self.b:
            return self.a
        raise ValueError(f"{node} is not an endpoint of link {self.a}-{self.b}")


@dataclass(frozen=True)
class Job:
    """A data-parallel training job: its workers (host names) AllReduce ``bytes_per_iteration``
    bytes each iteration, with ``window`` slots per shadow set and ``lanes`` lanes per packet."""

    id: int
    workers: tuple[str, ...]
    bytes_per_iteration: int
    window: int = DEFAULT_WINDOW
    lanes: int = DEFAULT_LANES

    @property
    def region_slots(self) -> int:
        """Register entries the job occupies on each aggregating switch (two shadow sets)."""
        return 2 * self.window

    @property
    def needs_aggregation(self) -> bool:
        """A single worker's sum is its own gradient: nothing to aggregate, nothing to place."""
        return len(self.workers) >= 2


@dataclass(frozen=True)
class Attachment:
    """Where a host plugs in: its link (index), the switch, and the port numbers at both ends."""

    link: int
    switch: str
    switch_port: int
    host_port: int


@dataclass
class Topology:
    """The whole network plus its jobs.  Build it through ``topology_file.load`` or
    ``topology_file.from_dict`` (which validate); the constructor trusts its input."""

    name: str
    hosts: dict[str, Host]
    switches: dict[str, Switch]
    links: tuple[Link, ...]
    jobs: tuple[Job, ...] = ()
    _next_link: dict[str, dict[str, int]] = field(default_factory=dict, init=False, repr=False, compare=False)

    # ---------------------------------------------------------------- structure
    @cached_property
    def adjacency(self) -> dict[str, list[tuple[int, str]]]:
        """node -> [(link index, neighbour)], in link order."""
        adj: dict[str, list[tuple[int, str]]] = {n: [] for n in (*self.hosts, *self.switches)}
        for i, link in enumerate(self.links):
            adj[link.a].append((i, link.b))
            adj[link.b].append((i, link.a))
        return adj

    @cached_property
    def attachments(self) -> dict[str, Attachment]:
        """host -> its switch-facing link."""
        out: dict[str, Attachment] = {}
        for host in self.hosts:
            (i, sw), = self.adjacency[host]
            link = self.links[i]
            out[host] = Attachment(i, sw, link.port_of(sw), link.port_of(host))
        return out

    def attachment(self, host: str) -> Attachment:
        return self.attachments[host]

    def job(self, job_id: int) -> Job:
        for job in self.jobs:
            if job.id == job_id:
                return job
        raise KeyError(f"no job {job_id} in topology {self.name}")

    def with_jobs(self, jobs: list[Job] | tuple[Job, ...]) -> Topology:
        """The same network with another job list (routing caches are rebuilt lazily)."""
        return Topology(self.name, dict(self.hosts), dict(self.switches), self.links, tuple(jobs))

    # ---------------------------------------------------------------- routing
    def _tree_toward(self, dst: str) -> dict[str, int]:
        """node -> link index of its next hop toward ``dst`` (Dijkstra from dst, unique ties)."""
        cached = self._next_link.get(dst)
        if cached is not None:
            return cached
        if dst not in self.adjacency:
            raise KeyError(f"unknown node {dst!r}")
        hop = 1 << len(self.links)  # one hop outweighs every tie-break sum
        dist: dict[str, int] = {dst: 0}
        toward: dict[str, int] = {}
        heap: list[tuple[int, str]] = [(0, dst)]
        done: set[str] = set()
        while heap:
            d, node = heapq.heappop(heap)
            if node in done:
                continue
            done.add(node)
            if node in self.hosts and node != dst:
                continue  # hosts never forward
            for i, nb in self.adjacency[node]:
                nd = d + hop + (1 << i)
                if nd < dist.get(nb, nd + 1):
                    dist[nb] = nd
                    toward[nb] = i
                    heapq.heappush(heap, (nd, nb))
        self._next_link[dst] = toward
        return toward

    def next_hop_link(self, node: str, dst: str) -> int:
        """Index of the link ``node`` uses toward ``dst``."""
        if node == dst:
            raise ValueError(f"{node} is the destination itself")
        tree = self._tree_toward(dst)
        if node not in tree:
            raise ValueError(f"no route from {node} to {dst}")
        return tree[node]

    def next_hop_port(self, switch: str, dst: str) -> int:
        """The egress port ``switch`` uses for packets addressed to host or switch ``dst``."""
        if switch not in self.switches:
            raise ValueError(f"{switch!r} is not a switch")
        return self.links[self.next_hop_link(switch, dst)].port_of(switch)

    def path(self, src: str, dst: str) -> list[str]:
        """Nodes on the route src -> dst, both ends included."""
        nodes = [src]
        while nodes[-1] != dst:
            nodes.append(self.links[self.next_hop_link(nodes[-1], dst)].other(nodes[-1]))
        return nodes

    def path_links(self, src: str, dst: str) -> list[int]:
        """Link indexes on the route src -> dst, in order."""
        out: list[int] = []
        node = src
        while node != dst:
            i = self.next_hop_link(node, dst)
            out.append(i)
            node = self.links[i].other(node)
        return out

    def upward_tree(self, starts, root: str) -> tuple[dict[str, int], dict[str, list[str]]]:
        """The routes from every node in ``starts`` to ``root`` merged into one tree:
        (node -> link index toward root, node -> its children in that tree)."""
        up: dict[str, int] = {}
        for start in starts:
            node = start
            while node != root and node not in up:
                up[node] = self.next_hop_link(node, root)
                node = self.links[up[node]].other(node)
        kids: dict[str, list[str]] = {}
        for node, link in up.items():
            kids.setdefault(self.links[link].other(node), []).append(node)
        return up, kids

    def hops(self, src: str, dst: str) -> int:
        return len(self.path_links(src, dst))
