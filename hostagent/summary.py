"""The end of every worker CLI: save the sum, check it against an expected one, print the summary."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def finish(summary: dict, result: np.ndarray, output: Path | None, expect: Path | None,
           as_json: bool) -> int:
    """Write ``result`` to ``output``; with ``expect``, record whether it equals the expected
    float32 sum bit for bit; print ``summary``; return the exit code (0 ok, 1 not exact)."""
    if output:
        np.save(output, result)
    if expect:
        expected = np.load(expect, allow_pickle=False)
        exact = expected.shape == result.shape and np.array_equal(
            np.asarray(expected, dtype=np.float32).view(np.uint32),
            np.asarray(result, dtype=np.float32).view(np.uint32))
        summary["exact"] = bool(exact)
        summary["ok"] = bool(summary.get("ok", True) and exact)
    if as_json:
        print(json.dumps(summary))
    else:
        for k, v in summary.items():
            print(f"{k:>20}: {v}")
    return 0 if summary.get("ok", True) else 1
