"""HG-Sketch (this project, dhc/hgsketch.py), driven the way the switch would drive it.

Per worker, rounds A-D of DHC (SCALE + block index, element index, value sketch + check lanes,
and the dense STUCK coordinates only if peeling stalls); every lane is 4 bytes and the RESULT of
a round has as many lanes as the round, so bytes down equal bytes up.  Lossless: the decoded sum
is the exact integer sum of the quantized inputs, or DecodeError.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dhc import HGParams, HGSketchWorker
from dhc import quantize as qz
from dhc.protocol import aggregate_round
from dhcwire.lanes import LANE_BYTES

from .common import CodecRun, check_tensors

NAME = "hgsketch"


def run(tensors: Sequence[object], params: HGParams | None = None) -> CodecRun:
    xs = check_tensors(tensors)
    n = len(xs)
    params = params or HGParams()
    workers = [HGSketchWorker(x, n, params) for x in xs]
    segs = [w.first_round() for w in workers]
    lanes = 0
    levels: dict[str, int] = {}
    while True:
        for s in segs[0]:
            levels[s.level.name] = levels.get(s.level.name, 0) + LANE_BYTES * int(s.lanes.size)
            lanes += int(s.lanes.size)
        agg = aggregate_round(segs)
        segs = [w.feed(agg) for w in workers]
        if all(w.done for w in workers):
            break
    lead = workers[0]
    t = lead.scale_exponent
    total = np.ldexp(lead.result_int().astype(np.float64).reshape(-1), -t)
    qsum = np.zeros(xs[0].size, dtype=np.float64)
    for x in xs:
        nz = np.flatnonzero(x)
        qsum[nz] += np.ldexp(qz.quantize(x[nz], t, n).astype(np.float64), -t)
    st = lead.stats
    nbytes = LANE_BYTES * lanes
    return CodecRun(NAME, total, qsum, nbytes, nbytes, st.encode_seconds, st.decode_seconds,
                    lossless_claim=True,
                    notes={"bytes_by_level": levels, "union_nnz": st.union_nnz,
                           "buckets": st.sketch_buckets, "stuck": st.stuck_size,
                           "rounds": len(st.lanes_per_round)})
