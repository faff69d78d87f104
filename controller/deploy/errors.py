"""Errors of the deployment half of the controller, with the exit codes ``dhc-ctl`` returns.

Exit codes (the placement side uses 2 bad input, 3 infeasible, 4 solver): 2 a placement that does
not fit the topology or the data plane, 5 a switch that cannot be reached or refused a request,
6 updates the switch rejected (each named with switch and entry), 7 a deployment that would
overwrite state another job owns.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.errors import ControllerError


class PlanError(ControllerError):
    """Topology + placement cannot be turned into switch entries (names the job/switch and why)."""

    exit_code = 2


class SwitchError(ControllerError):
    """A switch could not be reached, did not make us primary, or refused a whole request."""

    exit_code = 5

    def __init__(self, switch: str, message: str):
        self.switch = switch
        super().__init__(f"switch {switch}: {message}")


@dataclass
class UpdateFailure:
    """One rejected update: which switch, which entry, what the switch said."""

    switch: str
    update: str   # INSERT / MODIFY / DELETE
    entity: str   # human description of the entry (table, key, action)
    code: str     # gRPC canonical code name
    message: str

    def __str__(self) -> str:
        return f"{self.switch}: {self.update} {self.entity}: {self.code}: {self.message}"


class WriteError(ControllerError):
    """Some updates of a Write were rejected; ``failures`` lists each one."""

    exit_code = 6

    def __init__(self, failures: list[UpdateFailure]):
        self.failures = list(failures)
        lines = "\n".join(f"  - {f}" for f in self.failures[:50])
        more = f"\n  ... and {len(self.failures) - 50} more" if len(self.failures) > 50 else ""
        super().__init__(f"{len(self.failures)} update(s) rejected:\n{lines}{more}")


class ConflictError(ControllerError):
    """The deployment would overwrite register regions, rids or counter cells of another job."""

    exit_code = 7

    def __init__(self, conflicts: list[str]):
        self.conflicts = list(conflicts)
        lines = "\n".join(f"  - {c}" for c in self.conflicts)
        super().__init__(
            f"deployment conflicts with state of other jobs (use --prune to replace it):\n{lines}"
        )
