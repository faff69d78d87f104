"""Dense fp32: the uncompressed reference.

Sends per worker: the whole float32 tensor, 4*d bytes up, and receives the 4*d byte sum (one
aggregation hop: a parameter server or a float-capable aggregator; a ring allreduce would move
2(N-1)/N * 4d each way instead).  Summation is float32 in worker order, as an aggregator adding
packets in arrival order would do; hence a small rounding error against the float64 sum.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .common import CodecRun, check_tensors, exact_sum, timed

NAME = "dense_fp32"


def run(tensors: Sequence[object]) -> CodecRun:
    xs = check_tensors(tensors)
    d = xs[0].size
    send = np.empty_like(xs[0])
    _, enc = timed(lambda: np.copyto(send, xs[0]))          # encode = copy into the send buffer
    acc = xs[0].copy()
    for x in xs[1:]:
        acc += x                                             # float32, worker order
    grad = np.empty_like(acc)
    _, dec = timed(lambda: np.copyto(grad, acc))            # decode = copy the result out
    return CodecRun(NAME, grad.astype(np.float64), exact_sum(xs), 4 * d, 4 * d, enc, dec,
                    lossless_claim=False, notes={"summation": "float32, worker order"})
