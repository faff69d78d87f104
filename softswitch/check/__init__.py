"""The checker: type and semantic checks of the rewritten syntax tree (``program.Program``
runs them), p4c's errors for what it rejects, and the declarations the IR lowering, P4Info and
a target take.  Nothing here builds run-time objects or imports ``softswitch.target``."""
