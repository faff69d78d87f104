"""p4src/dhc.p4 under the reference compilers (p4c 1.2.5.8): BMv2 without a warning, Tofino 1 and
Tofino 2 fitting at the K the program picks for them, and the Tofino 1 placement the README's stage
table describes (p4src/README.md, "Tofino").  The compiles are shared (fixture ``real_builds``)
and skipped, with the reason, where the toolchain is absent; the rule checks that need no compiler
are in test_tofino_rules.py."""

from __future__ import annotations

import re

import pytest

from tests.p4src.realp4c import PROGRAM, TOFINO_STAGES, Compile

# The first test also waits for the shared compiles (fixture real_builds), which took 242-281 s
# here on 2 cores at a load average of 6-9: too close to the 300 s pytest-timeout default.
pytestmark = pytest.mark.timeout(1200)

README = (PROGRAM.parent / "README.md").read_text()
INGRESS = "DhcIngress."

# Where the dependency chain puts each non-lane table on Tofino 1 (earliest stage it can take;
# README "Stage by stage").  A table later than this pushes the chain and eats the headroom.
CHAIN_STAGE = {
    "dhc_index.local_addr": 0, "dhc_index.host_port": 0, "dhc_index.host_source": 0,
    "dhc_index.job_table": 0, "dhc_index.epoch_table": 0,
    "dhc_index.level_table": 0, "dhc_index.child_table": 0, "dhc_index.arp_check": 0,
    "forwarding.switch_config": 0,
    "dhc_index.verdict": 1,
    "shadow.chunk_check": 2,
    "shadow.bitmap_set0_update": 3, "shadow.bitmap_set1_update": 3,
    "shadow.count_update": 4,
    "tbl_shadow_compute_gap": 5,
    "completion.decide": 6,
    "forwarding.arp_table": 7, "forwarding.ipv4_lpm": 7, "tbl_forwarding_drop_as": 7,
    "stats.contribution_stats": 7, "stats.completion_stats": 7, "stats.duplicate_stats": 7,
    "stats.result_stats": 7,
    "tbl_drops_count_drop": 8, "tbl_drops_absorb": 8,
}
FIRST_LANE_STAGE = 5          # the lanes key on kind, written by count_update (stage 4)


def _name(short: str) -> str:
    return short if short.startswith("tbl_") else INGRESS + short


def _documented_k() -> int:
    m = re.search(r"\*\*K = (\d+) on Tofino 1\*\*", README)
    assert m, "p4src/README.md must state the Tofino K as '**K = <n> on Tofino 1**'"
    return int(m.group(1))


def _documented_stages() -> int:
    m = re.search(r"Tofino 1 places the ingress in \*\*(\d+) stages\*\*", README)
    assert m, "p4src/README.md must state 'Tofino 1 places the ingress in **<n> stages**'"
    return int(m.group(1))


def _lanes(build: Compile) -> list[int]:
    return sorted(int(m.group(1)) for t in build.stages
                  if (m := re.fullmatch(r"DhcIngress\.lanes\.lane_(\d+)_update", t)))


def test_bmv2_compiles_without_warnings(real_builds: dict[str, Compile]) -> None:
    b = real_builds["bmv2"]
    assert b.returncode == 0, b.output
    assert "warning" not in b.output.lower(), b.output
    assert (b.out / "dhc.json").is_file() and (b.out / "dhc.p4info.txtpb").is_file()


@pytest.mark.parametrize("target", sorted(TOFINO_STAGES))
def test_tofino_fits(real_builds: dict[str, Compile], target: str) -> None:
    b = real_builds[target]
    assert "Compiler Bug" not in b.output, b.output
    assert b.returncode == 0, b.output[-4000:]
    assert b.succeeded, "manifest.json: compilation_succeeded is not true"
    assert 0 < b.stage_count <= TOFINO_STAGES[target], b.stages
    assert _lanes(b) == list(range(_documented_k())), "the build is not at the documented K"
    warned = [line for line in b.output.splitlines() if "warning:" in line
              and "min_parse_depth_accept_loop will be unrolled" not in line]
    assert not warned, "\n".join(warned)      # README: the parser-unrolling notes only


def test_tofino_placement_follows_the_dependency_chain(real_builds: dict[str, Compile]) -> None:
    b = real_builds["tofino"]
    assert b.succeeded, b.output[-4000:]
    for short, stage in CHAIN_STAGE.items():
        where = b.stages[_name(short)]
        assert b.stage_of(_name(short)) == stage, f"{short} placed in {where}, the chain says {stage}"
    for i in _lanes(b):
        update = b.stage_of(f"{INGRESS}lanes.lane_{i}_update")
        result = b.stage_of(f"{INGRESS}lanes.lane_{i}_result")
        assert FIRST_LANE_STAGE <= update < result <= TOFINO_STAGES["tofino"] - 1, (i, update, result)
    placed = {t for t in b.stages if not re.search(r"\.lanes\.lane_\d+_(update|result)$", t)}
    assert placed == {_name(s) for s in CHAIN_STAGE}, "a table without an expected stage"


def test_tofino_stage_count_and_stateful_alus_are_as_documented(real_builds: dict[str, Compile]) -> None:
    """The README's stage count is the compiler's, and no stage runs more than 4 registers."""
    b = real_builds["tofino"]
    assert b.stage_count == _documented_stages(), b.stages
    assert all(b.stateful_alus(s) <= 4 for s in range(b.stage_count))
    # K lanes, slot_session, slot_chunk, 2 bitmaps, slot_count
    assert len(b.registers) == _documented_k() + 5
