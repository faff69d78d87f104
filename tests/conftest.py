"""How the suite shares the machine's cores (``make test`` runs it on pytest-xdist, ``--dist
loadgroup``).

Every test gets an ``xdist_group``:

* tests marked ``root`` that build interfaces or namespaces in the machine's own network namespace
  (Mininet's ``s1-eth1``, fixed veth names, the switch's ports) share one group, ``root-namespace``:
  they run one after another on one worker, since two of them at once would collide on names;
* every other test is grouped by its module, so a module's fixtures (compiled pipelines, started
  switches) are built once, on one worker, as with ``--dist loadfile``.  Tests marked
  ``own_netns`` (they run inside a private ``unshare --net`` namespace, or name everything they
  create uniquely) are grouped by module too, even when marked ``root``.

The ``root-namespace`` group is the longest single piece of work, so its tests are moved to the
front of the collection: the scheduler hands it to a worker first, and the other workers share the
rest beside it.  Without xdist (``pytest -m root``), the groups change nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT_NAMESPACE_GROUP = "root-namespace"


def xdist_group_of(item: pytest.Item) -> str:
    """The group a test runs in (the docstring above says why)."""
    if item.get_closest_marker("root") and not item.get_closest_marker("own_netns"):
        return ROOT_NAMESPACE_GROUP
    return item.nodeid.split("::", 1)[0]


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Runs before xdist's own hook, which appends the group to each test's id."""
    groups = {id(item): xdist_group_of(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))
    items.sort(key=lambda item: groups[id(item)] != ROOT_NAMESPACE_GROUP)
