"""What the job-service tests share: one P4Runtime server running p4src/dhc.p4 per module."""

from __future__ import annotations

import pytest

from tests.robustness.p4rt_fixture import running_switch


@pytest.fixture(scope="module")
def switch():
    """A P4Runtime server on localhost with dhc.p4 set (no Mininet); the test's own clients
    connect to ``switch.addr``."""
    with running_switch() as sw:
        sw.conn.close()
        yield sw
