"""Dense INA, SwitchML-style (NSDI'21): int32 fixed point summed in the switch.

SwitchML streams the tensor in packets of ``chunk`` elements (64 on Tofino).  A switch cannot
add floats, so each worker converts a chunk to int32 with a per-chunk power-of-two scale that
every worker shares: the workers agree on the chunk's max exponent (SwitchML piggybacks the
exponent for the next chunk on the current packet: one byte per packet) and pick the scale so the
sum of N values cannot overflow int32 (same bound as dhc.quantize: |q| <= 2**L, N*2**L < 2**31).

Sends per worker: 4*d bytes of int32 values + 1 exponent byte per chunk; receives the same.
Exact for the integers it sends; error against the float sum is each worker's rounding,
<= N * 0.5 / scale per element.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dhc import quantize as qz

from .common import CodecRun, check_tensors, timed

NAME = "switchml_int32"


def chunk_exponents(x: np.ndarray, chunk: int) -> np.ndarray:
    """Per-chunk frexp exponent of max |x| (so |x| < 2**e), EXP_MIN for all-zero chunks."""
    pad = (-x.size) % chunk
    a = np.abs(np.concatenate([x, np.zeros(pad, x.dtype)])).reshape(-1, chunk).max(axis=1)
    _, e = np.frexp(a.astype(np.float64))
    return np.where(a > 0, np.maximum(e, qz.EXP_MIN), qz.EXP_MIN).astype(np.int64)


def quantize_chunks(x: np.ndarray, scale_exp: np.ndarray, chunk: int) -> np.ndarray:
    """int64 q = rint(x * 2**t_chunk) for every element."""
    t = np.repeat(scale_exp, chunk)[: x.size]
    return np.rint(np.ldexp(x.astype(np.float64), t)).astype(np.int64)


def run(tensors: Sequence[object], chunk: int = 64) -> CodecRun:
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    xs = check_tensors(tensors)
    n, d = len(xs), xs[0].size
    n_chunks = -(-d // chunk)
    L = qz.precision_bits(n)
    local, enc0 = timed(lambda: chunk_exponents(xs[0], chunk))
    exps = np.max(np.stack([local] + [chunk_exponents(x, chunk) for x in xs[1:]]), axis=0)
    t = L - exps                                              # shared per-chunk scale exponents
    q0, enc1 = timed(lambda: quantize_chunks(xs[0], t, chunk))
    qs = [q0] + [quantize_chunks(x, t, chunk) for x in xs[1:]]
    bound = qz.INT32_MAX // n
    if max(int(np.abs(q).max()) for q in qs) > bound:
        raise OverflowError("per-chunk scale does not cover the values (bug)")
    total = np.sum(np.stack(qs), axis=0)                      # the switch's int32 adds
    tt = np.repeat(t, chunk)[:d]
    dec_sum, dec = timed(lambda: np.ldexp(total.astype(np.float64), -tt))
    qsum = np.sum(np.stack([np.ldexp(q.astype(np.float64), -tt) for q in qs]), axis=0)
    nbytes = 4 * d + n_chunks
    return CodecRun(NAME, dec_sum, qsum, nbytes, nbytes, enc0 + enc1, dec,
                    lossless_claim=True, notes={"chunk": chunk, "precision_bits": L})
