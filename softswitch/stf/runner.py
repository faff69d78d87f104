"""Run a P4 program against an STF test file on the software target.

``python -m softswitch.stf PROGRAM.p4 TEST.stf`` (also ``softswitch stf ...``)
loads the program, executes the file's commands in order and compares the
packets the switch emits with the ``expect`` lines.  As in p4c's BMv2 runner,
expectations are matched per port, in order; an emitted packet without an
expectation, or an expectation never met, is a failure.  Comparison happens at
``wait``/``no_packet`` checkpoints and at the end of the file.

Expect patterns: hex digits, ``*`` for a nibble that may be anything, an
optional trailing ``$`` to require the exact length (otherwise the received
packet may be longer than the pattern, as in p4c).  ``expect <port>`` with no
data accepts any number of packets on that port until the next checkpoint.

Header comments set compile options: ``# defines: DHC_LANES=4 DEBUG`` and
``# cpu_port: 64``; ``-D``/``--cpu-port`` on the command line override them.
"""

from __future__ import annotations

import argparse
import operator
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..api import EntryNotFoundError, MeterConfig, Replica
from .names import ProgramNames, action_params, entry_match
from .syntax import (
    AddEntry,
    AddIndirect,
    CheckCounter,
    Checkpoint,
    Command,
    ExpectPacket,
    McGroup,
    McNodeAssociate,
    McNodeCreate,
    MeterGetRates,
    MeterSetRates,
    MirroringAdd,
    ProfileGroup,
    ProfileMember,
    RegisterRead,
    RegisterWrite,
    RemoveAll,
    SendPacket,
    SetDefault,
    StfFile,
    StfSyntaxError,
    load_stf,
)


@dataclass
class StfResult:
    """Outcome of one STF run.  ``failures`` are human-readable, each naming its STF line."""

    program: str
    stf: str
    failures: list[str] = field(default_factory=list)
    packets_sent: int = 0
    packets_received: int = 0
    packets_expected: int = 0
    packets_unobserved: int = 0  # sent to ports the file never names (p4c's runner has no interface there)

    @property
    def passed(self) -> bool:
        return not self.failures

    def report(self) -> str:
        head = (f"{'PASS' if self.passed else 'FAIL'} {self.stf} on {self.program}: "
                f"{self.packets_sent} sent, {self.packets_received} received, "
                f"{self.packets_expected} expected"
                + (f", {self.packets_unobserved} to unobserved ports" if self.packets_unobserved else ""))
        return "\n".join([head, *self.failures])


def _hex(data: bytes) -> str:
    return data.hex().upper()


def _group(text: str, width: int = 8) -> str:
    return " ".join(text[i:i + width] for i in range(0, len(text), width))


def compare_packet(exp: ExpectPacket, got: bytes) -> str | None:
    """``None`` if ``got`` matches; otherwise a diff showing where (nibble ``^`` markers)."""
    assert exp.pattern is not None
    pattern, received = exp.pattern, _hex(got)
    problems = []
    if len(received) < len(pattern):
        problems.append(f"too short: {len(got)} bytes, expected {len(pattern) // 2}")
    elif exp.exact_length and len(received) != len(pattern):
        problems.append(f"length {len(got)} bytes, expected exactly {len(pattern) // 2} ($)")
    marks = "".join(" " if i >= len(received) or p == "*" or p == received[i] else "^"
                    for i, p in enumerate(pattern))
    first = marks.find("^")
    if first >= 0:
        problems.append(f"differs from byte {first // 2} (nibble {first})")
    if not problems:
        return None
    text = ("; ".join(problems) + "\n"
            f"      expected: {_group(pattern)}\n"
            f"      received: {_group(received)}")
    if first >= 0:
        text += f"\n                {_group(marks).rstrip()}"
    return text


class _Run:
    """State of one STF execution against a loaded switch."""

    def __init__(self, switch: object, result: StfResult, observed: set[int] | None = None):
        self.sw = switch
        self.observed = observed  # ports whose output is checked (None: every port)
        self.names = ProgramNames(switch.p4info)
        self.result = result
        self.expected: dict[int, list[ExpectPacket]] = {}
        self.any_ports: set[int] = set()
        self.received: dict[int, list[tuple[int, bytes]]] = {}  # port -> [(stf line of packet, bytes)]
        self.nodes: list[tuple[int, tuple[int, ...]]] = []  # BMv2 node handles: index -> (rid, ports)
        self.groups: dict[int, list[int]] = {}  # group -> node handles
        self.inserts: list[tuple] = []  # what ``remove all`` undoes, oldest first
        self.handles: dict[str, tuple[str, dict, int | None]] = {}  # ``= NAME`` -> (table, match, prio)

    def fail(self, line: int, msg: str) -> None:
        self.result.failures.append(f"line {line}: {msg}")

    def execute(self, cmd: Command) -> None:
        handler = getattr(self, "do_" + type(cmd).__name__)
        try:
            handler(cmd)
        except (LookupError, ValueError) as exc:
            self.fail(cmd.line, str(exc))
        except Exception as exc:  # the switch refused a request: report it, keep going
            self.fail(cmd.line, f"{type(exc).__name__}: {exc}")

    # -- tables
    def do_AddEntry(self, cmd: AddEntry) -> None:
        table = self.names.table(cmd.table)
        action = self.names.action(table, cmd.action.name)
        match = entry_match(table, self.names, [(k.name, k.text) for k in cmd.keys])
        params = action_params(action, list(cmd.action.args))
        priority = cmd.priority
        if table.needs_priority and priority is None:
            raise ValueError(f"table {table.name} has ternary/range/optional keys: give a priority")
        if not table.needs_priority:
            priority = None
        elif priority is not None:  # p4c's runner gives BMv2 10000 - p: 0 is valid, higher wins;
            priority += 1           # P4Runtime wants > 0, so p + 1 keeps the order
        self.sw.table_add(table.name, action.name, match, params, priority)
        self._inserted(cmd.handle, table.name, match, priority)

    def _inserted(self, handle: str | None, table: str, match: dict, priority: int | None) -> None:
        self.inserts.append(("entry", table, match, priority))
        if handle is not None:
            self.handles[handle] = (table, match, priority)

    def do_RemoveAll(self, cmd: RemoveAll) -> None:
        """p4c's STF runner undoes its inserts (``undo_write_requests``: newest first, as deletes);
        defaults stay as set.  What the file already deleted itself is skipped."""
        for item in reversed(self.inserts):
            kind, *what = item
            if kind == "entry":
                try:
                    self.sw.table_delete(*what)
                except EntryNotFoundError:
                    pass
            elif kind == "group" and what[1] in self.sw.act_prof_groups(what[0]):
                self.sw.act_prof_delete_group(*what)
            elif kind == "member" and what[1] in self.sw.act_prof_members(what[0]):
                self.sw.act_prof_delete_member(*what)
        self.inserts.clear()
        self.handles.clear()
    def do_AddIndirect(self, cmd: AddIndirect) -> None:
        table = self.names.table(cmd.table)
        match = entry_match(table, self.names, [(k.name, k.text) for k in cmd.keys])
        if table.needs_priority and cmd.priority is None:
            raise ValueError(f"table {table.name} has ternary/range/optional keys: give a priority")
        priority = cmd.priority if table.needs_priority else None
        self.sw.table_add_indirect(table.name, match, cmd.member, cmd.group, priority)
        self._inserted(cmd.handle, table.name, match, priority)

    def do_ProfileMember(self, cmd: ProfileMember) -> None:
        prof, table = self.names.profile(cmd.profile)
        if cmd.op == "delete":
            self.sw.act_prof_delete_member(prof, cmd.member)
            return
        action = self.names.action(table, cmd.action.name)
        params = action_params(action, list(cmd.action.args))
        do = self.sw.act_prof_add_member if cmd.op == "create" else self.sw.act_prof_modify_member
        do(prof, cmd.member, action.name, params)
        if cmd.op == "create":
            self.inserts.append(("member", prof, cmd.member))

    def do_ProfileGroup(self, cmd: ProfileGroup) -> None:
        prof, _table = self.names.profile(cmd.profile)
        if cmd.op == "create":
            self.sw.act_prof_create_group(prof, cmd.group, cmd.members)
            self.inserts.append(("group", prof, cmd.group))
        elif cmd.op == "delete":
            self.sw.act_prof_delete_group(prof, cmd.group)
        else:
            members = self.sw.act_prof_groups(prof).get(cmd.group)
            if members is None:
                raise ValueError(f"action profile {prof}: no group {cmd.group}")
            (mid,) = cmd.members
            if cmd.op == "add":
                if mid in members:
                    raise ValueError(f"member {mid} is already in group {cmd.group}")
                members.append(mid)
            else:
                if mid not in members:
                    raise ValueError(f"member {mid} is not in group {cmd.group}")
                members.remove(mid)
            self.sw.act_prof_modify_group(prof, cmd.group, members)

    def do_SetDefault(self, cmd: SetDefault) -> None:
        table = self.names.table(cmd.table)
        action = self.names.action(table, cmd.action.name)
        self.sw.table_set_default(table.name, action.name, action_params(action, list(cmd.action.args)))

    # -- packets
    def do_SendPacket(self, cmd: SendPacket) -> None:
        self.result.packets_sent += 1
        for port, data in self.sw.process(cmd.port, cmd.data):
            if self.observed is not None and port not in self.observed:
                self.result.packets_unobserved += 1
                continue
            self.result.packets_received += 1
            self.received.setdefault(port, []).append((cmd.line, bytes(data)))

    def do_ExpectPacket(self, cmd: ExpectPacket) -> None:
        if cmd.pattern is None:
            self.any_ports.add(cmd.port)
        else:
            self.result.packets_expected += 1
            self.expected.setdefault(cmd.port, []).append(cmd)

    def do_Checkpoint(self, cmd: Checkpoint) -> None:
        self.check_outputs(f"at {cmd.kind} (line {cmd.line})")

    def check_outputs(self, where: str) -> None:
        """Compare everything received with everything expected so far, then start afresh."""
        for port in sorted(set(self.expected) | set(self.received)):
            exps, gots = self.expected.get(port, []), self.received.get(port, [])
            if port in self.any_ports and not exps:
                continue
            for exp, (src, got) in zip(exps, gots, strict=False):
                diff = compare_packet(exp, got)
                if diff:
                    self.fail(exp.line, f"packet on port {port} (sent at line {src}) {diff}")
            for exp in exps[len(gots):]:
                self.fail(exp.line, f"expected packet on port {port} never came ({where})\n"
                          f"      expected: {_group(exp.pattern or '')}")
            if port not in self.any_ports:
                for src, got in gots[len(exps):]:
                    self.fail(src, f"unexpected packet on port {port} ({where})\n"
                              f"      received: {_group(_hex(got))}")
        self.expected.clear()
        self.received.clear()
        self.any_ports.clear()

    # -- replication engine
    def do_MirroringAdd(self, cmd: MirroringAdd) -> None:
        self.sw.clone_session_set(cmd.session, [Replica(cmd.port, 0)])

    def _push_group(self, group: int) -> None:
        replicas = [Replica(port, rid) for h in self.groups[group] for port in self.nodes[h][1]
                    for rid in [self.nodes[h][0]]]
        self.sw.mc_group_set(group, replicas)

    def do_McGroup(self, cmd: McGroup) -> None:
        if cmd.create:
            if cmd.group in self.groups:
                raise ValueError(f"multicast group {cmd.group} already exists")
            self.groups[cmd.group] = []
            self._push_group(cmd.group)
        else:
            if self.groups.pop(cmd.group, None) is None:
                raise ValueError(f"multicast group {cmd.group} does not exist")
            self.sw.mc_group_delete(cmd.group)

    def do_McNodeCreate(self, cmd: McNodeCreate) -> None:
        self.nodes.append((cmd.rid, cmd.ports))

    def do_McNodeAssociate(self, cmd: McNodeAssociate) -> None:
        if cmd.group not in self.groups:
            raise ValueError(f"multicast group {cmd.group} does not exist (mc_mgrp_create it first)")
        if not 0 <= cmd.node < len(self.nodes):
            raise ValueError(f"no multicast node with handle {cmd.node} ({len(self.nodes)} created)")
        members = self.groups[cmd.group]
        if cmd.associate:
            if cmd.node in members:
                raise ValueError(f"node {cmd.node} is already in group {cmd.group}")
            members.append(cmd.node)
        else:
            if cmd.node not in members:
                raise ValueError(f"node {cmd.node} is not in group {cmd.group}")
            members.remove(cmd.node)
        self._push_group(cmd.group)

    # -- externs
    def do_RegisterWrite(self, cmd: RegisterWrite) -> None:
        self.sw.register_write(self.names.register(cmd.register), cmd.index, cmd.value)

    def do_RegisterRead(self, cmd: RegisterRead) -> None:
        name = self.names.register(cmd.register)
        got = self.sw.register_read(name, cmd.index)
        if cmd.expected is not None and got != cmd.expected:
            self.fail(cmd.line, f"register {name}[{cmd.index}] = {got} ({got:#x}), "
                      f"expected {cmd.expected} ({cmd.expected:#x})")

    def do_MeterSetRates(self, cmd: MeterSetRates) -> None:
        """simple_switch_CLI rates are units per microsecond; the API takes units per second."""
        (cir, cburst), (pir, pburst) = cmd.rates
        cfg = MeterConfig(round(cir * 1e6), cburst, round(pir * 1e6), pburst)
        self.sw.meter_set_config(self.names.meter(cmd.meter), cmd.index, cfg)

    def do_MeterGetRates(self, cmd: MeterGetRates) -> None:
        self.sw.meter_get_config(self.names.meter(cmd.meter), cmd.index)

    _OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}

    def do_CheckCounter(self, cmd: CheckCounter) -> None:
        if isinstance(cmd.index, str):  # c($NAME): the direct counter of a named entry
            name, owner = self.names.direct_counter(cmd.counter)
            entry = self.handles.get(cmd.index)
            if entry is None:
                known = ", ".join(sorted(self.handles)) or "none"
                raise LookupError(f"no entry named {cmd.index!r} (add ... = NAME; named: {known})")
            if entry[0] != owner:
                raise LookupError(f"entry {cmd.index} is in table {entry[0]}, direct counter {name} "
                                  f"belongs to {owner}")
            packets, bytes_ = self.sw.direct_counter_read(*entry)
            where = f"{name}(${cmd.index})"
        else:
            name = self.names.counter(cmd.counter)
            packets, bytes_ = self.sw.counter_read(name, cmd.index)
            where = f"{name}[{cmd.index}]"
        got = packets if cmd.kind == "packets" else bytes_
        if not self._OPS[cmd.op](got, cmd.value):
            self.fail(cmd.line, f"counter {where} {cmd.kind} = {got}, expected {cmd.op} {cmd.value}")


def observed_ports(stf: StfFile) -> set[int]:
    """The ports p4c's BMv2 runner gives an interface: those a ``packet`` or ``expect`` names.
    Output to any other port has nowhere to go there, so it is not checked."""
    return {c.port for c in stf.commands if isinstance(c, (SendPacket, ExpectPacket))}


def run_stf_file(switch: object, stf: StfFile, program: str = "<loaded>",
                 all_ports: bool = False) -> StfResult:
    """Execute a parsed STF file against an already loaded switch.  As p4c's runner, output is
    checked on the ports the file names; ``all_ports`` checks every port (stricter: a packet sent
    anywhere unexpected fails), as the project's own suites run."""
    result = StfResult(program, stf.path)
    run = _Run(switch, result, None if all_ports else observed_ports(stf))
    for cmd in stf.commands:
        run.execute(cmd)
    run.check_outputs("at end of file")
    return result


def run_stf(program_path: str, stf_path: str, defines: dict[str, str] | None = None,
            include_dirs: Sequence[str] = (), cpu_port: int | None = None,
            backend: str | None = None, all_ports: bool = False) -> StfResult:
    """Load ``program_path`` and run ``stf_path`` on it (``all_ports``: see ``run_stf_file``).

    ``defines`` are merged over the STF file's ``# defines:`` header (arguments win);
    ``cpu_port`` overrides its ``# cpu_port:`` header.  A compile error or a
    malformed STF file raises (``P4CompileError``, ``StfSyntaxError``): they are
    not test outcomes.
    """
    from .. import backend as backends  # the core; imported late so parsing works without it

    stf = load_stf(stf_path)
    merged = {**stf.defines, **(defines or {})}
    port = cpu_port if cpu_port is not None else stf.cpu_port
    switch = backends.load(program_path, backend, defines=merged, include_dirs=list(include_dirs),
                           cpu_port=port)
    return run_stf_file(switch, stf, program_path, all_ports)


def _parse_define(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"bad define {text!r}")
    return name, value or "1"


def main(argv: list[str] | None = None) -> int:
    """``softswitch stf PROGRAM.p4 TEST.stf``: 0 on pass, 1 on mismatch, 2 on bad input."""
    ap = argparse.ArgumentParser(prog="softswitch stf", description="Run an STF test on the softswitch.")
    ap.add_argument("program", help="P4_16 v1model program")
    ap.add_argument("stf", help="STF test file")
    ap.add_argument("-D", dest="defines", action="append", type=_parse_define, default=[],
                    metavar="NAME[=VALUE]", help="preprocessor define (overrides the STF header)")
    ap.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    ap.add_argument("--cpu-port", type=int, default=None)
    ap.add_argument("-q", "--quiet", action="store_true", help="print only failures")
    ap.add_argument("--all-ports", action="store_true",
                    help="check output on every port, not only the ports the file names (p4c's runner)")
    args = ap.parse_args(argv)
    from ..api import P4CompileError

    try:
        result = run_stf(args.program, args.stf, dict(args.defines), args.include_dirs, args.cpu_port,
                         all_ports=args.all_ports)
    except (P4CompileError, StfSyntaxError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"error: {args.stf}: not an STF text file (byte {exc.start} is not UTF-8)", file=sys.stderr)
        return 2
    if not result.passed or not args.quiet:
        print(result.report(), file=sys.stdout if result.passed else sys.stderr)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
