"""The switch's random source for ``random()`` and ``HashAlgorithm.random``: xorshift64, one
state per switch, identical in the native runtime (``rt_head.h``, ``h_random``) so that a seeded
switch gives the same values on both backends.

BMv2 draws ``random(lo, hi)`` from ``std::default_random_engine`` seeded with a hash of the
thread id (``modify_field_rng_uniform`` in simple_switch), so its values differ between runs and
cannot be reproduced; this target seeds from the OS at start (values differ between runs too)
and ``Switch.seed_random(seed)`` makes a run repeatable, for tests.
"""

from __future__ import annotations

import secrets

_M64 = (1 << 64) - 1
_ZERO_SEED = 0x9E3779B97F4A7C15  # xorshift needs a nonzero state


def state_of(seed: int) -> int:
    s = seed & _M64
    return s if s else _ZERO_SEED


class XorShift64:
    def __init__(self, seed: int | None = None):
        self.seed(secrets.randbits(64) if seed is None else seed)

    def seed(self, seed: int) -> None:
        self.state = state_of(seed)

    def next(self) -> int:
        x = self.state
        x ^= (x << 13) & _M64
        x ^= x >> 7
        x ^= (x << 17) & _M64
        self.state = x
        return x

    def randint(self, lo: int, hi: int) -> int:
        """``lo + next() % (hi - lo + 1)`` with the bounds swapped when ``lo > hi`` (as the C code)."""
        if lo > hi:
            lo, hi = hi, lo
        return lo + self.next() % (hi - lo + 1)

    def hash(self, data: bytes) -> int:  # noqa: ARG002 - a hash algorithm's signature
        return self.next()
