"""Time at datacenter scale: DHC and its baselines as flow-level simulations on SimGrid.

``dhc-sim`` (``sim/cli.py``) builds a SimGrid platform from a topology file or a generated
fat-tree / leaf-spine (``fabric``), derives each mode's traffic from the project's codec and
placement (``workload``, ``schedule``), runs it on SimGrid's flow-level network model
(``engine``, one process per mode) and reports seconds, bytes and packets per worker.
``validate`` checks it against closed forms, the Mininet emulator and a published regime.
Nothing but ``bench`` and ``tests`` imports this package; it imports ``dhc``, ``dhcwire``
and ``controller``.  See ``docs/scale.md``.
"""
