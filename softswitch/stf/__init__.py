"""p4c's STF test format: the parser (``syntax.py``), control-plane names as p4c's BMv2 runner
resolves them (``names.py``) and the runner (``runner.py``; ``python -m softswitch.stf``)."""

from .runner import main, run_stf

__all__ = ["main", "run_stf"]
