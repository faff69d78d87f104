"""An in-process softswitch running ``p4src/dhc.p4`` with a controller's intended state, for
tests and benchmarks that need packets through the real program without P4Runtime (the
controller itself only compiles, ``controller/pipeline.py``)."""

from __future__ import annotations

from pathlib import Path

from controller.intent import SwitchState
from controller.pipeline import PROGRAM, program_defines
from dhcwire.p4names import DEFAULT_MAX_JOBS
from softswitch import Switch
from softswitch.api import Exact, Lpm, Replica


def load_in_process(
    lanes: int, pool_size: int, max_jobs: int = DEFAULT_MAX_JOBS, program: Path = PROGRAM
) -> Switch:
    """An in-process softswitch running ``program`` with these sizes (tests and benchmarks)."""
    return Switch.load(str(program), defines=program_defines(lanes, pool_size, max_jobs))


def apply_in_process(sw: Switch, state: SwitchState) -> None:
    """Install ``state`` on an in-process ``softswitch.Switch`` (empty tables assumed)."""
    for d in state.defaults.values():
        sw.table_set_default(d.table, d.action, dict(d.params))
    for e in state.entries.values():
        match = {
            m.name: (Exact(m.value) if m.prefix_len is None else Lpm(m.value, m.prefix_len)) for m in e.match
        }
        sw.table_add(e.table, e.action, match, dict(e.params))
    for g in state.groups.values():
        sw.mc_group_set(g.group_id, [Replica(port, rid) for port, rid in g.replicas])
