"""STF scenario on chunk tags (p4src/README.md, "Epochs and chunk tags"): the root switch of job 7
(W = 4, base 10, three workers) in one epoch.

* a later chunk takes a cell over: worker 1's chunk 5 arrives again after its chunk 9 (a delayed
  duplicate; the cell still holds chunk 5, so it is not stale: it is chunk 5's duplicate and gets
  chunk 5's sum by unicast, and nothing of it is added anywhere), and chunk 13, the next chunk of
  that cell, is its first writer: its RESULT holds only chunk 13's data.
* an older chunk: chunks 1, 5 and 9 complete (9 reuses chunk 1's cell, slot 1 set 0, and takes it
  over as a newer chunk); then worker 0's DATA of chunk 1 arrives again (a replay, a delayed
  duplicate).  It is dropped as stale_chunk (15) and touches nothing: a duplicate of chunk 9
  still gets chunk 9's sum, and the cell's tag still names chunk 9.
* wrap-around: chunk numbers are compared as 32-bit serial numbers.  Chunk 0xfffffffa (slot 2,
  set 0) completes, then 0xfffffffe (set 1), then chunk 2, which is 8 later modulo 2^32 and
  shares 0xfffffffa's cell: it takes the cell over and its RESULT holds only its own data; a
  replay of 0xfffffffa is then stale.
"""

from __future__ import annotations

from dhcwire import header as wire
from tests.p4src.stf.frames import HEADER, data, expect, result_to, send, setup

LEVEL = int(wire.Level.VALUE_SKETCH)


def _complete(out: list[str], values: list[list[int]], chunk: int, ident: int) -> None:
    """The three workers send ``values`` for ``chunk``; the last one completes: RESULT to all."""
    slot = wire.slot_for_chunk(chunk, 4)
    for w in range(2):
        out.append(send(w + 1, data(w, values[w], level=LEVEL, chunk=chunk, slot=slot)))
    out.append("wait\n")
    out.append(send(3, data(2, values[2], ident=ident, level=LEVEL, chunk=chunk, slot=slot)))
    total = [sum(v[i] for v in values) & 0xFFFFFFFF for i in range(4)]
    for w in range(3):
        out.append(expect(w + 1, result_to(w, total, ident=ident, level=LEVEL, chunk=chunk, slot=slot)))
    out.append("wait\n")


def _replay(out: list[str], w: int, values: list[int], chunk: int) -> None:
    out.append(send(w + 1, data(w, values, ident=99, level=LEVEL, chunk=chunk,
                                slot=wire.slot_for_chunk(chunk, 4))))
    out.append("wait\n")


def stale_chunks() -> str:
    out = [HEADER, "# Chunk tags: an older chunk of the current epoch is dropped as stale_chunk (15)\n"
           "# without touching a register; chunk numbers wrap as serial numbers (scenarios_replay.py).\n",
           setup({LEVEL: 0})]
    _complete(out, [[1, 1, 1, 1], [2, 2, 2, 2], [4, 4, 4, 4]], chunk=1, ident=31)
    _complete(out, [[10, 0, 0, 0], [20, 0, 0, 0], [40, 0, 0, 0]], chunk=5, ident=32)
    _complete(out, [[100, 0, 0, 1], [200, 0, 0, 2], [400, 0, 0, 4]], chunk=9, ident=33)
    out.append("# worker 0's chunk 1 again (its cell holds chunk 9): stale, dropped, no register touched\n")
    _replay(out, 0, [1, 1, 1, 1], chunk=1)
    out.append("# a duplicate of chunk 9 still gets chunk 9's sum\n")
    slot9 = wire.slot_for_chunk(9, 4)
    out.append(send(1, data(0, [0, 0, 0, 0], ident=35, level=LEVEL, chunk=9, slot=slot9)))
    out.append(expect(1, result_to(0, [700, 0, 0, 7], ident=35, level=LEVEL, chunk=9, slot=slot9)))
    out.append("wait\n")
    out.append("#!softswitch register_read slot_chunk 12 9\n")
    out.append("#!softswitch register_read slot_count 12 3\n")
    out.append("# worker 1's chunk 5 again, after its chunk 9: its cell (slot 1, set 1) still holds chunk 5\n"
               "# and worker 1's bit there, so it is a duplicate: chunk 5's sum back by unicast ...\n")
    slot5 = wire.slot_for_chunk(5, 4)
    out.append(send(2, data(1, [20, 0, 0, 0], ident=37, level=LEVEL, chunk=5, slot=slot5)))
    out.append(expect(2, result_to(1, [70, 0, 0, 0], ident=37, level=LEVEL, chunk=5, slot=slot5)))
    out.append("wait\n")
    out.append("# ... and chunk 13, a later chunk of that cell, takes it over: its RESULT holds only\n"
               "# its own data\n")
    _complete(out, [[3, 0, 0, 0], [5, 0, 0, 0], [7, 0, 0, 0]], chunk=13, ident=36)
    out.append("# wrap-around: 0xfffffffa, 0xfffffffe, then 2 (= 0xfffffffa + 8 mod 2^32) in the same cell\n")
    _complete(out, [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7]], chunk=0xFFFFFFFA, ident=41)
    _complete(out, [[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], chunk=0xFFFFFFFE, ident=42)
    _complete(out, [[1000, 0, 0, 0], [2000, 0, 0, 0], [3000, 0, 0, 0]], chunk=2, ident=43)
    out.append("# chunk 0xfffffffa again, from worker 2: 8 older than the cell's chunk 2: stale\n")
    _replay(out, 2, [7, 7, 7, 7], chunk=0xFFFFFFFA)
    out.append("#!softswitch register_read slot_chunk 14 2\n")
    out.append("#!softswitch register_read lane_0 14 6000\n")
    out.append("check_counter drop_counter(15) packets == 2\n")
    out.append("check_counter job_contributions(2) packets == 21\n")
    out.append("check_counter job_completions(2) packets == 7\n")
    out.append("check_counter job_duplicates(2) packets == 2\n")
    return "".join(out)
