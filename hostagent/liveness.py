"""Is the first aggregating switch alive?  An ARP request for its job address answers that.

Every DHC switch answers ARP for its own addresses in the data plane (``p4src/README.md``,
forwarding), so a live switch replies within a round trip and a dead one (process killed, link
down) never does.  Worker-to-worker liveness probes cannot tell a dead switch from dead peers:
they cross the switch.  Sending ARP needs a raw socket (CAP_NET_RAW, as agents in Mininet have);
without it the answer is "unknown" and the caller falls back to what the peers' silence says.
"""

from __future__ import annotations

from scapy.config import conf
from scapy.layers.l2 import ARP, Ether
from scapy.sendrecv import srp1


def switch_answers_arp(ip: str, timeout: float = 1.0) -> bool | None:
    """True if ``ip`` answers an ARP request within ``timeout`` s, False if not, None if this
    process cannot send ARP (no raw-socket permission or no route to ``ip``)."""
    try:
        iface, _src, _gw = conf.route.route(ip)
        if not iface or iface == conf.loopback_name:
            return None
        reply = srp1(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(op="who-has", pdst=ip), iface=iface,
                     timeout=timeout, verbose=0)
    except (PermissionError, OSError):
        return None
    return reply is not None and reply.haslayer(ARP) and reply[ARP].psrc == ip
