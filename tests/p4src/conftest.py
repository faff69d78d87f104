"""Shared fixtures of the data-plane tests."""

from __future__ import annotations

import pytest

from tests.p4src import realp4c


@pytest.fixture(scope="session")
def real_builds(tmp_path_factory) -> dict[str, realp4c.Compile]:
    """p4src/dhc.p4 compiled once per session by the reference p4c for BMv2, Tofino 1 and Tofino 2
    (default defines: K is what the program picks for the target), the three compiles running at
    once; skipped, with the reason, where the toolchain is absent."""
    env = realp4c.p4c_environment()
    if env is None:
        pytest.skip(realp4c.missing_reason())
    root = tmp_path_factory.mktemp("p4c")
    started = [realp4c.start(t, root / t, env) for t in ("tofino", "tofino2", "bmv2")]
    return {r.target: realp4c.finish(r, proc) for r, proc in started}
