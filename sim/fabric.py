"""Platforms: generated fat-trees and leaf-spines, or a topology file, as ``controller`` Topologies
with a rate and a latency per link, plus the jobs that run on them.

Specs: ``fattree:k=16`` (k-ary fat-tree, Al-Fares et al.: k^3/4 hosts, same names as
``topologies/fattree.py``), ``leafspine:leaves=8,spines=4,hosts=16`` (hosts per leaf), or a path
to a topology file (``controller.topology_file``).  ``--bw`` sets every link's rate; without it a
file's own ``bandwidth_gbps`` is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.errors import ControllerError
from controller.topology import DEFAULT_REGISTER_SLOTS, DEFAULT_WINDOW, Host, Job, Link, Switch, Topology
from controller.topology_file import load


class FabricError(ValueError):
    """A platform spec or job request that cannot be built (one line for the user)."""


@dataclass(frozen=True)
class Fabric:
    """A topology and each link's rate (bits/s) and latency (s), in ``topo.links`` order."""

    topo: Topology
    rate_bps: tuple[float, ...]
    latency_s: tuple[float, ...]
    spec: str

    def host_rate_bps(self, host: str) -> float:
        return self.rate_bps[self.topo.attachment(host).link]


def _host(name: str, i: int) -> Host:
    return Host(name, f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}", f"02:01:00:{(i >> 16) & 255:02x}:"
                f"{(i >> 8) & 255:02x}:{i & 255:02x}")


def _switch(name: str, i: int, slots: int) -> Switch:
    hi, lo = (i >> 8) & 255, i & 255
    return Switch(name, f"10.255.{hi}.{lo}", f"02:02:00:00:{hi:02x}:{lo:02x}", True, slots, 1)


def fattree(k: int, slots: int = DEFAULT_REGISTER_SLOTS) -> Topology:
    """The k-ary fat-tree (k even, 2..32): edge e{p}_{e}, aggregation a{p}_{a}, core c{g}_{c}."""
    if k < 2 or k % 2 or k > 32:
        raise FabricError(f"fat-tree k must be even and in 2..32, got {k}")
    half = k // 2
    names = [f"e{p}_{e}" for p in range(k) for e in range(half)]
    names += [f"a{p}_{a}" for p in range(k) for a in range(half)]
    names += [f"c{g}_{c}" for g in range(half) for c in range(half)]
    switches = {n: _switch(n, i, slots) for i, n in enumerate(names)}
    hosts: dict[str, Host] = {}
    links: list[Link] = []
    for p in range(k):
        for e in range(half):
            for i in range(half):
                name = f"h{p}_{e}_{i}"
                hosts[name] = _host(name, len(hosts))
                links.append(Link(name, 0, f"e{p}_{e}", 1 + i))
    for p in range(k):
        for e in range(half):
            for a in range(half):
                links.append(Link(f"e{p}_{e}", half + 1 + a, f"a{p}_{a}", 1 + e))
    for p in range(k):
        for a in range(half):
            for c in range(half):
                links.append(Link(f"a{p}_{a}", half + 1 + c, f"c{a}_{c}", 1 + p))
    return Topology(f"fattree{k}", hosts, switches, tuple(links))


def leafspine(leaves: int, spines: int, hosts_per_leaf: int, slots: int = DEFAULT_REGISTER_SLOTS) -> Topology:
    """Every leaf linked to every spine; ``hosts_per_leaf`` hosts under each leaf."""
    if not (1 <= leaves <= 32 and 1 <= spines <= 64 and 1 <= hosts_per_leaf <= 64):
        raise FabricError("leaf-spine needs 1..32 leaves, 1..64 spines and 1..64 hosts per leaf")
    names = [f"sp{s}" for s in range(spines)] + [f"l{v}" for v in range(leaves)]
    switches = {n: _switch(n, i, slots) for i, n in enumerate(names)}
    hosts: dict[str, Host] = {}
    links: list[Link] = []
    for v in range(leaves):
        for i in range(hosts_per_leaf):
            name = f"h{v}_{i}"
            hosts[name] = _host(name, len(hosts))
            links.append(Link(name, 0, f"l{v}", 1 + i))
    for v in range(leaves):
        for s in range(spines):
            links.append(Link(f"l{v}", hosts_per_leaf + 1 + s, f"sp{s}", 1 + v))
    return Topology(f"leafspine{leaves}x{spines}x{hosts_per_leaf}", hosts, switches, tuple(links))


def _params(text: str, allowed: dict[str, int]) -> dict[str, int]:
    out = dict(allowed)
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or key not in allowed:
            raise FabricError(f"unknown parameter {part!r}; allowed: {', '.join(allowed)}")
        try:
            out[key] = int(value)
        except ValueError:
            raise FabricError(f"{key}={value!r} is not an integer") from None
    return out


def build_topology(spec: str) -> Topology:
    """The topology a spec names (see the module docstring)."""
    kind, _, rest = spec.partition(":")
    if kind == "fattree":
        return fattree(_params(rest, {"k": 4})["k"])
    if kind == "leafspine":
        p = _params(rest, {"leaves": 4, "spines": 2, "hosts": 2})
        return leafspine(p["leaves"], p["spines"], p["hosts"])
    path = Path(spec)
    if not path.exists():
        raise FabricError(f"--topo {spec!r}: not fattree:k=K, leafspine:leaves=L,spines=S,hosts=H "
                          "or an existing topology file")
    try:
        return load(path)
    except ControllerError as err:
        raise FabricError(str(err)) from None


def make_fabric(spec: str, rate_bps: float | None, latency_s: float) -> Fabric:
    """``spec``'s topology with every link at ``rate_bps`` (None: the file's rates)."""
    topo = build_topology(spec)
    rates = tuple(rate_bps if rate_bps else link.bandwidth_gbps * 1e9 for link in topo.links)
    return Fabric(topo, rates, tuple(latency_s for _ in topo.links), spec)


def assign_jobs(topo: Topology, workers: int | None, jobs: int, dense_bytes: int, lanes: int,
                window: int = DEFAULT_WINDOW, only: int | None = None) -> Topology:
    """``topo`` with ``jobs`` jobs splitting ``workers`` hosts (topology order, contiguous blocks,
    so a job sits under as few edge switches as possible).  ``workers`` None: keep a file's jobs
    (only job ``only`` if given), else one job over every host."""
    if workers is None and topo.jobs:
        kept = [j for j in topo.jobs if only is None or j.id == only]
        if not kept:
            raise FabricError(f"--job {only}: the topology has jobs {[j.id for j in topo.jobs]}")
        return topo.with_jobs([Job(j.id, j.workers, dense_bytes, j.window, lanes) for j in kept])
    names = list(topo.hosts)
    n = len(names) if workers is None else workers
    if not 2 <= n <= len(names):
        raise FabricError(f"--workers {n}: the platform has {len(names)} hosts (need 2..{len(names)})")
    if jobs < 1 or n // jobs < 2:
        raise FabricError(f"--jobs {jobs}: each of the jobs needs at least 2 of the {n} workers")
    size = n // jobs
    return topo.with_jobs([Job(j + 1, tuple(names[j * size:(j + 1) * size]), dense_bytes, window, lanes)
                           for j in range(jobs)])
