"""``make stop``: remove whatever an interrupted run may have left behind.

Kills stray target and agent processes started from this checkout, then lets Mininet clean
its interfaces and namespaces (``mn -c``).  Safe to run at any time; idempotent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

PATTERNS = ("softswitch.cli", "bin/softswitch", "simple_switch_grpc", "hostagent.cli", "dhc-agent",
            "hostagent.ring", "tests.e2e.ddp_worker")


def main() -> int:
    for pattern in PATTERNS:
        subprocess.run(["pkill", "-f", pattern], check=False)
    if shutil.which("mn"):
        subprocess.run(["mn", "-c"], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("cleanup done: no DHC processes, Mininet interfaces and namespaces removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
