"""The slot/shadow protocol end to end on one root: three self-clocked workers stream chunks
through a window of 2 slots, RESULT copies are lost at random and recovered by retransmission.
Every worker must end with the exact sum of every chunk, and the switch must count each
contribution once."""

from __future__ import annotations

import numpy as np
import pytest

from dhcwire import header as wire
from tests.p4src.dhcnet import job_counts
from tests.p4src.test_aggregation import WORKERS, make_rig

CHUNKS, WINDOW = 12, 2


def contribution(w: int, chunk: int) -> list[int]:
    rng = np.random.default_rng(1000 * w + chunk)
    return [int(v) for v in rng.integers(0, 1 << 32, size=4, dtype=np.uint64)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lossy_self_clocked_stream(seed: int) -> None:
    rig = make_rig(window=WINDOW, base=6)
    rng = np.random.default_rng(seed)
    expected = {c: [int(v) for v in np.sum([np.array(contribution(w, c), dtype=np.uint32) for w in range(3)],
                                           axis=0, dtype=np.uint32)] for c in range(CHUNKS)}
    got: list[dict[int, list[int]]] = [{} for _ in WORKERS]
    sent: list[set[int]] = [set() for _ in WORKERS]
    retransmissions = 0
    for _ in range(2000):
        if all(len(g) == CHUNKS for g in got):
            break
        w = int(rng.integers(3))
        nxt = max(sent[w], default=-1) + 1
        may_send_new = nxt < CHUNKS and (nxt < WINDOW or nxt - WINDOW in got[w])
        outstanding = sorted(c for c in sent[w] if c not in got[w])
        if may_send_new and (not outstanding or rng.random() < 0.7):
            chunk = nxt
            sent[w].add(chunk)
        elif outstanding:
            chunk = int(rng.choice(outstanding))
            retransmissions += 1
        else:
            continue
        for port, frame in rig.send(w, contribution(w, chunk), chunk=chunk):
            if rng.random() < 0.3:                        # this copy of the result is lost
                continue
            p = rig.parse([(port, frame)])[port]
            assert p.header["pkt_type"] == wire.PacketType.RESULT
            c = p.header["chunk"]
            assert p.lanes == expected[c], f"chunk {c} to worker {port - 1}"
            got[port - 1][c] = p.lanes
    assert all(sorted(g) == list(range(CHUNKS)) for g in got)
    counts = job_counts(rig.sw, 2)
    assert counts["contributions"] == 3 * CHUNKS
    assert counts["completions"] == CHUNKS
    assert counts["duplicates"] == retransmissions > 0
