"""One class per P4 control of ``p4src/dhc.p4`` that owns controller-installed tables: each turns
a ``SwitchPlan`` into that control's entries, default actions and multicast groups."""

from controller.controls.forwarding import Forwarding
from controller.controls.index_tables import IndexTables, epoch_entry, installed_epoch
from controller.controls.rewrite import ResultRewrite
from controller.controls.switch_plan import ChildPlan, JobPlan, Route, SwitchPlan

#: Every control, in the order their state is generated.
CONTROLS = (Forwarding(), IndexTables(), ResultRewrite())

__all__ = ["CONTROLS", "ChildPlan", "Forwarding", "IndexTables", "JobPlan", "ResultRewrite", "Route",
           "SwitchPlan",
           "epoch_entry", "installed_epoch"]
