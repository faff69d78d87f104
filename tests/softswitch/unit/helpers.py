"""A small v1model skeleton for unit programs: Ethernet + a 'data' header of 8 x 32-bit words."""

from __future__ import annotations

from softswitch import Switch
from softswitch.native.switch import NativeSwitch

SKELETON = """
#include <core.p4>
#include <v1model.p4>

header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etype; }}
header data_t {{ bit<32> w0; bit<32> w1; bit<32> w2; bit<32> w3;
                bit<32> w4; bit<32> w5; bit<32> w6; bit<32> w7; }}
{decls}
struct headers {{ ethernet_t eth; data_t d; {hfields} }}
struct metadata {{ bit<32> m0; bit<32> m1; bit<8> m8; bit<16> m16; {mfields} }}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{parser}
}}
control VC(inout headers hdr, inout metadata meta) {{ apply {{ {verify} }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{ilocals}
    apply {{
        sm.egress_spec = 1;
{ingress}
    }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{elocals}
    apply {{
{egress}
    }}
}}
control CC(inout headers hdr, inout metadata meta) {{ apply {{ {compute} }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ {deparser} }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

DEFAULT_PARSER = """
    state start { pkt.extract(hdr.eth); transition select(hdr.eth.etype) {
        0x88b5: parse_d; default: accept; } }
    state parse_d { pkt.extract(hdr.d); transition accept; }
"""


def program(
    ingress: str = "",
    *,
    decls: str = "",
    hfields: str = "",
    mfields: str = "",
    parser: str = DEFAULT_PARSER,
    ilocals: str = "",
    egress: str = "",
    elocals: str = "",
    verify: str = "",
    compute: str = "",
    deparser: str = "pkt.emit(hdr.eth); pkt.emit(hdr.d);",
) -> str:
    return SKELETON.format(decls=decls, hfields=hfields, mfields=mfields, parser=parser, ilocals=ilocals,
                           ingress=ingress, egress=egress, elocals=elocals, verify=verify, compute=compute,
                           deparser=deparser)


def switch(ingress: str = "", backend: str = "python", **kw) -> Switch:
    """A python switch with traces, or (backend="native") the native one without."""
    if backend == "native":
        return NativeSwitch.from_source(program(ingress, **kw), "unit.p4")
    return Switch.from_source(program(ingress, **kw), "unit.p4", trace=True)


def frame(*words: int, etype: int = 0x88B5, extra: bytes = b"") -> bytes:
    """Ethernet + data header with the given words (missing ones 0)."""
    ws = list(words) + [0] * (8 - len(words))
    return (b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + etype.to_bytes(2, "big")
            + b"".join(w.to_bytes(4, "big") for w in ws) + extra)


def words(data: bytes) -> list[int]:
    """The 8 data words of an output frame."""
    return [int.from_bytes(data[14 + 4 * i:18 + 4 * i], "big") for i in range(8)]


def run_words(sw: Switch, *ws: int, port: int = 0) -> list[int]:
    out = sw.process(port, frame(*ws))
    assert len(out) == 1, (out, sw.last_trace)
    return words(out[0][1])
