"""HG-Sketch worker: the per-worker state machine of the lossless sparse codec.

Rounds (segment lengths depend only on params, d and earlier aggregates):

A  SCALE[2 + EXP_LANES] (OR: fingerprint + one-hot max exponent), BLOCK_INDEX[ceil(nb/32)] (OR)
B  ELEMENT_INDEX[active_blocks * block/32] (OR)
C  VALUE_SKETCH[m] (SUM: r partitioned rows, m sized from the exact union k of round B),
   VALUE_SKETCH[8] (SUM: check lanes sum q, sum i*q and six sums w_j(i)*q, all mod 2**32)
D  STUCK[|S|] (SUM: quantized values at the candidates peeling could not recover) - only if
   peeling stalls; every worker computes the same S from the same aggregates.

With ``fuse_rounds`` round A also carries each worker's nonzero count (one SUM lane) and B and
C go out as one round.  The hot loops run as numba kernels (``dhc/native.py``) or, with
``backend="numpy"``, as the numpy reference; the lanes and results are identical.

The sketch is sized from the aggregated element index, which is why the element index gets its
own round (sending it with the sketch would force m from a bound known earlier; that is the
optional fused mode, ``HGParams(fuse_rounds=True)``, which sizes m from the summed nonzero counts).
Decoding ends with a consistency check: the residual sketch must be zero and the check lanes
must match the decoded sums; otherwise DecodeError.  Bucket sums may wrap mod 2**32: the
sketch is linear mod 2**32, so a pure bucket still yields the exact element sum, which fits int32
by the scale's overflow bound.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from dhcwire.lanes import Level

from . import backend as backends
from . import parallel
from . import quantize as qz
from .errors import DecodeError, InputError
from .hashing import HASHED_CHECKS, SketchHash
from .index import LocalIndex, candidates
from .peeling import PeelResult, peel_rows, residual_is_zero, subtract_known
from .protocol import Segment
from .rounds import Handler, RoundWorker, ScaleRound

#: check lanes: sum q, sum i*q, then the HASHED_CHECKS hashed-weight sums
CHECK_LANES = 2 + HASHED_CHECKS


@dataclass(frozen=True)
class HGParams:
    """Codec parameters; every worker of a job must use the same (checked in round A)."""

    block_size: int = 32           # elements per level-0 bit; power of two, 32..65536 (see docs)
    rows: int = 3                  # partitioned hash rows of the value sketch
    m_factor: float = 1.25         # buckets per union element (peeling threshold ~1.222 for r=3)
    m_extra: int = 24              # additive slack for small k
    seed: int = 0x5EED             # hash seed
    buckets: int | None = None     # force m (tests: below the peeling threshold; benchmarks)
    fuse_rounds: bool = False      # element index and sketch in one round (m from sum of nnz)

    def __post_init__(self) -> None:
        b = self.block_size
        if not isinstance(b, int) or b < 32 or b > 65536 or b & (b - 1):
            raise InputError(f"block_size must be a power of two in 32..65536, got {b!r}")
        if not isinstance(self.rows, int) or not 2 <= self.rows <= 8:
            raise InputError(f"rows must be an int in 2..8, got {self.rows!r}")
        if not self.m_factor > 0:
            raise InputError(f"m_factor must be > 0, got {self.m_factor!r}")
        if not isinstance(self.m_extra, int) or self.m_extra < 0:
            raise InputError(f"m_extra must be an int >= 0, got {self.m_extra!r}")
        if self.buckets is not None and (not isinstance(self.buckets, int) or self.buckets < 1):
            raise InputError(f"buckets must be a positive int or None, got {self.buckets!r}")
        if not isinstance(self.fuse_rounds, bool):
            raise InputError(f"fuse_rounds must be a bool, got {self.fuse_rounds!r}")

    def sketch_buckets(self, k: int) -> int:
        """m for a union of k elements, rounded up to a multiple of rows."""
        want = self.buckets if self.buckets is not None else self.m_factor * k + self.m_extra
        return self.rows * max(1, -(-int(np.ceil(want)) // self.rows))


@dataclass
class WorkerStats:
    """What one worker observed: sizes, peeling effort, time spent encoding and decoding."""

    union_nnz: int = 0
    active_blocks: int = 0
    sketch_buckets: int = 0
    peeling_iterations: int = 0
    stuck_size: int = 0
    encode_seconds: float = 0.0
    decode_seconds: float = 0.0
    lanes_per_round: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def check_lanes(idx: np.ndarray, q: np.ndarray, hasher: SketchHash,
                keys: np.ndarray) -> np.ndarray:
    """[sum q, sum idx*q, sum w_j(idx)*q for each hashed weight j] mod 2**32 (uint64
    wraparound, exact)."""
    qu = q.astype(np.int64, copy=False).view(np.uint64)
    with np.errstate(over="ignore"):
        c = [qu.sum(dtype=np.uint64), (idx.astype(np.uint64) * qu).sum(dtype=np.uint64)]
    c += list(hasher.check_sums(keys, q))
    return np.array([int(v) & 0xFFFFFFFF for v in c], dtype=np.uint32)


def _bucket_sums(buckets: np.ndarray, negative: np.ndarray, q: np.ndarray, m: int) -> np.ndarray:
    """The sketch lanes: per-bucket sums of sign * q mod 2**32 (uint32), for row-major
    ``buckets``/``negative`` (rows x n) and int64 ``q`` (n).  uint32 arithmetic wraps exactly
    like the switch, so the sums are exact mod 2**32 for any n (no float rounding limit)."""
    signed = negative * np.int32(-2)
    signed += np.int32(1)
    signed *= q.astype(np.int32)                  # |q| < 2**31: exact; the product wraps mod 2**32
    lanes = np.zeros(m, dtype=np.uint32)
    np.add.at(lanes, buckets.reshape(-1), signed.reshape(-1).view(np.uint32))
    return lanes


@dataclass
class RoundState:
    """What one HG-Sketch allreduce carries from round to round, filled in as the rounds go
    (the round that sets a field in brackets) and dropped when the worker is done: a finished
    worker keeps only the support and its sums."""

    index: LocalIndex                    # this worker's support and bitmaps (A)
    values: np.ndarray                   # x at index.nz (A)
    scale: ScaleRound                    # fingerprint and max exponent (A)
    q: np.ndarray | None = None          # quantized values at index.nz (after A)
    active_ids: np.ndarray | None = None  # blocks active in the aggregated level 0 (after A)
    blocks_mine: bool = False            # every aggregated block is one of ours (after A)
    hash: SketchHash | None = None       # the sketch's hashes (B; fused rounds: A)
    cand: np.ndarray | None = None       # the union of the supports, sorted (after B)
    keys: np.ndarray | None = None       # the union's mixed keys (after B)
    rows: tuple[np.ndarray, np.ndarray] | None = None  # numpy: buckets, negative (after B)
    codes: np.ndarray | None = None      # compiled: bucket << 1 | negative, k x rows (after B)
    peel: PeelResult | None = None       # the peeled sketch (after C)
    agg_checks: np.ndarray | None = None  # the aggregated check lanes (after C)
    stuck: np.ndarray | None = None      # positions in cand peeling left (after C, for D)


def _write_dense(dest: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
    """``dest[:] = 0; dest[idx] = values`` (idx sorted), in two halves on two cores when large:
    the zero-fill is the one full pass of the decoder."""
    h = parallel.split_point(dest.size, 16)
    if h is None:
        dest.fill(0)
        dest[idx] = values
        return
    c = int(np.searchsorted(idx, h))

    def half(lo: int, hi: int, a: int, b: int) -> None:
        dest[lo:hi].fill(0)
        dest[idx[a:b]] = values[a:b]

    parallel.both(lambda: half(0, h, 0, c), lambda: half(h, dest.size, c, idx.size))


class HGSketchWorker(RoundWorker):
    """One worker's side of an HG-Sketch allreduce (see module docstring for the rounds)."""

    codec = "hg"

    def __init__(self, x: object, n_workers: int, params: HGParams | None = None, *,
                 backend: str | None = None, **overrides: object) -> None:
        if params is None:
            unknown = set(overrides) - set(HGParams.__dataclass_fields__)
            if unknown:
                raise InputError(f"unknown HG-Sketch parameter(s) {sorted(unknown)}; "
                                 f"valid: {sorted(HGParams.__dataclass_fields__)}")
            params = HGParams(**overrides)  # type: ignore[arg-type]
        elif overrides:
            raise InputError(f"pass either params or keyword overrides, not both: {sorted(overrides)}")
        self.params = params
        #: "numba" (compiled kernels) or "numpy" (the reference); results are identical
        self.backend = backends.resolve(backend)
        self._native = backends.native if self.backend == "numba" else None
        super().__init__(x, n_workers)
        self.stats = WorkerStats()
        #: per-round state while the rounds run (None before round A and once done)
        self.round_state: RoundState | None = None
        #: the result once done: sorted support and exact int64 sums there
        self._cand = np.zeros(0, np.int64)
        self._values = np.zeros(0, np.int64)
        self._sum_int: np.ndarray | None = None
        self._sum_f32: np.ndarray | None = None

    def fingerprint(self) -> int:
        p = self.params
        parts = (p.block_size, p.rows, p.m_factor, p.m_extra, p.seed, p.buckets) + (
            ("fused",) if p.fuse_rounds else ())
        return qz.fingerprint(self.codec, self.d, str(self._x.dtype), self.n_workers, *parts)

    # -- rounds ------------------------------------------------------------------------------
    def _handlers(self) -> Mapping[str, Handler]:
        return {"A": self._after_a, "B": self._after_b, "C": self._after_c,
                "BC": self._after_bc, "D": self._after_d}

    def _start(self) -> list[Segment]:
        t0 = time.perf_counter()
        nat = self._native
        index = LocalIndex(self._x, self.params.block_size, nat.scan if nat is not None else None)
        exponent = (nat.max_exponent if nat is not None else qz.finite_max_exponent)(
            index.values)
        st = self.round_state = RoundState(index, index.values,
                                           ScaleRound(self.fingerprint(), exponent,
                                                      self.n_workers))
        segs = [st.scale.segment(), Segment(Level.BLOCK_INDEX, index.block_lanes())]
        if self.params.fuse_rounds:
            # SUM of the workers' nonzero counts: an upper bound of the union that sizes the
            # sketch of the fused round (capped so that N counts cannot wrap; a bound too
            # small only stalls the peeling, and the stuck round stays exact)
            cap = ((1 << 32) - 1) // self.n_workers
            segs.append(Segment(Level.VALUE_SKETCH,
                                np.array([min(index.nz.size, cap)], np.uint32)))
        self.stats.encode_seconds += time.perf_counter() - t0
        return self._emit("A", segs)

    def _emit(self, phase: str, segs: list[Segment]) -> list[Segment]:
        if segs:
            self.stats.lanes_per_round.append(sum(s.lanes.size for s in segs))
        return super()._emit(phase, segs)

    def _finish(self, cand: np.ndarray, values: np.ndarray) -> list[Segment]:
        self._cand, self._values = cand, values
        self.round_state = None        # bitmaps, hashes, peeling arrays: no longer needed
        return self._emit("done", [])

    def _after_a(self, agg: list[np.ndarray]) -> list[Segment]:
        t0 = time.perf_counter()
        st = self._state()
        self._scale_exp = st.scale.scale_exponent(agg[0])
        ix = st.index
        nat = self._native
        st.active_ids = nat.active_blocks(ix, agg[1]) if nat is not None else ix.active_blocks(
            agg[1])
        # every aggregated block is one of ours: the union may be exactly our support
        st.blocks_mine = bool(np.array_equal(agg[1], ix.block_lanes()))
        self.stats.active_blocks = int(st.active_ids.size)
        t1 = time.perf_counter()
        self.stats.decode_seconds += t1 - t0
        if st.active_ids.size == 0:
            return self._finish(np.zeros(0, np.int64), np.zeros(0, np.int64))
        st.q = (nat.quantize if nat is not None else qz.quantize)(st.values, self._scale_exp,
                                                                   self.n_workers)
        segs = [Segment(Level.ELEMENT_INDEX, ix.element_lanes(st.active_ids))]
        if self.params.fuse_rounds:
            bound = min(int(agg[2][0]), st.active_ids.size * ix.block, self.d)
            segs += self._own_sketch(self.params.sketch_buckets(bound))
            self.stats.encode_seconds += time.perf_counter() - t1
            return self._emit("BC", segs)
        self.stats.encode_seconds += time.perf_counter() - t1
        return self._emit("B", segs)

    def _state(self) -> RoundState:
        assert self.round_state is not None, "no round in progress"
        return self.round_state

    def _new_hash(self, m: int) -> SketchHash:
        p = self.params
        self.stats.sketch_buckets = m
        self._state().hash = SketchHash(p.seed, p.rows, m // p.rows, HASHED_CHECKS)
        return self._state().hash

    def _own_sketch(self, m: int) -> list[Segment]:
        """Fused rounds: the sketch and check lanes of this worker's own elements (hashed on
        their own: the union is not known yet)."""
        st, nat = self._state(), self._native
        h, nz = self._new_hash(m), st.index.nz
        if nat is not None:
            codes, keys = nat.hash_union(h, nz)
            sketch = nat.sketch(codes, None, st.q, m)
            checks = nat.check_lanes(nz, st.q, h, keys, None)
        else:
            keys = h.keys(nz)
            buckets, negative = h.rows_of(keys)
            sketch = _bucket_sums(buckets, negative, st.q, m)
            checks = check_lanes(nz, st.q, h, keys)
        return [Segment(Level.VALUE_SKETCH, sketch), Segment(Level.VALUE_SKETCH, checks)]

    def _hash_union(self, cand: np.ndarray) -> None:
        """The union's keys and rows (numpy) or codes (compiled), hashed once: the decoder
        peels them, the encoder reads its own columns."""
        st = self._state()
        assert st.hash is not None
        if self._native is not None:
            st.codes, st.keys = self._native.hash_union(st.hash, cand)
        else:
            st.keys = st.hash.keys(cand)
            st.rows = st.hash.rows_of(st.keys)

    def _after_bc(self, agg: list[np.ndarray]) -> list[Segment]:
        """Fused rounds: the union from the element index, then decoding as after round C."""
        t0 = time.perf_counter()
        cand, _ = self._union(agg[0])
        self._hash_union(cand)
        self.stats.decode_seconds += time.perf_counter() - t0
        return self._after_c(agg[1:])

    def _union(self, agg: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(sorted union of the supports, our elements' positions in it or None when the
        union is our support) from the aggregated element index."""
        st, nat = self._state(), self._native
        ix = st.index
        assert st.active_ids is not None
        mine = self._sent[0].lanes
        if nat is not None:
            nat.check_elements_covered(ix, mine, agg)
        else:
            ix.check_elements_covered(mine, agg)
        if st.blocks_mine and np.array_equal(mine, agg):
            cand, own = ix.nz, None
        elif nat is not None:
            cand, own = nat.candidates(st.active_ids, agg, ix.block, self.d, mine,
                                       ix.nz.size)
        else:
            cand = candidates(st.active_ids, agg, ix.block, self.d)
            own = np.searchsorted(cand, ix.nz)
        st.cand = cand
        self.stats.union_nnz = int(cand.size)
        return cand, own

    def _after_b(self, agg: list[np.ndarray]) -> list[Segment]:
        t0 = time.perf_counter()
        st, nat = self._state(), self._native
        cand, own = self._union(agg[0])
        m = self.params.sketch_buckets(cand.size)
        h = self._new_hash(m)
        self._hash_union(cand)
        t1 = time.perf_counter()
        self.stats.decode_seconds += t1 - t0
        nz, q = st.index.nz, st.q
        if nat is not None:
            sketch = nat.sketch(st.codes, own, q, m)
            checks = nat.check_lanes(nz, q, h, st.keys, own)
        else:
            assert st.rows is not None and st.keys is not None
            buckets, negative = st.rows
            keys = st.keys
            if own is not None:
                buckets, negative, keys = buckets[:, own], negative[:, own], keys[own]
            sketch = _bucket_sums(buckets, negative, q, m)
            checks = check_lanes(nz, q, h, keys)
        segs = [Segment(Level.VALUE_SKETCH, sketch), Segment(Level.VALUE_SKETCH, checks)]
        self.stats.encode_seconds += time.perf_counter() - t1
        return self._emit("C", segs)

    def _candidate_columns(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(buckets, +-1 signs) of the candidates at ``pos``, k x rows (for round D)."""
        st = self._state()
        if self._native is not None:
            return self._native.columns(st.codes, pos)
        assert st.rows is not None
        buckets, negative = st.rows
        return buckets[:, pos].T, 1 - 2 * negative[:, pos].T.astype(np.int64)

    def _after_c(self, agg: list[np.ndarray]) -> list[Segment]:
        t0 = time.perf_counter()
        st = self._state()
        assert st.hash is not None and st.cand is not None
        if self._native is not None:
            res = self._native.peel(st.codes, agg[0], st.hash.row_len)
        else:
            assert st.rows is not None
            buckets, negative = st.rows
            res = peel_rows(buckets, negative, agg[0])
        st.peel, st.agg_checks = res, agg[1]
        self.stats.peeling_iterations = res.iterations
        stuck = res.stuck
        self.stats.stuck_size = int(stuck.size)
        if stuck.size == 0:
            self._verify(res)
            self.stats.decode_seconds += time.perf_counter() - t0
            return self._finish(st.cand, res.values)
        t1 = time.perf_counter()
        self.stats.decode_seconds += t1 - t0
        st.stuck = stuck
        lanes = qz.to_lanes(self._local_q_at(st.cand[stuck]))
        segs = [Segment(Level.STUCK, lanes)]
        self.stats.encode_seconds += time.perf_counter() - t1
        return self._emit("D", segs)

    def _after_d(self, agg: list[np.ndarray]) -> list[Segment]:
        t0 = time.perf_counter()
        st = self._state()
        res, s = st.peel, st.stuck
        assert res is not None and s is not None and st.cand is not None
        res.values[s] = qz.from_lanes(agg[0])
        res.recovered[s] = True
        buckets, signs = self._candidate_columns(s)
        subtract_known(res.residual, buckets, signs, res.values[s])
        self._verify(res)
        self.stats.decode_seconds += time.perf_counter() - t0
        return self._finish(st.cand, res.values)

    def _local_q_at(self, idx: np.ndarray) -> np.ndarray:
        """This worker's quantized values at sorted global indices idx (0 where it has none)."""
        st = self._state()
        nz, q = st.index.nz, st.q
        assert q is not None
        pos = np.searchsorted(nz, idx)
        pos_c = np.minimum(pos, max(nz.size - 1, 0))
        hit = (pos < nz.size) & (nz[pos_c] == idx) if nz.size else np.zeros(idx.size, bool)
        out = np.zeros(idx.size, dtype=np.int64)
        out[hit] = q[pos_c[hit]]
        return out

    def _verify(self, res: PeelResult) -> None:
        """Consistency check: residual sketch zero and check lanes equal the decoded sums."""
        st = self._state()
        assert st.hash is not None and st.agg_checks is not None and st.cand is not None
        if self._native is not None:
            bad, big = self._native.decode_checks(res.residual, res.values)
        else:
            bad = 0 if residual_is_zero(res.residual) else int(
                np.count_nonzero(res.residual & 0xFFFFFFFF))
            big = int(np.max(np.abs(res.values))) if res.values.size else 0
        if bad:
            raise DecodeError(f"VALUE_SKETCH inconsistent after decoding: {bad} buckets non-zero "
                              "(a lane was changed in flight or a worker deviated)")
        bound = self.n_workers << qz.precision_bits(self.n_workers)
        if big > bound:
            raise DecodeError(f"decoded sum exceeds N * 2**L = {bound}: corrupted aggregate")
        if self._native is not None:
            expect = self._native.check_lanes(st.cand, res.values, st.hash, st.keys, None)
        else:
            expect = check_lanes(st.cand, res.values, st.hash, st.keys)
        if not np.array_equal(expect, st.agg_checks):
            raise DecodeError("VALUE_SKETCH check lanes do not match the decoded sums "
                              f"(expected {expect.tolist()}, got {st.agg_checks.tolist()})")

    # -- results -----------------------------------------------------------------------------
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted indices of the aggregated support, exact int64 sums there)."""
        self._require_done()
        return self._cand, self._values

    def result_int(self) -> np.ndarray:
        """Exact integer sum of all workers' quantized inputs (int64, input shape)."""
        self._require_done()
        if self._sum_int is None:
            out = np.zeros(self.d, dtype=np.int64)
            out[self._cand] = self._values
            self._sum_int = out.reshape(self.shape)
        return self._sum_int

    def result(self, out: np.ndarray | None = None) -> np.ndarray:
        """float32 sum: result_int() / scale, in the input shape.  ``out`` (float32, d elements,
        contiguous) is overwritten and returned, e.g. the gradient buffer itself."""
        self._require_done()
        if out is None and self._sum_f32 is not None:
            return self._sum_f32
        t0 = time.perf_counter()
        if out is None:
            dest = np.empty(self.d, dtype=np.float32)
        else:
            if out.dtype != np.float32 or out.size != self.d or not out.flags.c_contiguous:
                raise InputError(f"out must be a contiguous float32 array of {self.d} elements")
            dest = out.reshape(-1)
        if self._native is not None:
            self._native.write_dense(dest, self._cand, self._values, self._scale_exp)
        else:
            _write_dense(dest, self._cand, qz.dequantize(self._values, self._scale_exp))
        self.stats.decode_seconds += time.perf_counter() - t0
        if out is not None:
            return out
        self._sum_f32 = dest.reshape(self.shape)
        return self._sum_f32
