"""Mininet fixtures: a deployed network per topology, shared by the tests of a module.

Every switch is a real softswitch process on veth ports; the controller places and deploys
over P4Runtime; workers are real ``dhc-agent`` processes in the hosts' namespaces.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _needs_root() -> None:
    if os.geteuid() != 0 or shutil.which("mnexec") is None:
        pytest.skip("needs root and Debian's mininet")


@dataclass
class Deployed:
    handle: object
    manifest: Path
    topo: object
    placement: object
    workdir: Path

    @property
    def addrs(self):
        from topologies.story import switch_addresses
        return switch_addresses(self.handle)

    def status(self) -> dict[str, dict]:
        from controller.status import collect
        return {s.switch: s for s in collect(self.addrs)}


def _deployed(topo_file: str, tmp_path_factory):
    _needs_root()
    from controller.placement import place
    from controller.topology_file import load
    from topologies.story import deployed_net

    topo = load(ROOT / "topologies" / topo_file)
    placement = place(topo)
    workdir = tmp_path_factory.mktemp(topo_file.split(".")[0])
    with deployed_net(topo, placement, workdir) as (handle, manifest, _):
        yield Deployed(handle, manifest, topo, placement, workdir)


@pytest.fixture(scope="module")
def single_net(tmp_path_factory):
    yield from _deployed("single.yaml", tmp_path_factory)


@pytest.fixture(scope="module")
def leafspine_net(tmp_path_factory):
    yield from _deployed("leafspine.yaml", tmp_path_factory)


@pytest.fixture(scope="module")
def recovery_net(tmp_path_factory):
    """single.yaml, deployed, with the topology file's path (for dhc-ctl commands)."""
    for net in _deployed("single.yaml", tmp_path_factory):
        net.topo_file = ROOT / "topologies" / "single.yaml"
        yield net
