"""Closed forms the simulation must meet where links alone set the pace.

ring: 2(N-1) steps of S/N each, every step paced by its slowest neighbour route, so
      T = 2(N-1)/N * S/B + 2(N-1) * latency   (S: bytes a worker holds, wire framing included)
INA:  each round streams its bytes up the tree and the result back down, pipelined, so
      T = sum over rounds of (bytes/B + tree round-trip latency).
"""

from __future__ import annotations


def ring_seconds(n_workers: int, step_bytes: float, rate_Bps: float, hop_latency_s: float) -> float:
    """2(N-1)/N x S/B + 2(N-1) x latency, with S = N x step_bytes."""
    n = n_workers
    return 2 * (n - 1) / n * (n * step_bytes) / rate_Bps + 2 * (n - 1) * hop_latency_s


def ina_seconds(round_bytes: list[float], rate_Bps: float, tree_depth_s: float) -> float:
    """S/B + tree latency, per round."""
    return sum(b / rate_Bps + 2.0 * tree_depth_s for b in round_bytes)


def relative_error(simulated: float, expected: float) -> float:
    return abs(simulated - expected) / expected if expected else float("inf")
