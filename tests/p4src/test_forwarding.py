"""Plain ARP and IPv4 so hosts can ping through the topology, and DHC transit traffic."""

from __future__ import annotations

from scapy.layers.inet import ICMP, IP
from scapy.layers.l2 import ARP, Ether

from dhcwire import header as wire
from dhcwire.p4names import DROP_ARP, DROP_NO_ROUTE, DROP_TTL
from tests.p4src.dhcnet import arp_request, dhc_frame, drops, parse_dhc
from tests.p4src.test_aggregation import SWITCH, WORKERS, make_rig


def ping(src: int, dst_ip: str, ttl: int = 64) -> bytes:
    w = WORKERS[src]
    return bytes(Ether(src=w.mac, dst=SWITCH.mac) / IP(src=w.ip, dst=dst_ip, ttl=ttl, id=7)
                 / ICMP(type=8, id=1, seq=1) / b"abcdefgh")


def test_arp_request_for_switch_address_is_answered() -> None:
    rig = make_rig()
    out = rig.sw.process(2, arp_request(WORKERS[1], SWITCH.ip))
    assert [p for p, _ in out] == [2]
    reply = Ether(out[0][1])
    assert (reply.dst, reply.src) == (WORKERS[1].mac, SWITCH.mac)
    arp = reply[ARP]
    assert (arp.op, arp.hwsrc, arp.psrc) == (2, SWITCH.mac, SWITCH.ip)
    assert (arp.hwdst, arp.pdst) == (WORKERS[1].mac, WORKERS[1].ip)


def test_arp_for_unknown_address_and_arp_replies_are_dropped() -> None:
    rig = make_rig()
    assert rig.sw.process(1, arp_request(WORKERS[0], "10.9.9.9")) == []
    reply = bytes(
        Ether(src=WORKERS[0].mac, dst=SWITCH.mac)
        / ARP(op=2, hwsrc=WORKERS[0].mac, psrc=WORKERS[0].ip, hwdst=SWITCH.mac, pdst=SWITCH.ip)
    )
    assert rig.sw.process(1, reply) == []
    assert drops(rig.sw) == {DROP_ARP: 2}


def test_ipv4_is_routed_with_new_macs_ttl_and_checksum() -> None:
    rig = make_rig()
    out = rig.sw.process(1, ping(0, WORKERS[2].ip, ttl=9))
    assert [p for p, _ in out] == [3]
    pkt = Ether(out[0][1])
    assert (pkt.src, pkt.dst) == (SWITCH.mac, WORKERS[2].mac)
    ip = pkt[IP]
    assert (ip.src, ip.dst, ip.ttl) == (WORKERS[0].ip, WORKERS[2].ip, 8)
    stored = ip.chksum
    del ip.chksum
    assert IP(bytes(ip)).chksum == stored
    assert bytes(pkt[ICMP]) == bytes(Ether(ping(0, WORKERS[2].ip))[ICMP])


def test_no_route_and_ttl_expiry_are_dropped() -> None:
    rig = make_rig()
    assert rig.sw.process(1, ping(0, "192.168.1.1")) == []
    assert rig.sw.process(1, ping(0, WORKERS[1].ip, ttl=1)) == []
    assert drops(rig.sw) == {DROP_NO_ROUTE: 1, DROP_TTL: 1}


def test_dhc_not_addressed_here_is_transit() -> None:
    rig = make_rig()
    frame = dhc_frame(WORKERS[0], SWITCH.mac, WORKERS[1].ip, [1, 2, 3, 4], job=7, ttl=20)
    out = rig.sw.process(1, frame)
    assert [p for p, _ in out] == [2]
    p = parse_dhc(out[0][1], 4)
    assert (p.ip_dst, p.eth_dst, p.ttl, p.lanes) == (WORKERS[1].ip, WORKERS[1].mac, 19, [1, 2, 3, 4])
    assert p.header == wire.unpack_header(frame[42:])
    # a transit DHC packet with a header this switch would reject is still just routed
    bad = dhc_frame(WORKERS[0], SWITCH.mac, WORKERS[1].ip, [1, 2, 3, 4], job=7, version=3)
    assert [port for port, _ in rig.sw.process(1, bad)] == [2]
    assert drops(rig.sw) == {}
