"""The DHC wire protocol: what hosts, switches and the controller agree on.

Nothing here does I/O and nothing imports another project package, so every part can depend on it.
The modules are split by who needs them:

- :mod:`dhcwire.lanes` -- levels, ops and the lane layout: all the codec (``dhc``) needs.
- :mod:`dhcwire.header` -- the ``dhc_h`` header, packet types, UDP ports, ``pack_header``, the
  slot rule (``slot_for_chunk``, for one chunk or an array of them).
- :mod:`dhcwire.frames` -- the datagram codec: one datagram or a whole round as a numpy array.
- :mod:`dhcwire.p4names` -- P4Info names and drop reasons of ``p4src/dhc.p4``.
- :mod:`dhcwire.addresses` -- IPv4/MAC text <-> the integers P4 match fields carry.

This ``__init__`` imports none of them, so importing :mod:`dhcwire.lanes` loads nothing that
carries packets.
"""
