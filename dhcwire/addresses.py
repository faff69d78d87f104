"""IPv4 and MAC addresses as text and as the integers P4 match fields and parameters carry."""

from __future__ import annotations

import ipaddress


def ip2int(addr: str) -> int:
    """``"10.0.0.1"`` -> 0x0A000001; raises ValueError for anything but a dotted IPv4 address."""
    return int(ipaddress.IPv4Address(addr))


def int2ip(value: int) -> str:
    return str(ipaddress.IPv4Address(value))


def mac2int(mac: str) -> int:
    """``"00:00:00:00:00:01"`` -> 1."""
    return int(mac.replace(":", ""), 16)


def int2mac(value: int) -> str:
    raw = f"{value:012x}"
    return ":".join(raw[i:i + 2] for i in range(0, 12, 2))
