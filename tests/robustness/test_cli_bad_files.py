"""Every CLI, every file argument, every kind of bad file: a one-line error naming the file and a
non-zero exit code, never a traceback, quickly (issue 11: no traceback reaches a CLI user)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.robustness.bad_files import KINDS, NPY_KINDS, make

ROOT = Path(__file__).resolve().parents[2]
SINGLE = str(ROOT / "topologies" / "single.yaml")
DEAD = "s1=127.0.0.1:9"   # nothing listens: a command that got past its files would fail here


def _placement(tmp: Path) -> str:
    from controller.placement import place
    from controller.topology_file import load

    out = tmp / "placement.json"
    out.write_text(place(load(SINGLE), None, time_limit=10).to_json())
    return str(out)


#: (cli, argv builder) -- {F} is the bad file, {P} a good placement
SLOTS: dict[str, tuple[str, list[str]]] = {
    "ctl-place-topo": ("dhc-ctl", ["place", "--topo", "{F}"]),
    "ctl-deploy-topo": ("dhc-ctl", ["deploy", "--topo", "{F}", "--placement", "{P}",
                                    "--switch-addr-map", DEAD, "--timeout", "1"]),
    "ctl-deploy-placement": ("dhc-ctl", ["deploy", "--topo", SINGLE, "--placement", "{F}",
                                         "--switch-addr-map", DEAD, "--timeout", "1"]),
    "ctl-deploy-program": ("dhc-ctl", ["deploy", "--topo", SINGLE, "--placement", "{P}", "--program", "{F}",
                                       "--switch-addr-map", DEAD, "--timeout", "1"]),
    "ctl-deploy-addr-map": ("dhc-ctl", ["deploy", "--topo", SINGLE, "--placement", "{P}",
                                        "--switch-addr-map", "{F}", "--timeout", "1"]),
    "ctl-jobs-remove-topo": ("dhc-ctl", ["jobs", "remove", "--topo", "{F}", "--job", "1"]),
    "ctl-jobs-reset-topo": ("dhc-ctl", ["jobs", "reset", "--topo", "{F}", "--job", "1"]),
    "ctl-jobs-reset-manifest": ("dhc-ctl", ["jobs", "reset", "--topo", SINGLE, "--job", "1",
                                            "--manifest", "{F}", "--switch-addr-map", DEAD,
                                            "--timeout", "1"]),
    "ctl-status-topo": ("dhc-ctl", ["status", "--topo", "{F}"]),
    "agent-manifest": ("dhc-agent", ["--manifest", "{F}", "--host", "h1"]),
    "agent-input": ("dhc-agent", ["--input", "{F}", "--job", "1", "--child", "0",
                                  "--switch", "127.0.0.1", "--workers", "2"]),
    "softswitch-program": ("softswitch", ["{F}"]),
    "softswitch-stf-program": ("softswitch", ["stf", "{F}", "{F}"]),
    "bench-e2e-topo": ("dhc-bench", ["e2e", "--topo", "{F}"]),
    "bench-train-topo": ("dhc-bench", ["train", "--topo", "{F}"]),
}
TENSOR_SLOTS = {"agent-input"}


def _main(cli: str):
    if cli == "dhc-ctl":
        from controller.cli import main
    elif cli == "dhc-agent":
        from hostagent.cli import main
    elif cli == "softswitch":
        from softswitch.cli import main
    else:
        from bench.cli import main
    return main


def _cases() -> list[tuple[str, str]]:
    out = [(slot, kind) for slot in SLOTS for kind in KINDS]
    out += [(slot, kind) for slot in TENSOR_SLOTS for kind in NPY_KINDS]
    return out


@pytest.fixture(scope="module")
def placement_file(tmp_path_factory) -> str:
    return _placement(tmp_path_factory.mktemp("placement"))


@pytest.mark.parametrize("slot,kind", _cases())
def test_bad_file(slot: str, kind: str, tmp_path: Path, placement_file: str, capsys) -> None:
    cli, template = SLOTS[slot]
    bad = make(kind, tmp_path, ".npy" if slot in TENSOR_SLOTS else "")
    argv = [a.replace("{F}", str(bad)).replace("{P}", placement_file) for a in template]
    t0 = time.monotonic()
    try:
        rc = _main(cli)(argv)
    except SystemExit as exit_:   # argparse-style exits are fine if they explain themselves
        rc = exit_.code if isinstance(exit_.code, int) else 2
        if not isinstance(exit_.code, int):
            print(exit_.code, file=__import__("sys").stderr)
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert rc not in (0, None), f"{cli} {argv} accepted a {kind} file"
    assert "Traceback" not in err
    assert err.strip() and len(err.strip().splitlines()) <= 40, err   # a message, not a dump
    assert elapsed < 10, f"{slot}/{kind} took {elapsed:.1f} s"
