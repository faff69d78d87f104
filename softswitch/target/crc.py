"""Parametric CRCs for ``HashAlgorithm.crc16_custom`` / ``crc32_custom``, computed as BMv2 does.

BMv2 (``calculations.cpp``, ``crc_custom``) keeps one configuration per calculation (each
``hash``/checksum call site, named as ``ir/calcs.py`` names it): polynomial,
initial remainder, final xor, whether input bytes are reflected and whether the remainder is
reflected before the final xor (the "Rocksoft" CRC model of the CRC catalogues: the initial
value is the register of the unreflected algorithm).  The control plane changes it at run time
(BMv2 runtime CLI ``set_crc16_parameters <calc>`` / ``set_crc32_parameters <calc>``).  The defaults equal the
fixed ``crc16`` (CRC-16/ARC) and ``crc32`` algorithms.  The native runtime
(``native/rt_head.h``, ``crc_custom``) implements the same steps; tests compare both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CrcParams:
    """One custom CRC configuration (BMv2's ``crc_config_t``)."""

    width: int                 # 16 or 32
    polynomial: int
    initial_remainder: int
    final_xor_value: int
    data_reflected: bool
    remainder_reflected: bool

    def __post_init__(self) -> None:
        if self.width not in (16, 32):
            raise ValueError(f"custom CRC width must be 16 or 32, got {self.width}")
        top = 1 << self.width
        for name in ("polynomial", "initial_remainder", "final_xor_value"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < top:
                raise ValueError(f"crc{self.width} {name} {v!r} does not fit in {self.width} bits")


def parse_params(width: int, words: list[str]) -> CrcParams:
    """``POLY INIT XOR REFLECT_DATA REFLECT_REMAINDER`` (BMv2's ``set_crc16_parameters`` after
    the calculation name): integers in any Python base, flags ``true``/``false``/``1``/``0``."""
    what = f"crc{width} parameters"
    if len(words) != 5:
        raise ValueError(f"{what}: expected POLY INIT XOR REFLECT_DATA REFLECT_REMAINDER, got {words}")
    nums = []
    for name, w in zip(("polynomial", "initial remainder", "final xor value"), words[:3], strict=True):
        try:
            nums.append(int(w, 0))
        except ValueError:
            raise ValueError(f"{what}: {name} {w!r} is not an integer") from None
    flags = []
    for name, w in zip(("reflect data", "reflect remainder"), words[3:], strict=True):
        if w.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{what}: {name} {w!r} is not true/false")
        flags.append(w.lower() in ("true", "1"))
    return CrcParams(width, nums[0], nums[1], nums[2], flags[0], flags[1])


DEFAULTS = {
    16: CrcParams(16, 0x8005, 0x0000, 0x0000, True, True),              # = crc16 (CRC-16/ARC)
    32: CrcParams(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True),  # = crc32
}

_REFLECT8 = [int(f"{i:08b}"[::-1], 2) for i in range(256)]


def _reflect(v: int, nbits: int) -> int:
    return int(f"{v:0{nbits}b}"[::-1], 2)


class CustomCrc:
    """A custom CRC whose parameters the control plane may replace; callable on bytes."""

    def __init__(self, width: int):
        self.width = width
        self.configure(DEFAULTS[width])

    def configure(self, params: CrcParams) -> None:
        if params.width != self.width:
            raise ValueError(f"crc{self.width}_custom cannot take crc{params.width} parameters")
        w, poly, top = self.width, params.polynomial, 1 << (self.width - 1)
        mask = (1 << w) - 1
        table = []
        for dividend in range(256):
            r = dividend << (w - 8)
            for _ in range(8):
                r = ((r << 1) ^ poly) & mask if r & top else (r << 1) & mask
            table.append(r)
        self.params, self._table, self._mask = params, table, mask

    def __call__(self, data: bytes) -> int:
        p, tbl, mask, shift = self.params, self._table, self._mask, self.width - 8
        r = p.initial_remainder
        refl = _REFLECT8 if p.data_reflected else None
        for b in data:
            d = refl[b] if refl is not None else b
            r = tbl[d ^ (r >> shift)] ^ ((r << 8) & mask)
        if p.remainder_reflected:
            r = _reflect(r, self.width)
        return r ^ p.final_xor_value
