"""Array-backed routes and full-aggregation trees for large networks (numba kernels).

``Topology`` routes with a Dijkstra whose tie-break weights are integers of ``len(links)`` bits:
exact, but about 2 s per destination on a k = 48 fat-tree.  ``RouteTable`` computes the same
routes for every switch destination at once: a breadth-first search per destination where a
node's candidate routes are compared by their link sets, highest index first (the order the
weights 2^i impose among routes of equal hop count).  ``tests/controller/test_placement_scale``
checks it against ``Topology.next_hop_link`` node for node.

``job_root_table`` walks, for every job and every candidate root, the job's tree with full
aggregation (every switch with room aggregates) and returns per (job, root) what the scalable
model needs: whether the root is useful (it receives two or more streams), the tree's size in
streams, whether every fan-in is within the limit, and a 128-bit hash of the streams it puts on
the *kept* links (see ``scale``).  ``tree_links`` returns the links and aggregators of
chosen (job, root) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from controller.topology import Job, Topology

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


@numba.njit(cache=True)
def _earlier(a: np.ndarray, b: np.ndarray, n: int) -> bool:
    """Is the descending link list a[:n] smaller than b[:n] as a set (highest difference)?"""
    for k in range(n):
        if a[k] != b[k]:
            return a[k] < b[k]
    return False


@numba.njit(cache=True)
def _insert(key: np.ndarray, n: int, link: int, out: np.ndarray) -> None:
    """out[:n+1] = key[:n] with ``link`` inserted, descending."""
    j = 0
    placed = False
    for k in range(n):
        if not placed and link > key[k]:
            out[j] = link
            j += 1
            placed = True
        out[j] = key[k]
        j += 1
    if not placed:
        out[j] = link


@numba.njit(cache=True)
def _routes(indptr, nbr, lnk, dsts, out):  # pragma: no cover - compiled
    """out[d_row, v] = link v uses toward switch dsts[d_row] (-1: v is dst or unreachable)."""
    n = indptr.shape[0] - 1
    level = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    for row in range(dsts.shape[0]):
        d = dsts[row]
        level[:] = -1
        level[d] = 0
        order[0] = d
        head, tail = 0, 1
        while head < tail:
            u = order[head]
            head += 1
            for e in range(indptr[u], indptr[u + 1]):
                v = nbr[e]
                if level[v] < 0:
                    level[v] = level[u] + 1
                    order[tail] = v
                    tail += 1
        depth = level[order[tail - 1]] + 1
        keys = np.zeros((n, depth), np.int64)
        cand = np.empty(depth, np.int64)
        best = np.empty(depth, np.int64)
        out[row, :] = -1
        for t in range(1, tail):
            v = order[t]
            lv = level[v]
            found = False
            for e in range(indptr[v], indptr[v + 1]):
                u = nbr[e]
                if level[u] != lv - 1:
                    continue
                _insert(keys[u], lv - 1, lnk[e], cand)
                if not found or _earlier(cand, best, lv):
                    best[:lv] = cand[:lv]
                    out[row, v] = lnk[e]
                    found = True
            keys[v, :lv] = best[:lv]


@dataclass
class RouteTable:
    """Next hops toward every switch, as arrays (switch indexes follow ``names``)."""

    topo: Topology
    names: list[str]
    index: dict[str, int]
    link_a: np.ndarray   # switch index of each link's end a (-1 for a host)
    link_b: np.ndarray
    next_link: np.ndarray  # [dst switch, switch] -> link index, -1 at the destination

    @classmethod
    def build(cls, topo: Topology) -> RouteTable:
        names = sorted(topo.switches)
        index = {n: i for i, n in enumerate(names)}
        la = np.array([index.get(ln.a, -1) for ln in topo.links], np.int64)
        lb = np.array([index.get(ln.b, -1) for ln in topo.links], np.int64)
        sw = np.flatnonzero((la >= 0) & (lb >= 0))
        # adjacency in link order for both directions (the order does not change the result)
        src = np.concatenate([la[sw], lb[sw]])
        dst = np.concatenate([lb[sw], la[sw]])
        link = np.concatenate([sw, sw])
        order = np.lexsort((link, src))
        indptr = np.searchsorted(src[order], np.arange(len(names) + 1))
        table = np.empty((len(names), len(names)), np.int32)
        _routes(
            indptr.astype(np.int64), dst[order], link[order], np.arange(len(names), dtype=np.int64), table
        )
        return cls(topo, names, index, la, lb, table)

    def next_hop_link(self, node: str, dst: str) -> int:
        """The link ``node`` (switch or host) uses toward switch ``dst``; as ``Topology``'s."""
        if node == dst:
            raise ValueError(f"{node} is the destination itself")
        if node in self.topo.hosts:
            return self.topo.attachment(node).link
        link = int(self.next_link[self.index[dst], self.index[node]])
        if link < 0:
            raise ValueError(f"no route from {node} to {dst}")
        return link


@numba.njit(cache=True)
def _mix(x: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    """splitmix64 finaliser: a well-spread 64-bit image of x."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def _walk(
    r, ws, wc, room, next_link, link_a, link_b, mark, stamp, inflow, send, pending, nodes, queue
):  # pragma: no cover
    """Full-aggregation tree of one job toward root r.  Fills ``nodes`` (tree nodes, root
    included), inflow/send per node; returns the node count.  ``mark == stamp`` marks the tree."""
    count = 0
    row = next_link[r]
    for k in range(ws.shape[0]):
        node = ws[k]
        while mark[node] != stamp:
            mark[node] = stamp
            inflow[node] = 0
            pending[node] = 0
            nodes[count] = node
            count += 1
            if node == r:
                break
            link = row[node]
            node = link_b[link] if link_a[link] == node else link_a[link]
    for k in range(ws.shape[0]):
        inflow[ws[k]] += wc[k]
    for k in range(count):
        node = nodes[k]
        if node != r:
            link = row[node]
            parent = link_b[link] if link_a[link] == node else link_a[link]
            pending[parent] += 1
    head, tail = 0, 0
    for k in range(count):
        if pending[nodes[k]] == 0:
            queue[tail] = nodes[k]
            tail += 1
    while head < tail:
        node = queue[head]
        head += 1
        send[node] = 1 if (room[node] and inflow[node] >= 1) else inflow[node]
        if node == r:
            continue
        link = row[node]
        parent = link_b[link] if link_a[link] == node else link_a[link]
        inflow[parent] += send[node]
        pending[parent] -= 1
        if pending[parent] == 0:
            queue[tail] = parent
            tail += 1
    return count


@numba.njit(cache=True)
def _table(job_ptr, wsw, wcnt, room, roots_ok, next_link, link_a, link_b, kept, fan_in,
           useful, size, fanin_ok, h1, h2, n_aggs):  # pragma: no cover - compiled
    n = next_link.shape[0]
    mark = np.zeros(n, np.int64)
    inflow = np.zeros(n, np.int64)
    send = np.zeros(n, np.int64)
    pending = np.zeros(n, np.int64)
    nodes = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    stamp = 0
    for j in range(job_ptr.shape[0] - 1):
        ws = wsw[job_ptr[j]:job_ptr[j + 1]]
        wc = wcnt[job_ptr[j]:job_ptr[j + 1]]
        rj = room[j]
        for r in range(n):
            if not roots_ok[j, r]:
                continue
            stamp += 1
            count = _walk(
                r, ws, wc, rj, next_link, link_a, link_b, mark, stamp, inflow, send, pending, nodes, queue
            )
            if inflow[r] < 2:
                continue
            useful[j, r] = True
            row = next_link[r]
            s = 0
            a = np.uint64(0)
            b = np.uint64(0)
            ok = True
            aggs = 0
            for k in range(count):
                node = nodes[k]
                if rj[node] and (inflow[node] >= 2 or node == r):
                    aggs += 1
                    if inflow[node] > fan_in:
                        ok = False
                if node == r:
                    continue
                link = row[node]
                s += send[node]
                if kept[link]:
                    x = np.uint64(link) * np.uint64(1 << 20) + np.uint64(send[node])
                    a += _mix(x)
                    b += _mix(x ^ np.uint64(0x9E3779B97F4A7C15))
            size[j, r] = s
            fanin_ok[j, r] = ok
            h1[j, r] = a
            h2[j, r] = b
            n_aggs[j, r] = aggs


@numba.njit(cache=True)
def _links_of(pairs, job_ptr, wsw, wcnt, room, next_link, link_a, link_b,
              out_ptr, out_link, out_streams, agg_ptr, out_aggs):  # pragma: no cover - compiled
    n = next_link.shape[0]
    mark = np.zeros(n, np.int64)
    inflow = np.zeros(n, np.int64)
    send = np.zeros(n, np.int64)
    pending = np.zeros(n, np.int64)
    nodes = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    pos, apos = 0, 0
    for p in range(pairs.shape[0]):
        j, r = pairs[p, 0], pairs[p, 1]
        ws = wsw[job_ptr[j]:job_ptr[j + 1]]
        wc = wcnt[job_ptr[j]:job_ptr[j + 1]]
        count = _walk(
            r, ws, wc, room[j], next_link, link_a, link_b, mark, p + 1, inflow, send, pending, nodes, queue
        )
        row = next_link[r]
        for k in range(count):
            node = nodes[k]
            if room[j, node] and (inflow[node] >= 2 or node == r):
                if apos < out_aggs.shape[0]:
                    out_aggs[apos] = node
                apos += 1
            if node == r:
                continue
            if pos < out_link.shape[0]:
                out_link[pos] = row[node]
                out_streams[pos] = send[node]
            pos += 1
        out_ptr[p + 1] = pos
        agg_ptr[p + 1] = apos


@dataclass
class JobArrays:
    """Jobs as arrays: worker switches and counts per job (CSR), and where each job may aggregate."""

    jobs: list[Job]
    job_ptr: np.ndarray
    wsw: np.ndarray
    wcnt: np.ndarray
    room: np.ndarray  # [job, switch] capable with room for one region of the job

    @classmethod
    def build(cls, topo: Topology, routes: RouteTable, jobs: list[Job]) -> JobArrays:
        n = len(routes.names)
        capable = np.array([topo.switches[s].programmable for s in routes.names])
        slots = np.array([topo.switches[s].register_slots for s in routes.names])
        ptr, wsw, wcnt = [0], [], []
        room = np.zeros((len(jobs), n), np.bool_)
        for j, job in enumerate(jobs):
            counts: dict[int, int] = {}
            for w in job.workers:
                i = routes.index[topo.attachment(w).switch]
                counts[i] = counts.get(i, 0) + 1
            wsw.extend(counts)
            wcnt.extend(counts.values())
            ptr.append(len(wsw))
            room[j] = capable & (slots >= job.region_slots)
        return cls(jobs, np.array(ptr, np.int64), np.array(wsw, np.int64), np.array(wcnt, np.int64), room)


@dataclass
class RootTable:
    """Per (job, switch as root), full aggregation: useful root, tree size (streams on switch
    links), fan-in within limit, hash of the kept-link streams (two 64-bit halves), aggregators."""

    useful: np.ndarray
    size: np.ndarray
    fanin_ok: np.ndarray
    h1: np.ndarray
    h2: np.ndarray
    n_aggs: np.ndarray


def job_root_table(routes: RouteTable, ja: JobArrays, kept: np.ndarray, fan_in: int) -> RootTable:
    shape = ja.room.shape
    out = RootTable(np.zeros(shape, np.bool_), np.zeros(shape, np.int64), np.zeros(shape, np.bool_),
                    np.zeros(shape, np.uint64), np.zeros(shape, np.uint64), np.zeros(shape, np.int64))
    _table(ja.job_ptr, ja.wsw, ja.wcnt, ja.room, ja.room, routes.next_link, routes.link_a, routes.link_b,
           kept, fan_in, out.useful, out.size, out.fanin_ok, out.h1, out.h2, out.n_aggs)
    return out


@dataclass
class TreeLinks:
    """Switch links (with streams) and aggregators of chosen (job, root) pairs, CSR by pair."""

    ptr: np.ndarray
    link: np.ndarray
    streams: np.ndarray
    agg_ptr: np.ndarray
    aggs: np.ndarray


def tree_links(routes: RouteTable, ja: JobArrays, pairs: np.ndarray) -> TreeLinks:
    """Trees of ``pairs`` ([k, 2] job row, root switch index) with full aggregation."""
    pairs = np.ascontiguousarray(pairs, np.int64).reshape(-1, 2)
    n = len(pairs)
    ptr, agg_ptr = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
    cap = max(1, n * 8)
    while True:
        link, streams, aggs = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
        _links_of(pairs, ja.job_ptr, ja.wsw, ja.wcnt, ja.room, routes.next_link, routes.link_a, routes.link_b,
                  ptr, link, streams, agg_ptr, aggs)
        if ptr[-1] <= cap and agg_ptr[-1] <= cap:
            return TreeLinks(ptr, link[:ptr[-1]], streams[:ptr[-1]], agg_ptr, aggs[:agg_ptr[-1]])
        cap = int(max(ptr[-1], agg_ptr[-1]))
