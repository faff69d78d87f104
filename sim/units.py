"""Rates and durations as users type them ("100gbit", "10mbit", "1.5us"): one parser each."""

from __future__ import annotations

import re

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmgt]?)(bit|bps|b)?\s*$", re.I)
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(ns|us|ms|s)?\s*$", re.I)
_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, None: 1.0}


class UnitError(ValueError):
    """A rate or duration that does not parse (reported to the user in one line)."""


def parse_rate_bps(text: str) -> float:
    """Bits per second from "100gbit", "10Mbit", "400g", "1e9" (bits)."""
    m = _RATE.match(str(text))
    if not m:
        raise UnitError(f"rate {text!r}: expected a number with an optional k/m/g/t prefix and "
                        f"'bit', e.g. 100gbit or 10mbit")
    value = float(m.group(1)) * _PREFIX[m.group(2).lower()]
    if value <= 0:
        raise UnitError(f"rate {text!r} must be positive")
    return value


def parse_seconds(text: str) -> float:
    """Seconds from "500ns", "1.5us", "2ms", "0.1" (seconds)."""
    m = _TIME.match(str(text))
    if not m:
        raise UnitError(f"duration {text!r}: expected a number with ns, us, ms or s, e.g. 1us")
    unit = m.group(2).lower() if m.group(2) else None
    return float(m.group(1)) * _SECONDS[unit]


def format_rate(bps: float) -> str:
    """The shortest exact label of a rate ("100gbit", "10mbit")."""
    for prefix, scale in (("t", 1e12), ("g", 1e9), ("m", 1e6), ("k", 1e3)):
        if bps >= scale and (bps / scale) == int(bps / scale):
            return f"{int(bps / scale)}{prefix}bit"
    return f"{bps:g}bit"
