"""The Docker path cannot run here (no engine); its files are validated as far as possible."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="Debian's docker-compose not installed")
def test_compose_file_is_valid():
    out = subprocess.run(["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    config = yaml.safe_load(out.stdout)
    svc = config["services"]["dhc"]
    assert svc["privileged"] is True and svc["command"] == ["make", "run", "TARGET=bmv2"]
    # the image's `make p4` and the container's `make run` build for the same topology
    assert svc["build"]["args"]["TOPO"] == svc["environment"]["TOPO"] == "topologies/leafspine.yaml"


def test_make_p4_and_the_story_share_one_bmv2_build():
    """`make p4` (the Docker image) runs controller.bmv2_build for the topology, the function the
    story's BMv2 path uses: the same defines and K, the same cache."""
    make = (ROOT / "Makefile").read_text()
    p4 = make[make.index("\np4:"):make.index("docker-run:")]
    assert "-m controller.bmv2_build --topo $(TOPO)" in p4 and "dhc.json" not in p4
    story = (ROOT / "topologies" / "story.py").read_text()
    assert "Bmv2Build()" in story and "dhc.json" not in story


def test_dockerfile_builds_on_p4lang_and_runs_the_story_on_bmv2():
    text = (ROOT / "Dockerfile").read_text()
    assert any(line.startswith("FROM p4lang/p4c") for line in text.splitlines())
    assert "mininet" in text and "make setup" in text and "make p4 TOPO=${TOPO}" in text
    assert '"TARGET=bmv2"' in text
