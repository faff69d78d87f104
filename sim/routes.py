"""Host and switch routes of a topology, the ones the controller deploys (unique shortest paths,
``controller.topology``), from the controller's array-backed ``RouteTable`` so 1,024-host
fabrics route in well under a second."""

from __future__ import annotations

from controller.placement.routes import RouteTable
from controller.topology import Topology


class Router:
    """``path(src, dst)``: the links and nodes from ``src`` to ``dst``, hosts or switches."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.table = RouteTable.build(topo)

    def _next(self, node: str, dst: str) -> int:
        topo = self.topo
        if dst in topo.hosts:
            att = topo.attachment(dst)
            if node == att.switch:
                return att.link
            dst = att.switch
        if node in topo.hosts:
            return topo.attachment(node).link
        return self.table.next_hop_link(node, dst)

    def path(self, src: str, dst: str) -> tuple[list[tuple[int, bool]], list[str]]:
        """[(link index, traversed a -> b?)] and the switches entered (src excluded)."""
        hops: list[tuple[int, bool]] = []
        entered: list[str] = []
        node = src
        while node != dst:
            i = self._next(node, dst)
            link = self.topo.links[i]
            hops.append((i, link.a == node))
            node = link.other(node)
            if node in self.topo.switches:
                entered.append(node)
            if len(hops) > len(self.topo.links):
                raise ValueError(f"no loop-free route from {src} to {dst}")
        return hops, entered
