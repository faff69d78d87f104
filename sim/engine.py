"""Runs a ``PlatformSpec`` and job programs on SimGrid (3.32, Debian's python3-simgrid).

SimGrid does the discrete-event work: a flow-level network model (CM02, max-min fair sharing,
no TCP or latency correction factors, no cross-traffic: ``CONFIG``) over split-duplex links,
one actor per job that starts its flows with ``Comm.sendto_init`` (host to host, no mailbox),
waits for all of them and sleeps through host compute.  Rate bounds are links on the route
(SimGrid 3.32 refuses ``Comm.set_rate`` on a ``sendto_init`` comm): a host's packet-processing
limit is a split-duplex link per host (up: sending, down: receiving) that all its flows share;
a job's window bound is a private link on the route of each of its tree edges.  One SimGrid
engine per process, so ``run`` is called in a fresh process (``sim/runner.py``).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

from sim.program import EngineResult, JobProgram, PlatformSpec, Step

#: pure max-min sharing: a flow of s bytes over a route of latency L and free bandwidth B
#: takes L + s / B, the closed form the validation checks.
CONFIG = ("network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0",
          "network/latency-factor:1", "network/bandwidth-factor:1", "network/weight-S:0")
#: bandwidth of the pseudo-link that carries a switch's pipeline latency (never a bottleneck)
PIPE_RATE = 1e15


@contextmanager
def _quiet_stderr():
    """SimGrid logs its configuration at import and start-up on fd 2; keep stderr for errors."""
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)


def _build(sg, spec: PlatformSpec) -> dict:
    zone = sg.NetZone.create_full_zone("fabric")
    hosts = {n: zone.create_host(n, 1e9) for n in spec.nodes}
    links = []
    for ln in spec.links:
        link = zone.create_split_duplex_link(ln.name, ln.rate)
        link.set_latency(ln.latency)
        link.seal()
        links.append(link)
    pipes = {}
    for sw in spec.switches:
        pipe = zone.create_link(f"pipe:{sw}", PIPE_RATE)
        pipe.set_latency(spec.pipeline_s)
        pipe.seal()
        pipes[sw] = pipe
    stacks = {}
    for host, rate in spec.host_rate.items():
        stack = zone.create_split_duplex_link(f"cpu:{host}", rate)   # up: sending, down: receiving
        stack.set_latency(0.0)
        stack.seal()
        stacks[host] = stack
    machine = None
    if spec.machine_rate > 0:
        machine = zone.create_link("cpu:machine", spec.machine_rate)
        machine.set_latency(0.0)
        machine.seal()
    up, down = sg.LinkInRoute.Direction.UP, sg.LinkInRoute.Direction.DOWN
    for (src, dst), hops in spec.routes.items():
        route = [sg.LinkInRoute(links[i], up if forward else down) for i, forward in hops]
        route += [sg.LinkInRoute(pipes[sw]) for sw in spec.entered.get((src, dst), ())]
        if src in stacks:
            route.append(sg.LinkInRoute(stacks[src], up))
        if dst in stacks:
            route.append(sg.LinkInRoute(stacks[dst], down))
        if machine is not None:   # a link listed k times is consumed k times (SimGrid's LMM)
            route += [sg.LinkInRoute(machine)] * spec.stages.get((src, dst), 0)
        if (src, dst) in spec.caps:
            cap = zone.create_link(f"cap:{src}>{dst}", spec.caps[(src, dst)])
            cap.set_latency(0.0)
            cap.seal()
            route.append(sg.LinkInRoute(cap))
        zone.add_route(hosts[src].netpoint, hosts[dst].netpoint, None, None, route, False)
    zone.seal()
    return hosts


def _run_step(sg, hosts: dict, step: Step, counter: list[int]) -> None:
    start = sg.Engine.clock
    comms = []
    for delay in sorted({f.delay for f in step.flows}):
        if delay > 0:
            sg.this_actor.sleep_until(start + delay)
        for f in step.flows:
            if f.delay == delay:
                comm = sg.Comm.sendto_init(hosts[f.src], hosts[f.dst])
                comm.set_payload_size(max(1, int(round(f.bytes))))
                comms.append(comm.start())
    sg.Comm.wait_all(comms)
    counter[0] += len(comms)
    if step.compute_s > 0:
        sg.this_actor.sleep_for(step.compute_s)


def _driver(sg, hosts: dict, program: JobProgram, finish: dict, counter: list[int]):
    def body() -> None:
        for step in program.steps:
            began = sg.Engine.clock
            for _ in range(step.simulate):
                _run_step(sg, hosts, step, counter)
            if step.repeat > step.simulate:
                sg.this_actor.sleep_for((sg.Engine.clock - began) * (step.repeat - step.simulate)
                                        / step.simulate)
        finish[program.job_id] = sg.Engine.clock
    return body


def run(spec: PlatformSpec, programs: list[JobProgram]) -> EngineResult:
    """Simulate every job's program at once on ``spec``; seconds until each job is done."""
    wall = time.perf_counter()
    with _quiet_stderr():
        import simgrid as sg
        engine = sg.Engine(["dhc-sim", "--log=root.thresh:critical",
                            *(f"--cfg={c}" for c in CONFIG)])
    hosts = _build(sg, spec)
    finish: dict[int, float] = {}
    counter = [0]
    anchor = hosts[spec.nodes[0]]
    for program in programs:
        sg.Actor.create(f"job{program.job_id}", anchor, _driver(sg, hosts, program, finish, counter))
    engine.run()
    missing = [p.job_id for p in programs if p.job_id not in finish]
    if missing:
        raise RuntimeError(f"simulation ended before jobs {missing} finished")
    return EngineResult(finish, counter[0], time.perf_counter() - wall)


def main() -> int:
    """``python -m sim.engine``: unpickle (spec, programs) from stdin, pickle the result to stdout."""
    import pickle
    import sys

    spec, programs = pickle.load(sys.stdin.buffer)
    result = run(spec, programs)
    sys.stdout.buffer.write(pickle.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
