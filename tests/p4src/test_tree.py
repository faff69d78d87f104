"""Two-level tree on two softswitch instances wired by hand:

    w0 --1--+                       +--2-- w3
            leaf L (uplink 3) --- 1-- root R
    w1 --2--+

L aggregates w0 + w1 and sends its partial up as child 0 of R; R adds w3 (child 1) and
multicasts the RESULT to L and w3; L multicasts it down to w0 and w1.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dhcwire import header as wire
from dhcwire.p4names import DROP_STALE_EPOCH, DROP_UNAUTHORISED
from tests.p4src.dhcnet import (
    Aggregator,
    Child,
    Host,
    dhc_frame,
    drops,
    job_counts,
    load_switch,
    parse_dhc,
    program_job,
    program_switch_basics,
    set_epoch,
)

K = 4
JOB = 5
LEAF = Host("L", "00:00:00:00:0a:00", "10.0.1.100")
ROOT = Host("R", "00:00:00:00:0b:00", "10.0.0.100")
W = [Host("w0", "00:00:00:00:00:01", "10.0.1.1"), Host("w1", "00:00:00:00:00:02", "10.0.1.2"),
     Host("w3", "00:00:00:00:00:04", "10.0.0.4")]
LEAF_UPLINK, ROOT_TO_LEAF, ROOT_TO_W3 = 3, 1, 2


@dataclass
class Tree:
    leaf: object
    root: object

    def worker(self, i: int, lanes: list[int], chunk: int = 0, **kw) -> list[tuple[int, bytes]]:
        slot = wire.slot_for_chunk(chunk, 4)
        if i < 2:
            return self.leaf.process(i + 1, dhc_frame(W[i], LEAF.mac, LEAF.ip, lanes, job=JOB, chunk=chunk,
                                                      slot=slot, child_id=i, **kw))
        return self.root.process(ROOT_TO_W3, dhc_frame(W[2], ROOT.mac, ROOT.ip, lanes, job=JOB, chunk=chunk,
                                                       slot=slot, child_id=1, **kw))


@pytest.fixture
def tree() -> Tree:
    leaf, root = load_switch(lanes=K), load_switch(lanes=K)
    program_switch_basics(leaf, LEAF, {W[0].ip: (W[0].mac, 1), W[1].ip: (W[1].mac, 2),
                                       ROOT.ip: (ROOT.mac, LEAF_UPLINK)})
    program_job(leaf, Aggregator(job=JOB, base=0, window=4, own=LEAF, parent=ROOT, uplink_port=LEAF_UPLINK,
                                 parent_child_id=0, stats_idx=0,
                                 children=[Child(W[0], 1, 0, rid=1), Child(W[1], 2, 1, rid=2)]))
    program_switch_basics(root, ROOT, {LEAF.ip: (LEAF.mac, ROOT_TO_LEAF), W[2].ip: (W[2].mac, ROOT_TO_W3)})
    program_job(
        root,
        Aggregator(
            job=JOB,
            base=8,
            window=4,
            own=ROOT,
            stats_idx=1,
            children=[Child(LEAF, ROOT_TO_LEAF, 0, rid=1, is_switch=True), Child(W[2], ROOT_TO_W3, 1, rid=2)],
        ),
    )
    return Tree(leaf, root)


def up_partial(tree: Tree, out: list[tuple[int, bytes]], expected: list[int]) -> bytes:
    """The leaf's single output: its partial on the uplink, addressed as child 0 of the root."""
    assert [p for p, _ in out] == [LEAF_UPLINK]
    p = parse_dhc(out[0][1], K)
    assert (p.eth_src, p.eth_dst, p.ip_src, p.ip_dst) == (LEAF.mac, ROOT.mac, LEAF.ip, ROOT.ip)
    assert p.header["pkt_type"] == wire.PacketType.DATA and p.header["child_id"] == 0
    assert p.ip_checksum_ok and p.udp_dport == wire.DHC_UDP_PORT
    assert p.lanes == expected
    return out[0][1]


def test_leaf_partial_goes_up_and_root_result_comes_down(tree: Tree) -> None:
    assert tree.worker(0, [1, 2, 3, 0xFFFFFFFF]) == []
    partial = up_partial(tree, tree.worker(1, [10, 20, 30, 2]), [11, 22, 33, 1])
    assert tree.root.process(ROOT_TO_LEAF, partial) == []
    out = dict(tree.worker(2, [100, 200, 300, 400]))
    assert sorted(out) == [ROOT_TO_LEAF, ROOT_TO_W3]
    total = [111, 222, 333, 401]
    to_w3 = parse_dhc(out[ROOT_TO_W3], K)
    assert (to_w3.ip_dst, to_w3.eth_dst, to_w3.lanes) == (W[2].ip, W[2].mac, total)
    to_leaf = parse_dhc(out[ROOT_TO_LEAF], K)
    assert (to_leaf.ip_src, to_leaf.ip_dst, to_leaf.eth_dst) == (ROOT.ip, LEAF.ip, LEAF.mac)
    assert to_leaf.header["pkt_type"] == wire.PacketType.RESULT
    down = dict(tree.leaf.process(LEAF_UPLINK, out[ROOT_TO_LEAF]))
    assert sorted(down) == [1, 2]
    for port, w in ((1, W[0]), (2, W[1])):
        p = parse_dhc(down[port], K)
        assert (p.eth_dst, p.eth_src, p.ip_dst, p.ip_src) == (w.mac, LEAF.mac, w.ip, LEAF.ip)
        assert p.ip_checksum_ok and p.header["pkt_type"] == wire.PacketType.RESULT
        assert p.lanes == total
    assert job_counts(tree.leaf, 0) == {"contributions": 2, "completions": 1, "duplicates": 0, "results": 1}
    assert job_counts(tree.root, 1) == {"contributions": 2, "completions": 1, "duplicates": 0, "results": 1}


def test_retransmission_at_leaf_is_answered_by_root(tree: Tree) -> None:
    tree.worker(0, [1, 1, 1, 1])
    partial = up_partial(tree, tree.worker(1, [2, 2, 2, 2]), [3, 3, 3, 3])
    tree.root.process(ROOT_TO_LEAF, partial)
    tree.worker(2, [4, 4, 4, 4])  # root completes; suppose every result copy to the leaf is lost
    # w0 retransmits: the leaf is complete, so it sends its stored partial up again
    again = up_partial(tree, tree.worker(0, [1, 1, 1, 1]), [3, 3, 3, 3])
    answer = tree.root.process(ROOT_TO_LEAF, again)
    assert [p for p, _ in answer] == [ROOT_TO_LEAF]                     # unicast back to the leaf
    a = parse_dhc(answer[0][1], K)
    assert (a.ip_src, a.ip_dst, a.eth_dst, a.lanes) == (ROOT.ip, LEAF.ip, LEAF.mac, [7, 7, 7, 7])
    down = dict(tree.leaf.process(LEAF_UPLINK, answer[0][1]))
    assert sorted(down) == [1, 2] and parse_dhc(down[1], K).lanes == [7, 7, 7, 7]
    assert job_counts(tree.root, 1)["duplicates"] == 1
    assert job_counts(tree.leaf, 0)["duplicates"] == 1


def test_result_at_leaf_only_from_parent_on_uplink(tree: Tree) -> None:
    fake = dhc_frame(W[0], LEAF.mac, LEAF.ip, [9] * K, job=JOB, pkt_type=int(wire.PacketType.RESULT))
    assert tree.leaf.process(1, fake) == []                              # from a worker
    spoof = dhc_frame(Host("x", W[0].mac, ROOT.ip), LEAF.mac, LEAF.ip, [9] * K, job=JOB,
                      pkt_type=int(wire.PacketType.RESULT))
    assert tree.leaf.process(1, spoof) == []                             # root's address, wrong port
    wrong_src = dhc_frame(W[2], LEAF.mac, LEAF.ip, [9] * K, job=JOB, pkt_type=int(wire.PacketType.RESULT))
    assert tree.leaf.process(LEAF_UPLINK, wrong_src) == []               # right port, not the parent
    assert drops(tree.leaf) == {DROP_UNAUTHORISED: 3}


def test_epoch_travels_up_and_down_and_a_stale_result_is_dropped(tree: Tree) -> None:
    """Both switches move the job to epoch 3: the partial and the RESULT carry it end to end; the
    leaf drops a RESULT of the old epoch even from its parent on the uplink."""
    for sw in (tree.leaf, tree.root):
        set_epoch(sw, JOB, 3, old=0)
    tree.worker(0, [1] * K, epoch=3)
    partial = up_partial(tree, tree.worker(1, [2] * K, epoch=3), [3] * K)
    assert parse_dhc(partial, K).header["epoch"] == 3
    tree.root.process(ROOT_TO_LEAF, partial)
    out = dict(tree.worker(2, [4] * K, epoch=3))
    result = out[ROOT_TO_LEAF]
    assert parse_dhc(result, K).header["epoch"] == 3
    stale = bytearray(result)
    stale[14 + 20 + 8 + 7] = 2                     # dhc_h.epoch (byte 7 of dhc_h) := 2
    stale_frame = bytes(stale)
    assert tree.leaf.process(LEAF_UPLINK, stale_frame) == []
    assert drops(tree.leaf) == {DROP_STALE_EPOCH: 1}
    down = dict(tree.leaf.process(LEAF_UPLINK, result))
    assert sorted(down) == [1, 2] and all(parse_dhc(f, K).lanes == [7] * K for f in down.values())
