"""One class per P4 control of ``p4src/dhc.p4`` that owns controller-installed tables (after
p4app-switchML's ``control/`` classes): each turns a ``SwitchPlan`` into that control's entries."""

from controller.programs.forwarding import Forwarding
from controller.programs.index_tables import IndexTables, epoch_entry, installed_epoch
from controller.programs.plan import ChildPlan, JobPlan, Route, SwitchPlan
from controller.programs.rewrite import ResultRewrite

#: Every program, in the order their state is generated.
PROGRAMS = (Forwarding(), IndexTables(), ResultRewrite())

__all__ = ["PROGRAMS", "ChildPlan", "Forwarding", "IndexTables", "JobPlan", "ResultRewrite", "Route",
           "SwitchPlan",
           "epoch_entry", "installed_epoch"]
