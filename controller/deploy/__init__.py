"""Deploying a placement onto switches: ``deploy``, ``remove_job``, ``read_state``.

* ``state_diff`` -- the pure half: the diff of intended vs installed state, owners, conflicts
  and the change counts, computed from plain ``SwitchState`` data (no I/O);
* ``apply`` -- the I/O half: read what switches hold and write the diff over P4Runtime;
* ``cli`` -- ``dhc-ctl deploy | jobs ... | status | shell``; ``errors`` -- their error types.

The public names are re-exported here and loaded on first use, so that ``controller.deploy.errors``
(imported by most of the controller) does not pull in the P4Runtime client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.deploy.apply import DeployReport, deploy, read_state, remove_job, to_updates
    from controller.deploy.state_diff import Change, SwitchReport, assign_owners, conflicts, diff
    from controller.intent import BASE_TABLES

#: public name -> the module that defines it
_HOMES: dict[str, str] = {
    "Change": "controller.deploy.state_diff",
    "SwitchReport": "controller.deploy.state_diff",
    "assign_owners": "controller.deploy.state_diff",
    "conflicts": "controller.deploy.state_diff",
    "diff": "controller.deploy.state_diff",
    "DeployReport": "controller.deploy.apply",
    "deploy": "controller.deploy.apply",
    "read_state": "controller.deploy.apply",
    "remove_job": "controller.deploy.apply",
    "to_updates": "controller.deploy.apply",
    "BASE_TABLES": "controller.intent",
}

__all__ = ["BASE_TABLES", "Change", "DeployReport", "SwitchReport", "assign_owners", "conflicts", "deploy",
           "diff", "read_state", "remove_job", "to_updates"]
assert set(__all__) == set(_HOMES)


def __getattr__(name: str) -> Any:
    """Load a public name from its module the first time it is asked for (PEP 562)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value
