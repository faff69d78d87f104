"""Two-rate three-colour markers (RFC 2698) exactly as BMv2's ``Meter`` (``bm_sim/meters.cpp``).

BMv2 semantics kept here, and in the native runtime (``native/rt_head.h``, ``ss_meter_exec``):
- an unconfigured meter marks every packet GREEN (0); colours are 0 GREEN, 1 YELLOW, 2 RED;
- configuring sets both buckets full (tokens = burst); rates are units per microsecond (the
  P4Runtime/PI conversion ``cir / 1e6``), units are packets or bytes (``MeterType``); a read
  converts back as PI does (``rate * 1e6`` truncated: ``read_config``);
- time is microseconds since the switch started; on each execution a bucket's tokens grow to
  ``min(tokens + floor(t * rate) - last, burst)`` where ``last`` is ``floor(t * rate)`` of its
  previous refill (everything against one time origin, as BMv2);
- the peak bucket is tested first: fewer tokens than the packet's size gives RED and stops; else
  its tokens are taken and the committed bucket is tested the same way (YELLOW), else GREEN.

The arithmetic is IEEE double then truncation to an unsigned 64-bit integer, as in C, so both
backends agree bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api import MeterConfig

MAX_RATE = 1 << 40    # units per second: floor(t * rate) stays below 2**64 for 180 days of uptime
MAX_BURST = 1 << 62
_U64_MAX = (1 << 64) - 1


def check_config(cfg: MeterConfig, what: str) -> None:
    """Refuse what BMv2 refuses (CIR above PIR) and values its integer state cannot hold."""
    for name in ("cir", "pir"):
        v = getattr(cfg, name)
        if not isinstance(v, int) or not 0 <= v <= MAX_RATE:
            raise ValueError(f"{what}: {name} {v!r} out of range 0..{MAX_RATE} units per second")
    for name in ("cburst", "pburst"):
        v = getattr(cfg, name)
        if not isinstance(v, int) or not 0 <= v <= MAX_BURST:
            raise ValueError(f"{what}: {name} {v!r} out of range 0..{MAX_BURST} units")
    if cfg.cir > cfg.pir:
        raise ValueError(f"{what}: committed rate {cfg.cir} exceeds peak rate {cfg.pir} "
                         "(BMv2: INVALID_INFO_RATE_VALUE)")


@dataclass
class MeterCell:
    """One meter; buckets in BMv2's evaluation order: [peak (RED), committed (YELLOW)]."""

    config: MeterConfig | None = None
    rate: list[float] = field(default_factory=lambda: [0.0, 0.0])   # units per microsecond
    burst: list[int] = field(default_factory=lambda: [0, 0])
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    last: list[int] = field(default_factory=lambda: [0, 0])

    def configure(self, cfg: MeterConfig | None) -> None:
        """Set rates and bursts (buckets full), or back to unconfigured (always GREEN)."""
        self.config = cfg
        if cfg is None:
            return
        self.rate = [cfg.pir / 1000000.0, cfg.cir / 1000000.0]
        self.burst = [cfg.pburst, cfg.cburst]
        self.tokens = [cfg.pburst, cfg.cburst]
        self.last = [0, 0]

    def read_config(self) -> MeterConfig | None:
        """The configuration as a read gives it back through PI from BMv2: BMv2 keeps the rates
        as doubles per microsecond and PI multiplies them by 1e6 and truncates, so a rate may
        read one less than written (3 -> 2.9999999999999996 -> 2)."""
        if self.config is None:
            return None
        peak, committed = (min(int(r * 1000000.0), _U64_MAX) for r in self.rate)
        return MeterConfig(committed, self.config.cburst, peak, self.config.pburst)

    def execute(self, amount: int, now_us: int) -> int:
        """The colour of a packet of ``amount`` units (1 packet, or its length in bytes)."""
        if self.config is None:
            return 0
        t = float(now_us) if now_us > 0 else 0.0
        for r in (0, 1):
            since = min(int(t * self.rate[r]), _U64_MAX)  # C: saturated, never undefined
            if since > self.last[r]:
                self.tokens[r] = min(self.tokens[r] + since - self.last[r], self.burst[r])
                self.last[r] = since
            if self.tokens[r] < amount:
                return 2 - r
            self.tokens[r] -= amount
        return 0

    def state(self) -> tuple[list[float], list[int]]:
        """Rates and integer state (burst, tokens, last per bucket) for the native runtime."""
        return list(self.rate), [*self.burst, *self.tokens, *self.last]

    def load(self, words: list[int]) -> None:
        """Integer state copied back from the native runtime (``state`` order)."""
        self.burst, self.tokens, self.last = list(words[0:2]), list(words[2:4]), list(words[4:6])
