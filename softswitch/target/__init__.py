"""The software target (after BMv2's ``bm_sim`` and ``simple_switch``): run-time objects made
from a compiled program's declarations (tables, action profiles, registers, counters, meters,
value sets, custom CRCs, the random source), the v1model packet flow, port I/O and ``Switch``,
the runtime API."""
