"""Baselines DHC is measured against.

Codecs for ``dhc-bench compare``: pure numpy, each a faithful reimplementation of a published
idea (see each module's docstring for what it sends per worker).  Every codec module exposes
``NAME`` and ``run(tensors, **params) -> CodecRun``: it simulates all N workers and the
aggregation in this process and returns the decoded sum, the exact sum of what the workers
encoded, bytes per worker and worker 0's encode/decode time.

The host ring (``ring``, ``ring_transport``) is the network baseline of ``dhc-bench e2e``: real
worker processes summing over UDP with no switch aggregating (``python -m bench.baselines.ring``,
``dhc-ring``); it is not in ``CODECS``.
"""

from __future__ import annotations

from collections.abc import Callable

from . import dense_fp32, hgsketch, lhc, s2reducer, switchml, thc, topk
from .common import CodecRun

#: codec name -> run function, in the order tables and plots list them.
CODECS: dict[str, Callable[..., CodecRun]] = {
    m.NAME: m.run for m in (dense_fp32, switchml, topk, lhc, s2reducer, thc, hgsketch)
}

__all__ = ["CODECS", "CodecRun"]
