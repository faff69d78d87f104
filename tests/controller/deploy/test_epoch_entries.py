"""The epoch contract on the controller side: one ``epoch_table`` entry per job and switch, derived
from the job's epoch (default 0), read back by ``installed_epoch``/``switch_epochs``, range-checked,
and carried into the manifest."""

from __future__ import annotations

import pytest

from controller.entries import epoch_entry, installed_epoch, switch_epochs
from controller.intent import WRITE_ORDER, SwitchState
from controller.placement import place
from controller.plan import intended_state, manifest_jobs
from controller.topology_file import load
from dhcwire.p4names import A_CURRENT_EPOCH, T_EPOCH


@pytest.fixture(scope="module")
def leafspine():
    topo = load("topologies/leafspine.yaml")
    return topo, place(topo)


def _aggregating(placement) -> dict[int, set[str]]:
    return {jp.job_id: {a.switch for a in jp.aggregators} for jp in placement.jobs if jp.root is not None}


def test_default_epoch_is_zero_on_every_switch_of_the_job(leafspine) -> None:
    topo, placement = leafspine
    states = intended_state(topo, placement)
    for job, switches in _aggregating(placement).items():
        for sw, st in states.items():
            entries = [e for e in st.table(T_EPOCH) if e.match_value("job_id") == job]
            if sw in switches:
                assert entries == [epoch_entry(job, 0)] and entries[0].owner == job
                assert entries[0].action == A_CURRENT_EPOCH and entries[0].params == ()
            else:
                assert entries == []
    assert switch_epochs(states) == {job: 0 for job in _aggregating(placement)}


def test_given_epoch_replaces_the_entry_and_reaches_the_manifest(leafspine) -> None:
    topo, placement = leafspine
    job = min(_aggregating(placement))
    states = intended_state(topo, placement, epochs={job: 37})
    for sw in _aggregating(placement)[job]:
        assert installed_epoch(states[sw], job) == 37
        assert epoch_entry(job, 0).key not in states[sw].entries
    assert switch_epochs(states)[job] == 37
    manifest = {j["job_id"]: j["epoch"] for j in manifest_jobs(topo, placement, epochs={job: 37})}
    assert manifest[job] == 37 and all(ep == 0 for j, ep in manifest.items() if j != job)


def test_epoch_out_of_range_is_refused(leafspine) -> None:
    topo, placement = leafspine
    job = min(_aggregating(placement))
    with pytest.raises(ValueError, match=f"job {job}: epoch 256 is outside 0..255"):
        intended_state(topo, placement, epochs={job: 256})
    with pytest.raises(ValueError, match="epoch -1"):
        epoch_entry(job, -1)


def test_disagreeing_switches_and_double_entries_are_errors() -> None:
    a, b = SwitchState("a"), SwitchState("b")
    a.add(epoch_entry(5, 1))
    b.add(epoch_entry(5, 2))
    with pytest.raises(ValueError, match="job 5: switches hold different epochs 1 on a, 2 on b"):
        switch_epochs({"a": a, "b": b})
    b.add(epoch_entry(5, 1))
    with pytest.raises(ValueError, match="job 5 has 2 epoch entries"):
        installed_epoch(b, 5)
    assert installed_epoch(SwitchState("c"), 5) is None


def test_epoch_entry_is_written_before_the_job_goes_live() -> None:
    assert WRITE_ORDER.index(T_EPOCH) < WRITE_ORDER.index("DhcIngress.dhc_index.job_table")
