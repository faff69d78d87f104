"""DHC packets in Scapy: a layer for inspection, tests and tools (``sniff``, ``show()``).

Generated from ``dhcwire.header.DHC_HEADER_FIELDS``, the one host-side definition of the format;
the code that sends and receives DHC packets uses ``dhcwire.frames`` instead (plain numpy), and
``tests/hostagent/test_packet.py`` checks the two agree byte for byte.
"""

from __future__ import annotations

from scapy.fields import BitField, FieldListField, XIntField
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from dhcwire import header as wire


class DHC(Packet):
    """``dhc_h`` followed by ``num_lanes`` 32-bit lanes."""

    name = "DHC"
    fields_desc = [BitField(f.name, wire.DHC_VERSION if f.name == "version" else 0, f.bits)
                   for f in wire.DHC_HEADER_FIELDS] + [
        FieldListField("lanes", [], XIntField("lane", 0),
                       count_from=lambda pkt: wire.lanes_from_wire(pkt.num_lanes, pkt.pkt_type),
                       max_count=wire.MAX_LANES),
    ]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


bind_layers(UDP, DHC, dport=wire.DHC_UDP_PORT)
