"""Each mode's traffic as SimGrid steps: who sends how many bytes to whom, when, how fast.

* ``ring``: NCCL-style dense ring AllReduce of float32 values: reduce-scatter then all-gather,
  2(N-1) steps of d/N values from each worker to the next, in the project's ring packets.
* ``sketch_ring``: each HG-Sketch round (lanes from the codec) as such a ring AllReduce of its
  lanes, as LHC or S2 Reducer run over NCCL; codec time between rounds.
* ``ps_thc``: THC (Li et al., NSDI 2024) through a parameter server: every worker streams each
  round's compressed values (THC's wire format, ``sim/workload.thc_wire``) to one PS host in the
  project's ring datagrams; the PS adds them (table lookups and integer sums) and streams the sums
  back, pipelined like the in-network modes, so a round costs the PS link's N streams plus a round
  trip.  A PS co-located on a worker sends that worker nothing over the network.  Codec time is
  not charged (THC's rotation and quantization are not measured here).
* ``dense_ina`` / ``dhc``: each round (dense codec / HG-Sketch) streamed up the job's placed
  tree (every child to its aggregator) and the result streamed back down, pipelined: a result
  leaves the root once the first packet got there, so a round costs its bytes over the
  bottleneck plus the tree's round-trip latency.  Every flow of the job runs at most at the
  window rate (W packets of K lanes per round trip, ``sim/parts.py``); host flows at most at the
  host's packet rate.  Codec time between rounds.

Hosts' reduction work in the rings (adding received chunks) is not charged: it favours the
baselines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from controller.placement import JobPlacement
from sim.fabric import Fabric
from sim.parts import (
    RING_VALUES_PER_PACKET,
    HostProfile,
    SwitchModel,
    auto_window,
    ring_frame_bytes,
    window_rate,
)
from sim.program import Flow, NetLink, PlatformSpec, Step
from sim.routes import Router
from sim.workload import CodecRun, ThcWire

MODES = ("ring", "sketch_ring", "dense_ina", "dhc", "ps_thc")


@dataclass(frozen=True)
class Traffic:
    """What one worker sends in one AllReduce."""

    bytes: float
    payload_bytes: float
    packets: int
    rounds: int
    round_bytes: tuple[float, ...] = ()
    codec_s: float = 0.0

    def plus(self, other: Traffic) -> Traffic:
        return Traffic(self.bytes + other.bytes, self.payload_bytes + other.payload_bytes,
                       self.packets + other.packets, self.rounds + other.rounds,
                       self.round_bytes + other.round_bytes, self.codec_s + other.codec_s)


class PlatformBuilder:
    """Collects the routes flows use.  With ``serialize_per_hop`` (the in-network modes) link
    latency = propagation + one frame's serialization (store-and-forward of a packet per hop), so
    latency figures are the packet's, not a bit's.  Without it (the host-to-host modes: rings and
    the PS) links carry propagation only and each flow starts after ``store_forward``: a flow of k
    packets over h store-and-forward hops takes k + h - 1 packet times, the first hop's being part
    of its bytes over the bandwidth, and a packet shorter than a frame serializes faster."""

    def __init__(self, fabric: Fabric, router: Router, frame_bytes: int, pipeline_s: float,
                 host: HostProfile, serialize_per_hop: bool = True) -> None:
        self.fabric, self.router, self.pipeline_s = fabric, router, pipeline_s
        self.frame_bytes, self.serialize_per_hop = frame_bytes, serialize_per_hop
        topo = fabric.topo
        self.host_rate = {h: host.direction_rate(frame_bytes) for h in topo.hosts}
        self.caps: dict[tuple[str, str], float] = {}
        self.machine_rate = host.shared_cores * frame_bytes / host.stage_s if host.shared_cores else 0.0
        serialize = frame_bytes * 8.0 if serialize_per_hop else 0.0
        self.links = tuple(
            NetLink(f"l{i}:{ln.a}-{ln.b}", ln.a, ln.b, fabric.rate_bps[i] / 8.0,
                    fabric.latency_s[i] + serialize / fabric.rate_bps[i])
            for i, ln in enumerate(topo.links))
        self.routes: dict[tuple[str, str], tuple[tuple[int, bool], ...]] = {}
        self.entered: dict[tuple[str, str], tuple[str, ...]] = {}

    def route(self, src: str, dst: str) -> float:
        """Register ``src`` -> ``dst``; return its latency (s)."""
        key = (src, dst)
        if key not in self.routes:
            hops, entered = self.router.path(src, dst)
            self.routes[key], self.entered[key] = tuple(hops), tuple(entered)
        return (sum(self.links[i].latency for i, _ in self.routes[key])
                + self.pipeline_s * len(self.entered[key]))

    def store_forward(self, src: str, dst: str, flow_bytes: float) -> float:
        """Without per-hop serialization in the links: the first packet's (a frame, or the whole
        flow if shorter) serialization at every hop after the first (s); else 0."""
        if self.serialize_per_hop:
            return 0.0
        self.route(src, dst)
        packet = min(float(self.frame_bytes), flow_bytes)
        return sum(packet / self.links[i].rate for i, _ in self.routes[(src, dst)][1:])

    def step_latency(self, src: str, dst: str, flow_bytes: float) -> float:
        """Latency of a flow of ``flow_bytes`` from ``src`` to ``dst`` (s): its route's and its
        store-and-forward delay."""
        return self.route(src, dst) + self.store_forward(src, dst, flow_bytes)

    def cap(self, src: str, dst: str, rate: float) -> None:
        """Bound the flows of ``src`` -> ``dst`` to ``rate`` bytes/s (the lowest bound asked wins)."""
        self.route(src, dst)
        self.caps[(src, dst)] = min(rate, self.caps.get((src, dst), rate))

    def spec(self) -> PlatformSpec:
        topo = self.fabric.topo
        stages = {(s, d): (s in topo.hosts) + len(e) + (d in topo.hosts)
                  for (s, d), e in self.entered.items()}
        return PlatformSpec(tuple(topo.hosts) + tuple(topo.switches), self.links, tuple(topo.switches),
                            self.pipeline_s, dict(self.routes), dict(self.entered), dict(self.host_rate),
                            dict(self.caps), self.machine_rate, stages)


def ring_steps(workers: tuple[str, ...], values: int, codec_s: float, pb: PlatformBuilder,
               simulate: int, label: str) -> tuple[Step, Traffic]:
    """One ring AllReduce of ``values`` 4-byte values: 2(N-1) identical steps."""
    n = len(workers)
    chunk = math.ceil(values / n)
    packets = max(1, math.ceil(chunk / RING_VALUES_PER_PACKET))
    size = 4 * chunk + packets * (ring_frame_bytes(0))
    flows = []
    for i, src in enumerate(workers):
        dst = workers[(i + 1) % n]
        flows.append(Flow(src, dst, size, pb.store_forward(src, dst, size)))
    steps = 2 * (n - 1)
    step = Step(tuple(flows), codec_s / steps if codec_s else 0.0, steps, min(steps, simulate), label)
    return step, Traffic(steps * size, steps * 4 * chunk, steps * packets, 1, (size,), codec_s)


def ring_program(workers: tuple[str, ...], dim: int, host: HostProfile, pb: PlatformBuilder,
                 simulate: int) -> tuple[list[Step], Traffic]:
    step, traffic = ring_steps(workers, dim, 0.0, pb, simulate, "ring")
    return [step], traffic


def sketch_ring_program(workers: tuple[str, ...], run: CodecRun, host: HostProfile, pb: PlatformBuilder,
                        simulate: int) -> tuple[list[Step], Traffic]:
    steps, total = [], Traffic(0, 0, 0, 0)
    codec = run.codec_s if host.codec_time else 0.0
    for r, rnd in enumerate(run.rounds):
        step, t = ring_steps(workers, rnd.lanes, codec / len(run.rounds), pb, simulate, f"round{r}")
        steps.append(step)
        total = total.plus(t)
    return steps, total


@dataclass(frozen=True)
class TreeTiming:
    """A placed tree's edges and latencies: ``depth_s`` from the farthest worker to the root."""

    edges: tuple[tuple[str, str], ...]     # (child, aggregator)
    to_root_s: dict[str, float]
    depth_s: float
    workers: frozenset[str]


def tree_timing(jp: JobPlacement, pb: PlatformBuilder) -> TreeTiming:
    parent_of: dict[str, str] = {}
    for agg in jp.aggregators:
        for child in agg.children:
            parent_of[child.name] = agg.switch
    to_root: dict[str, float] = {jp.root: 0.0}

    def up(node: str) -> float:
        if node not in to_root:
            to_root[node] = pb.route(node, parent_of[node]) + up(parent_of[node])
            pb.route(parent_of[node], node)
        return to_root[node]

    workers = frozenset(c for c in parent_of if c not in {a.switch for a in jp.aggregators})
    depth = max(up(w) for w in workers)
    for node in parent_of:
        up(node)
    return TreeTiming(tuple((c, p) for c, p in parent_of.items()), to_root, depth, workers)


def ina_window(tree: TreeTiming, switch: SwitchModel, host: HostProfile, rate_bps: float,
               jobs_sharing: int) -> tuple[int, float, float]:
    """(W, the job's window rate in bytes/s, its round trip in s)."""
    frame = switch.frame_bytes()
    rtt = 2.0 * tree.depth_s + 2.0 * host.per_packet_s
    limit = switch.max_window(jobs_sharing)
    w = auto_window(rate_bps, frame, rtt, limit) if switch.window is None else min(switch.window, limit)
    return w, window_rate(w, frame, rtt), rtt


def ina_program(tree: TreeTiming, run: CodecRun, switch: SwitchModel, host: HostProfile,
                window_bps: float, pb: PlatformBuilder) -> tuple[list[Step], Traffic]:
    """Every round of ``run`` up and down the tree."""
    frame = switch.frame_bytes()
    overhead = frame - 4 * switch.lanes
    for child, agg in tree.edges:
        pb.cap(child, agg, window_bps)
        pb.cap(agg, child, window_bps)
    codec = (run.codec_s if host.codec_time else 0.0) / len(run.rounds)
    steps, total = [], Traffic(0, 0, 0, 0)
    for r, rnd in enumerate(run.rounds):
        packets = max(1, math.ceil(rnd.lanes / switch.lanes))
        size = 4 * rnd.lanes + packets * overhead
        flows = []
        for child, agg in tree.edges:
            flows.append(Flow(child, agg, size, 0.0))
            flows.append(Flow(agg, child, size, tree.depth_s + tree.to_root_s[agg]))
        steps.append(Step(tuple(flows), codec, 1, 1, f"round{r}"))
        total = total.plus(Traffic(size, 4 * rnd.lanes, packets, 1, (size,), codec))
    return steps, total


def ps_program(workers: tuple[str, ...], ps: str, wire: ThcWire,
               pb: PlatformBuilder) -> tuple[list[Step], Traffic]:
    """THC's rounds through the parameter server ``ps``: up ``wire.up[r]`` payload bytes from
    every worker, down ``wire.down[r]`` to every worker once the farthest one's first packet got
    there.  A worker's bytes are its busier direction's (the down sums are wider than the up
    indices), as ``bench/baselines/common`` counts them."""
    remote = [w for w in workers if w != ps]
    steps, total = [], Traffic(0, 0, 0, 0)
    for r, (up, down) in enumerate(zip(wire.up, wire.down, strict=True)):
        framed = [b + max(1, math.ceil(b / (4 * RING_VALUES_PER_PACKET))) * ring_frame_bytes(0)
                  for b in (up, down)]
        reach = max(pb.step_latency(w, ps, framed[0]) for w in remote)
        flows = [Flow(w, ps, framed[0], pb.store_forward(w, ps, framed[0])) for w in remote]
        flows += [Flow(ps, w, framed[1], reach + pb.store_forward(ps, w, framed[1])) for w in remote]
        steps.append(Step(tuple(flows), 0.0, 1, 1, f"round{r}"))
        packets = max(1, math.ceil(max(up, down) / (4 * RING_VALUES_PER_PACKET)))
        total = total.plus(Traffic(max(framed), max(up, down), packets, 1, (max(framed),)))
    return steps, total
