"""What every test module shares.

``make test`` runs the suite in two halves at once (Makefile): the tests marked ``root`` that
build interfaces or namespaces in the machine's own network namespace (Mininet's ``s1-eth1``,
fixed veth names) one after another, since two of them at once would collide on names; and all
the others on two xdist workers, whole modules per worker.  Tests marked ``own_netns`` run in a
private ``unshare --net`` namespace or name everything they make uniquely, so they belong to the
second half even when they need root.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="module")
def chunk_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Agents that keep their job's epoch resume the chunk sequence from a state file
    (hostagent/chunk_state.py).  Each test module keeps its own, in a folder of this run (the
    processes it starts, Mininet hosts included, inherit the variable), never the user's: a module
    that runs several sessions on one network sees its own, and no module sees another's."""
    old = os.environ.get("DHC_STATE_DIR")
    path = tmp_path_factory.mktemp("dhc-state")
    os.environ["DHC_STATE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("DHC_STATE_DIR", None)
    else:
        os.environ["DHC_STATE_DIR"] = old
