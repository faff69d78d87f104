"""Retransmission timeout from measured round trips (RFC 6298): the delivery engine's clock."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RttEstimator:
    """SRTT + 4 RTTVAR, clamped to [min_timeout, max_timeout]; ``initial`` until the first
    sample.  Feed it only samples of packets sent once (Karn's rule)."""

    initial: float
    min_timeout: float
    max_timeout: float
    srtt: float | None = None
    rttvar: float = 0.0

    @property
    def rto(self) -> float:
        if self.srtt is None:
            return self.initial
        return min(max(self.srtt + 4 * self.rttvar, self.min_timeout), self.max_timeout)

    def sample(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
