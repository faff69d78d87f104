"""Root options: a job's tree under each candidate root with full aggregation (third link of the
placement chain, used by the greedy start and the root-assignment model).

For a fixed root, aggregating at every capable switch on the tree minimises every link's load at
once; the fewest aggregators giving those loads are the root plus the switches where two or more
streams meet.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.placement.solver import fits, postorder
from controller.topology import Job, Topology
from dhcwire.p4names import MAX_FAN_IN


@dataclass(frozen=True)
class RootOption:
    """Job j rooted at ``root`` with full aggregation: its aggregators and per-link streams."""

    root: str
    aggregators: frozenset[str]
    link_streams: dict[int, int]


def root_options(topo: Topology, job: Job) -> tuple[list[RootOption], bool]:
    """Every useful root of ``job`` and whether full aggregation respects the fan-in limit under
    all of them.  Roots receiving a single stream are dropped: rooting at that stream's sender
    gives the same tree minus one link."""
    room = set(fits(topo, job))
    attached: dict[str, int] = {}
    for w in job.workers:
        sw = topo.attachment(w).switch
        attached[sw] = attached.get(sw, 0) + 1
    options: list[RootOption] = []
    fanin_ok = True
    for r in sorted(room):
        up, kids = topo.upward_tree(attached, r)   # node -> link toward r; children
        streams: dict[str, int] = {}  # node -> streams it sends upward
        inflow: dict[str, int] = {}
        for node in postorder(kids, r):
            inflow[node] = attached.get(node, 0) + sum(streams[c] for c in kids.get(node, ()))
            streams[node] = 1 if node in room else inflow[node]
        aggs = frozenset(n for n in inflow if n in room and (inflow[n] >= 2 or n == r))
        if any(inflow[n] > MAX_FAN_IN for n in aggs):
            fanin_ok = False
        if inflow[r] < 2:
            continue
        link_streams = {link: streams[node] for node, link in up.items()}
        for w in job.workers:
            link_streams[topo.attachment(w).link] = 1
        options.append(RootOption(r, aggs, link_streams))
    return options, fanin_ok
