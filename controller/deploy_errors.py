"""Old home of the deployment errors, now ``controller.deploy.errors``; kept only for
``controller/pipeline.py`` and ``controller/service/cli.py``, which other branches are editing.
Switch their imports to ``controller.deploy.errors`` and delete this file."""

from controller.deploy.errors import ConflictError, PlanError, SwitchError, UpdateFailure, WriteError

__all__ = ["ConflictError", "PlanError", "SwitchError", "UpdateFailure", "WriteError"]
