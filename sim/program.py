"""The plain data a simulation runs on: a platform (links, routes) and one program per job.

Kept free of heavy imports: the engine process (``sim/engine.py``) unpickles these and imports
nothing of the project but this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Flow:
    """``bytes`` from node ``src`` to node ``dst``, started ``delay`` seconds into its step."""

    src: str
    dst: str
    bytes: float
    delay: float = 0.0


@dataclass(frozen=True)
class Step:
    """Flows that run together; the step ends when all have arrived, then ``compute_s`` of host
    time (the codec) passes.  A step that happens ``repeat`` times in a row (the ring's 2(N-1)
    identical steps) is simulated ``simulate`` times and the rest are charged at the mean."""

    flows: tuple[Flow, ...]
    compute_s: float = 0.0
    repeat: int = 1
    simulate: int = 1
    label: str = ""


@dataclass(frozen=True)
class JobProgram:
    job_id: int
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class NetLink:
    """A full-duplex link (``a`` -> ``b`` is its up direction): bytes/s and seconds."""

    name: str
    a: str
    b: str
    rate: float
    latency: float


@dataclass(frozen=True)
class PlatformSpec:
    """Nodes, links, per-switch pipeline latency and the route of every (src, dst) a flow uses:
    ``routes[(src, dst)]`` = [(link index, up?)], and the switches it enters.  ``host_rate``: a
    host's packet-processing limit per direction (bytes/s, shared by all its flows);
    ``caps[(src, dst)]``: a rate bound of that route's flows (a job's window).  On an emulated
    platform every host and switch shares one machine's cores: a route crosses the shared
    ``machine_rate`` link once per CPU stage (sender, each switch, receiver), so each stage costs
    its share of the cores."""

    nodes: tuple[str, ...]
    links: tuple[NetLink, ...]
    switches: tuple[str, ...]
    pipeline_s: float
    routes: dict[tuple[str, str], tuple[tuple[int, bool], ...]] = field(default_factory=dict)
    entered: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    host_rate: dict[str, float] = field(default_factory=dict)
    caps: dict[tuple[str, str], float] = field(default_factory=dict)
    machine_rate: float = 0.0     # bytes/s of one CPU stage on a shared machine (0: none)
    stages: dict[tuple[str, str], int] = field(default_factory=dict)   # CPU stages per route


@dataclass(frozen=True)
class EngineResult:
    """Simulated seconds per job, and what the simulation itself cost."""

    job_seconds: dict[int, float]
    comms: int
    wall_s: float
