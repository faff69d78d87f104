"""STF scenarios on the slot state of the root switch of job 7 (W = 4, base 10, three workers).

* epochs: a session stops mid-slot (two of three contributions of chunk 5 in epoch 0); the
  controller installs epoch 1 beside 0; the first epoch-1 frame of the cell is its first writer,
  so the epoch-1 RESULT holds only epoch-1 data; a frame of an epoch with no entry is dropped as
  stale (12) before it touches a register.
* shadow sets: chunks 1, 5 and 9 all map to slot 1; 1 and 9 share set 0, 5 uses set 1.  Chunk 5
  leaves set 0's bitmap alone; chunk 9 is a later chunk than set 0's cell holds, so its first
  packet is the cell's first writer and its RESULT holds only chunk 9's data; a duplicate of
  chunk 9 gets the stored sum by unicast.
"""

from __future__ import annotations

from dhcwire import header as wire
from tests.p4src.stf.frames import HEADER, data, expect, result_to, send, setup

LEVEL = int(wire.Level.VALUE_SKETCH)


def _contribute(out: list[str], values: list[list[int]], *, chunk: int, epoch: int, ident: int) -> None:
    """The three workers send ``values`` for ``chunk``; the last one completes: RESULT to all."""
    slot = wire.slot_for_chunk(chunk, 4)
    for w in range(2):
        out.append(send(w + 1, data(w, values[w], level=LEVEL, chunk=chunk, slot=slot, epoch=epoch)))
    out.append("wait\n")
    out.append(send(3, data(2, values[2], ident=ident, level=LEVEL, chunk=chunk, slot=slot, epoch=epoch)))
    total = [sum(v[i] for v in values) & 0xFFFFFFFF for i in range(4)]
    for w in range(3):
        res = result_to(w, total, ident=ident, level=LEVEL, chunk=chunk, slot=slot, epoch=epoch)
        out.append(expect(w + 1, res))
    out.append("wait\n")


def epochs() -> str:
    slot = wire.slot_for_chunk(5, 4)
    out = [HEADER, "# Epochs: a session abandoned mid-slot, a new epoch that takes the cell over, stale\n"
           "# epochs dropped (12) (scenarios_state.py).\n", setup({LEVEL: 0})]
    out.append("# epoch 0: two of three contributions, then the session dies\n")
    for w in range(2):
        out.append(send(w + 1, data(w, [1000, 1000, 1000, 1000], level=LEVEL, chunk=5, slot=slot)))
    out.append("# epoch 1 before the controller installed it: stale\n")
    out.append(send(3, data(2, [7, 7, 7, 7], level=LEVEL, chunk=5, slot=slot, epoch=1)))
    out.append("wait\nadd epoch_table job_id:7 epoch:1 current_epoch()\n")
    _contribute(out, [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400]], chunk=5, epoch=1, ident=11)
    out.append("# epoch 2 has no entry: stale, and the stored epoch-1 slot is untouched\n")
    out.append(send(1, data(0, [5, 5, 5, 5], level=LEVEL, chunk=5, slot=slot, epoch=2)))
    out.append("wait\n# a duplicate in epoch 1 gets the epoch-1 sum back\n")
    dup = data(1, [9, 9, 9, 9], ident=12, level=LEVEL, chunk=5, slot=slot, epoch=1)
    out.append(send(2, dup))
    res = result_to(1, [111, 222, 333, 444], ident=12, level=LEVEL, chunk=5, slot=slot, epoch=1)
    out.append(expect(2, res))
    out.append("wait\n")
    out.append("#!softswitch register_read slot_session 13 0x701\n")   # (job 7, epoch 1)
    out.append("#!softswitch register_read slot_chunk 13 5\n")
    out.append("#!softswitch register_read slot_count 13 3\n")
    out.append("check_counter drop_counter(12) packets == 2\n")
    out.append("check_counter job_contributions(2) packets == 5\n")
    out.append("check_counter job_completions(2) packets == 1\n")
    out.append("check_counter job_duplicates(2) packets == 1\n")
    return "".join(out)


def shadow_sets() -> str:
    out = [HEADER, "# Shadow sets: chunks 1, 5 and 9 share slot 1; set 0 is reused by chunk 9 after every\n"
           "# worker moved on to chunk 5 (scenarios_state.py).\n", setup({LEVEL: 0})]
    _contribute(out, [[1, 1, 1, 1], [2, 2, 2, 2], [4, 4, 4, 4]], chunk=1, epoch=0, ident=21)
    out.append("#!softswitch register_read bitmap_set0 6 7\n")
    _contribute(out, [[10, 10, 10, 10], [20, 20, 20, 20], [40, 40, 40, 40]], chunk=5, epoch=0, ident=22)
    out.append("# chunk 5's packets filled set 1 and left set 0 alone\n")
    out.append("#!softswitch register_read bitmap_set0 6 7\n")
    out.append("#!softswitch register_read bitmap_set1 6 7\n")
    _contribute(out, [[100, 0, 0, 1], [200, 0, 0, 2], [400, 0, 0, 4]], chunk=9, epoch=0, ident=23)
    out.append("#!softswitch register_read bitmap_set1 6 7\n")
    slot = wire.slot_for_chunk(9, 4)
    out.append("# worker 0 lost chunk 9's RESULT: its duplicate gets the stored sum by unicast\n")
    out.append(send(1, data(0, [0, 0, 0, 0], ident=24, level=LEVEL, chunk=9, slot=slot)))
    out.append(expect(1, result_to(0, [700, 0, 0, 7], ident=24, level=LEVEL, chunk=9, slot=slot)))
    out.append("wait\n")
    out.append("check_counter job_completions(2) packets == 3\n")
    out.append("check_counter job_contributions(2) packets == 9\n")
    out.append("check_counter job_duplicates(2) packets == 1\n")
    out.append("check_counter job_results(2) packets == 4\n")
    return "".join(out)
