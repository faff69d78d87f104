"""``make stop``: end what an interrupted run of *this checkout* left behind, nothing else.

Runs of this checkout record their processes (PID + start time), host namespaces and switch
interfaces (name + ifindex) under ``<checkout>/.run/`` (``topologies.runreg``); this ends exactly
those and deletes the records.  No process is matched by name, no other Mininet's interfaces are
touched (no pattern-based kill, no Mininet-wide clean-up).  Safe to run at any time; idempotent.
"""

from __future__ import annotations

import sys

from topologies.runreg import run_dir, stop_recorded


def main() -> int:
    rep = stop_recorded()
    print(f"cleanup done ({run_dir()}): {rep.records} recorded run(s), {rep.processes} process(es) "
          f"ended, {rep.interfaces} interface(s) removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
