"""Models of the parts: what a switch and a host cost, as plain numbers the schedules use.

Switch: forwards and aggregates at line rate (no throughput limit of its own) after a pipeline
latency; a job's packets carry K lanes, and its window W of register slots in flight bounds it
to W packets per round trip (W x K x 4 B of lanes per RTT): :func:`window_rate`.

Host: a CPU cost per packet (each packet sent or received costs ``per_packet_s`` on one core,
so one direction of a host runs at most at frame / (2 x per_packet_s) while the other is busy
too) and the codec's own time, measured on this machine on the workload itself
(``sim/workload.py``).  Two profiles:

* ``this-machine``: 4.1 us of CPU per packet, the batched host I/O path of ``dhc-bench
  agent-pps`` (``docs/e2e.md``, dense K = 32 row, 81.6 k packets/s);
* ``emulator``: the Mininet emulation on this machine, where every worker and softswitch
  process shares its 2 cores: each packet costs ``stage_s`` of one core at the sender, at every
  switch it enters and at the receiver, all drawn from one pool of 2 cores.  Its 25 us was
  fitted on a 20 Mbit/s emulator run, so ``dhc-sim validate`` does not use it: the emulator
  rows run at 10 Mbit/s, links-bound, with ``this-machine`` (``docs/scale.md``);
* ``line-rate``: a DPDK-class worker as in SwitchML (Sapio et al., NSDI 2021), which reports
  workers driving 100 Gbit/s with 256-byte payloads; modelled as 12.5 ns per packet, i.e. 40 M
  packets/s each way.  An assumption taken from that paper, not measured here.
"""

from __future__ import annotations

from dataclasses import dataclass

from dhcwire.header import ip_packet_bytes

#: Ethernet header bytes in front of every IPv4 packet (what tbf and a link count; no FCS/IFG).
ETHERNET_BYTES = 14
#: The project's host ring (``bench/baselines/ring_transport.py``): 16-byte header, 1400-byte
#: datagrams, so 346 int32 values per packet.
RING_HEADER_BYTES = 16
RING_DATAGRAM_BYTES = 1400
RING_VALUES_PER_PACKET = (RING_DATAGRAM_BYTES - RING_HEADER_BYTES) // 4
IPV4_UDP_BYTES = 28


@dataclass(frozen=True)
class HostProfile:
    """What a worker's CPU costs per packet; the codec's time is measured per workload."""

    name: str
    per_packet_s: float
    codec_time: bool = True   # charge the measured codec time (False: network only)
    source: str = ""
    shared_cores: float = 0.0  # >0: every host and switch runs on one machine with these cores
    stage_s: float = 0.0       # CPU per packet per stage (send, each switch, receive) there

    def direction_rate(self, frame_bytes: int) -> float:
        """Bytes/s one direction of a host sustains while the other is as busy."""
        return frame_bytes / (2.0 * self.per_packet_s)


HOST_PROFILES: dict[str, HostProfile] = {
    "this-machine": HostProfile("this-machine", 4.1e-6, True,
                                "dhc-bench agent-pps, batched I/O, dense K=32: 4.1 us CPU/packet"),
    "line-rate": HostProfile("line-rate", 12.5e-9, True,
                             "SwitchML (NSDI 2021) DPDK workers at 100 Gbit/s: 12.5 ns/packet assumed"),
    # The Mininet emulator: every worker and softswitch process on this 2-core machine.  stage_s
    # was fitted on leafspine.yaml's dense INA run at 20 Mbit/s (CPU-bound there), so it is a
    # what-if profile, not evidence: the validation runs links-bound with this-machine instead.
    "emulator": HostProfile("emulator", 12.5e-9, True,
                            "Mininet on this 2-core machine (load 8-10): hosts and switches share 2 cores, "
                            "25 us per packet per stage, fitted on leafspine.yaml's dense INA", 2.0, 25e-6),
}


@dataclass(frozen=True)
class SwitchModel:
    """A programmable switch as the schedules see it."""

    lanes: int = 256                # K lanes per packet (the topology files' value)
    window: int | None = None       # W slots in flight per job; None: fill the bandwidth-delay product
    pipeline_s: float = 500e-9      # ingress-to-egress latency of one packet
    register_slots: int = 4096      # per switch; a job takes 2 W (two shadow sets)

    def frame_bytes(self) -> int:
        """Bytes on the link of one full DHC packet (Ethernet + IPv4 + UDP + dhc_h + K lanes)."""
        return ETHERNET_BYTES + ip_packet_bytes(self.lanes)

    def max_window(self, jobs_on_switch: int = 1) -> int:
        """The largest W the register pool allows when ``jobs_on_switch`` jobs share it."""
        return max(1, self.register_slots // (2 * max(1, jobs_on_switch)))


def ring_frame_bytes(values: int) -> int:
    """Bytes on the link of one ring packet carrying ``values`` 4-byte values."""
    return ETHERNET_BYTES + IPV4_UDP_BYTES + RING_HEADER_BYTES + 4 * values


def window_rate(window: int, frame_bytes: int, rtt_s: float) -> float:
    """Bytes/s a job can keep in flight: W packets per round trip."""
    return window * frame_bytes / rtt_s


def auto_window(rate_bps: float, frame_bytes: int, rtt_s: float, limit: int) -> int:
    """The smallest power-of-two W whose window rate reaches the link rate, capped at ``limit``."""
    need = rate_bps / 8.0 * rtt_s / frame_bytes
    w = 1
    while w < need and w < limit:
        w *= 2
    return min(w, limit)
