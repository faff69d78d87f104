"""Errors the controller reports to users, each carrying what the CLI needs for its message and
exit code (2 = bad input file, 3 = infeasible placement)."""

from __future__ import annotations

from dataclasses import dataclass


class ControllerError(Exception):
    """Base class: a problem the user can fix; the CLI prints ``str(err)`` and exits."""

    exit_code: int = 1


@dataclass
class Problem:
    """One validation problem: where (path inside the document) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '<top>'}: {self.message}"


class TopologyError(ControllerError):
    """A topology file (or an in-memory topology) is malformed.  Names the file, the path of each
    offending element (``links[3].b_port``) and the problem, so users fix it without guessing."""

    exit_code = 2

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  {source}: {p}" for p in self.problems[:30])
        if len(self.problems) > 30:
            lines += f"\n  ... and {len(self.problems) - 30} more"
        super().__init__(f"invalid topology {source} ({len(self.problems)} problem(s)):\n{lines}")


@dataclass
class BindingConstraint:
    """One constraint that makes a placement impossible, in words a user can act on."""

    kind: str     # "budget", "memory", "fan-in", "no-candidate"
    where: str    # switch name, job id or "network"
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} at {self.where}: {self.detail}"


class InfeasiblePlacement(ControllerError):
    """No placement satisfies the constraints; ``binding`` says which constraints conflict."""

    exit_code = 3

    def __init__(self, binding: list[BindingConstraint], source: str | None = None):
        self.binding = list(binding)
        self.source = source
        lines = "\n".join(f"  - {b}" for b in self.binding) or "  - (no single constraint identified)"
        where = f" for topology {source}" if source else ""
        super().__init__(f"placement{where} infeasible; binding constraint(s):\n{lines}")


class SolverError(ControllerError):
    """The solver stopped without an answer (time limit hit before any feasible placement)."""

    exit_code = 4
