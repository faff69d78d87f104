"""Fuzzed frames through p4src/dhc.p4 on the in-process softswitch (runtime API, real entries).

Frames are mutations of valid ones (DATA of an authorised worker, ARP, transit IPv4, PROBE):
bit flips, truncation, extension, random dhc_h / IPv4 / UDP fields, random bytes, random ingress
ports.  Every frame must be processed without an exception; a frame that produces no output must
be counted (a drop reason, or a DATA consumed into a slot).  Afterwards a fresh epoch makes the job
usable again: a correct AllReduce round of all workers yields the exact sum (the fuzz used the
workers' own ports, addresses and child ids, so it may well have poisoned the old epoch's slots).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from controller.entries import epoch_entry
from controller.placement import place
from controller.topology_file import from_dict
from dhcwire import header as wire
from dhcwire.frames import decode_datagram, encode_datagram
from dhcwire.p4names import C_CONTRIB, C_DROP, C_EGRESS_DROP, T_EPOCH
from softswitch.api import Exact
from tests.simnet import SimNet

ROOT = Path(__file__).resolve().parents[2]
LANES, WINDOW, FRAMES, BUDGET_S = 4, 8, 4000, 25.0
COUNTERS = (C_DROP, C_EGRESS_DROP, C_CONTRIB)


@pytest.fixture(scope="module")
def net() -> SimNet:
    doc = yaml.safe_load((ROOT / "topologies" / "single.yaml").read_text())
    doc["jobs"][0].update(lanes=LANES, window=WINDOW)
    topo = from_dict(doc, "single-fuzz")
    return SimNet(topo, place(topo, None, time_limit=10))


def _data(net: SimNet, host: str, chunk: int, lanes: np.ndarray, epoch: int = 0, child: int | None = None,
          level: int = int(wire.Level.DENSE)) -> bytes:
    h, sw = net.topology.hosts[host], net.topology.switches["s1"]
    if child is None:
        child = next(c.index for c in net.placement.jobs[0].aggregators[0].children if c.name == host)
    payload = encode_datagram(wire.PacketType.DATA, level, 1, child, chunk,
                              wire.slot_for_chunk(chunk, WINDOW), lanes.astype(np.uint32), epoch=epoch)
    return bytes(Ether(src=h.mac, dst=sw.mac) / IP(src=h.ip, dst=sw.ip, ttl=64)
                 / UDP(sport=wire.worker_port(1), dport=wire.DHC_UDP_PORT) / payload)


def _seeds(net: SimNet) -> list[bytes]:
    h1, h2, sw = net.topology.hosts["h1"], net.topology.hosts["h2"], net.topology.switches["s1"]
    probe = encode_datagram(wire.PacketType.PROBE, 0, 1, 0, 0, 0, np.zeros(0, dtype=np.uint32))
    return [
        _data(net, "h1", 3, np.arange(LANES)),
        bytes(Ether(src=h1.mac, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=h1.mac, psrc=h1.ip, pdst=sw.ip)),
        bytes(
            Ether(src=h1.mac, dst=sw.mac) / IP(src=h1.ip, dst=h2.ip) / UDP(sport=1234, dport=5678) / b"hello"
        ),
        bytes(
            Ether(src=h1.mac, dst=sw.mac)
            / IP(src=h1.ip, dst=h2.ip)
            / UDP(sport=wire.worker_port(1), dport=wire.worker_port(1))
            / probe
        ),
    ]


def _mutate(rng: random.Random, frame: bytes) -> tuple[str, bytes]:
    b = bytearray(frame)
    kind = rng.choice(["bitflip", "truncate", "extend", "dhc_field", "ip_field", "udp_field", "random"])
    if kind == "bitflip":
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b) * 8)
            b[i // 8] ^= 1 << (i % 8)
    elif kind == "truncate":
        b = b[:rng.randrange(len(b))]
    elif kind == "extend":
        b += rng.randbytes(rng.randint(1, 300))
    elif kind == "dhc_field" and len(b) >= 42 + wire.DHC_HEADER_BYTES:
        off = 42 + rng.randrange(wire.DHC_HEADER_BYTES)
        b[off] = rng.randrange(256)
    elif kind == "ip_field" and len(b) >= 34:
        off = 14 + rng.randrange(20)
        b[off] = rng.randrange(256)
    elif kind == "udp_field" and len(b) >= 42:
        off = 34 + rng.randrange(8)
        b[off] = rng.randrange(256)
    else:
        b = bytearray(rng.randbytes(rng.randint(0, 200)))
        kind = "random"
    return kind, bytes(b)


def _totals(sw) -> int:
    total = 0
    for name in COUNTERS:
        i = 0
        while True:
            try:
                total += sw.counter_read(name, i)[0]
            except Exception:  # noqa: BLE001 - past the last cell
                break
            i += 1
    return total


def test_fuzzed_frames_are_dropped_and_counted_then_a_new_epoch_is_exact(net: SimNet) -> None:
    rng = random.Random(11)
    sw = net.switch("s1")
    seeds = _seeds(net)
    kinds: Counter[str] = Counter()
    silent_uncounted = []
    t0 = time.monotonic()
    done = 0
    for _ in range(FRAMES):
        kind, frame = _mutate(rng, rng.choice(seeds))
        port = rng.choice([0, 5, 200, 510]) if rng.random() < 0.1 else rng.randint(1, 4)
        before = _totals(sw)
        out = sw.process(port, frame)   # must never raise
        kinds[kind] += 1
        if not out and _totals(sw) == before:
            silent_uncounted.append((kind, port, frame.hex()))
        for _, o in out:
            assert len(o) >= 14
        done += 1
        if time.monotonic() - t0 > BUDGET_S:
            break
    assert done >= FRAMES // 4, f"only {done} frames in {BUDGET_S} s"
    assert not silent_uncounted, (
        f"{len(silent_uncounted)} frames vanished uncounted, e.g. {silent_uncounted[:3]}"
    )
    print(f"fuzzed frames per mutation: {dict(kinds)}")

    # recovery: move the job to epoch 1, then one correct round of all four workers
    old = epoch_entry(1, 0)
    sw.table_add(T_EPOCH, epoch_entry(1, 1).action, {"job_id": Exact(1), "epoch": Exact(1)}, {})
    sw.table_delete(old.table, {"job_id": Exact(1), "epoch": Exact(0)})
    vals = {h: np.array([rng.randrange(1 << 20) for _ in range(LANES)], dtype=np.uint32)
            for h in ("h1", "h2", "h3", "h4")}
    results = []
    for h, v in vals.items():
        for host, frames in net.inject(h, _data(net, h, 3, v, epoch=1)).items():
            results += [(host, f) for f in frames]
    expect = sum(v.astype(np.uint64) for v in vals.values()).astype(np.uint32)
    got = {host: decode_datagram(bytes(Ether(f)[UDP].payload)) for host, f in results}
    assert sorted(got) == ["h1", "h2", "h3", "h4"]
    for dg in got.values():
        assert dg.pkt_type == wire.PacketType.RESULT and dg.epoch == 1
        assert np.array_equal(dg.lanes, expect)
    # and a frame of the old epoch is dropped as stale
    assert not net.inject("h1", _data(net, "h1", 4, vals["h1"], epoch=0))
