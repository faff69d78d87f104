"""A p4runtime-shell session, run as a child process by test_p4runtime_shell.py.

p4runtime-shell keeps one global client and leaves a non-daemon packet-in
thread behind, so it runs in its own process; it prints one JSON line of what
it observed and exits hard.

    python -m tests.softswitch.runtime.shell_session ADDR P4INFO.txtpb CONFIG.bin
"""

from __future__ import annotations

import json
import os
import sys


def session(addr: str, p4info_path: str, bin_path: str) -> dict:
    import p4runtime_sh.shell as sh

    out: dict = {}
    sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info_path, bin_path), verbose=False)
    te = sh.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.ipv4_forward")
    te.match["hdr.ipv4.dstAddr"] = "10.0.0.2/32"
    te.action["dstAddr"] = "02:00:00:00:00:02"
    te.action["port"] = "2"
    te.insert()
    acl = sh.TableEntry("MyIngress.acl")(action="MyIngress.to_cpu")
    acl.match["hdr.ethernet.etherType"] = "0x88b5&&&0xffff"
    acl.priority = 5
    acl.insert()
    out["entries"] = [
        {
            "value": e.match["hdr.ipv4.dstAddr"].lpm.value.hex(),
            "plen": e.match["hdr.ipv4.dstAddr"].lpm.prefix_len,
            "port": e.action["port"].value.hex(),
            "dmac": e.action["dstAddr"].value.hex(),
        }
        for e in sh.TableEntry("MyIngress.ipv4_lpm").read()
    ]
    out["acl_priorities"] = [e.priority for e in sh.TableEntry("MyIngress.acl").read()]

    g = sh.MulticastGroupEntry(3)
    g.add(1, 1).add(2, 1)
    g.insert()
    out["groups"] = [[(r.egress_port, r.instance) for r in e.replicas]
                     for e in sh.MulticastGroupEntry(3).read()]
    s = sh.CloneSessionEntry(4)
    s.add(255, 0)
    s.insert()
    out["clone_sessions"] = [[r.egress_port for r in e.replicas] for e in sh.CloneSessionEntry(4).read()]

    pin = sh.PacketIn()
    frame = bytes.fromhex("ffffffffffff02000000000188b5") + b"shell-loop"
    sh.PacketOut(frame, egress_port="255").send()
    sh.PacketOut(frame, egress_port="2").send()
    msgs = list(pin.sniff(timeout=3))
    out["packet_in"] = [{"payload": m.packet.payload.hex(),
                         "meta": {m2.metadata_id: m2.value.hex() for m2 in m.packet.metadata}} for m in msgs]

    c = sh.CounterEntry("MyIngress.port_rx")
    c.index = 255
    out["counter"] = [(e.data.packet_count, e.data.byte_count) for e in c.read()]

    te.delete()
    out["after_delete"] = len(list(sh.TableEntry("MyIngress.ipv4_lpm").read()))
    g.delete()
    out["groups_after_delete"] = len(list(sh.MulticastGroupEntry(3).read()))
    return out


if __name__ == "__main__":
    try:
        result = session(*sys.argv[1:4])
        print(json.dumps(result), flush=True)
        code = 0
    except BaseException as err:  # noqa: BLE001 - report anything, then exit hard
        import traceback

        traceback.print_exc()
        print(json.dumps({"error": repr(err)}), flush=True)
        code = 1
    os._exit(code)
