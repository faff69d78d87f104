"""Fault injection on Mininet hosts: random loss with nftables (this kernel has no netem).

``inject_loss(host, percent)`` drops that share of the host's DHC datagrams in both
directions, with ``numgen random mod 100 < N``; ``clear_loss`` removes the table again.
Rules live in the host's own network namespace, so nothing leaks to the machine.
"""

from __future__ import annotations

import os
import tempfile

from dhcwire.header import DHC_UDP_PORT

TABLE = "dhc_faults"


class FaultInjectionError(RuntimeError):
    """nft refused a rule (the message says which host and what nft printed)."""


def _nft(host, script: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".nft", prefix="dhc-faults-", delete=False) as f:
        f.write(script + "\n")
    try:
        out = host.cmd(f"nft -f {f.name} 2>&1; echo rc=$?")
    finally:
        os.unlink(f.name)
    if "rc=0" not in out:
        raise FaultInjectionError(f"{host.name}: nft failed: {out.strip()}")


def inject_loss(host, percent: int, port: int = DHC_UDP_PORT) -> None:
    """Drop ``percent``% of the host's DHC datagrams (to or from a switch's ``port``), each way
    independently."""
    if not 0 <= percent <= 100:
        raise ValueError(f"loss percent must be 0..100, got {percent}")
    clear_loss(host)
    # out: DATA to a switch (dport = the switch's DHC port); in: RESULTs from a switch
    # (sport = the switch's DHC port, dport = the job's worker port)
    _nft(host, f"""table inet {TABLE} {{
  chain out {{
    type filter hook output priority 0; policy accept;
    udp dport {port} numgen random mod 100 < {percent} counter drop
  }}
  chain in {{
    type filter hook input priority 0; policy accept;
    udp sport {port} numgen random mod 100 < {percent} counter drop
  }}
}}""")


def clear_loss(host) -> None:
    host.cmd(f"nft delete table inet {TABLE} 2>/dev/null")


def dropped_packets(host) -> int:
    """Packets the loss rules dropped so far at ``host`` (both directions)."""
    out = host.cmd(f"nft list table inet {TABLE} 2>/dev/null")
    return sum(int(tok.split()[0]) for tok in out.split("counter packets ")[1:]
               if tok.split() and tok.split()[0].isdigit())
