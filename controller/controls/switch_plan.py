"""What one switch must do, with every address, port and allocation already resolved.

``controller.entries`` builds these from topology + placement; the program classes only
translate them into table entries, so allocation policy and P4 encoding stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    """A /32 route: packets to ``ip`` leave on ``port`` towards the next hop with MAC ``next_mac``."""

    ip: str
    next_mac: str
    port: int


@dataclass(frozen=True)
class ChildPlan:
    """A child of an aggregator: its bit, where it hangs, and how its copy of a RESULT is addressed."""

    name: str
    kind: str       # "host" | "switch"
    child_id: int   # bit index at this aggregator
    port: int       # this switch's port towards the child
    addr: str       # the child's address (worker IP, or child aggregator's own address)
    next_mac: str   # MAC of the next hop towards the child (the child itself if attached)
    rid: int        # replica id of the child's RESULT copy (>= 1, unique on this switch)


@dataclass(frozen=True)
class JobPlan:
    """One job aggregated on one switch: the ``set_job`` parameters plus children and levels."""

    job_id: int
    base: int
    window: int
    mcast_grp: int
    is_root: bool
    uplink_port: int
    parent_child_id: int
    own_addr: str
    parent_addr: str | None
    stats_idx: int
    children: tuple[ChildPlan, ...]
    levels: tuple[tuple[int, int], ...]  # (level, op)
    epoch: int = 0  # current session; only frames carrying it reach the registers


@dataclass(frozen=True)
class SwitchPlan:
    name: str
    ip: str
    mac: str
    routes: tuple[Route, ...]
    arp: tuple[tuple[str, str], ...]  # (ip, mac) answered by proxy ARP
    jobs: tuple[JobPlan, ...]
    host_ports: tuple[tuple[int, str], ...] = ()  # (port, ip) of each host attached: anti-spoofing
