"""Routing: unique shortest paths that are symmetric and prefix-consistent, and the next-hop
ports the deployment turns into forwarding entries."""

from __future__ import annotations

from collections import deque
from itertools import product

import pytest

from controller.topology import Topology
from topologies.fattree import build_fattree


def _bfs_hops(topo: Topology, src: str) -> dict[str, int]:
    """Independent hop count: plain BFS that never transits a host."""
    dist = {src: 0}
    todo = deque([src])
    while todo:
        node = todo.popleft()
        if node in topo.hosts and node != src:
            continue
        for _, nb in topo.adjacency[node]:
            if nb not in dist:
                dist[nb] = dist[node] + 1
                todo.append(nb)
    return dist


@pytest.fixture(scope="module")
def ft4() -> Topology:
    return build_fattree(4)


def test_fattree_sizes() -> None:
    for k, switches, hosts in ((4, 20, 16), (8, 80, 128)):
        topo = build_fattree(k)
        assert (len(topo.switches), len(topo.hosts)) == (switches, hosts)
        assert len(topo.links) == hosts + 2 * (k * (k // 2) ** 2)
        assert all(
            link.port_of(sw) >= 1 for link in topo.links for sw in (link.a, link.b) if sw in topo.switches
        )


def test_paths_are_shortest_symmetric_and_prefix_consistent(ft4: Topology) -> None:
    nodes = [*ft4.switches, *sorted(ft4.hosts)[:6]]
    for src in nodes:
        hops = _bfs_hops(ft4, src)
        for dst in nodes:
            if src == dst:
                continue
            path = ft4.path(src, dst)
            assert len(path) - 1 == hops[dst], (src, dst)
            assert ft4.path(dst, src) == path[::-1], (src, dst)
            for i, mid in enumerate(path[1:-1], start=1):
                assert ft4.path(src, mid) == path[: i + 1], (src, mid, dst)
            assert all(n not in ft4.hosts for n in path[1:-1])


def test_next_hop_port_follows_path_and_is_deterministic(ft4: Topology) -> None:
    again = build_fattree(4)
    for sw, dst in product(ft4.switches, [*ft4.switches, *ft4.hosts]):
        if sw == dst:
            continue
        port = ft4.next_hop_port(sw, dst)
        assert port == again.next_hop_port(sw, dst)
        nxt = ft4.path(sw, dst)[1]
        assert any(link.port_of(sw) == port and link.other(sw) == nxt
                   for link in ft4.links if sw in (link.a, link.b))


def test_next_hop_port_rejects_bad_input(ft4: Topology) -> None:
    with pytest.raises(ValueError, match="not a switch"):
        ft4.next_hop_port("h0_0_0", "e0_0")
    with pytest.raises(ValueError, match="destination itself"):
        ft4.next_hop_port("e0_0", "e0_0")
    with pytest.raises(KeyError):
        ft4.next_hop_port("e0_0", "nowhere")


def test_hosts_attach_with_their_ports(ft4: Topology) -> None:
    att = ft4.attachment("h1_1_0")
    assert (att.switch, att.switch_port, att.host_port) == ("e1_1", 1, 0)
    assert ft4.next_hop_port("e1_1", "h1_1_0") == 1
