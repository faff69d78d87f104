"""Parse p4c's simple-test-framework (STF) files into command records.

The grammar follows what p4c's BMv2 STF runner accepts (one command per line,
``#`` starts a comment), plus the commands it forwards to ``simple_switch_CLI``
(``mirroring_add``, ``mc_*``) and register/counter checks:

    add <table> [<priority>] <key>:<value> ... <action>(<param>:<value>, ...) [= <handle>]
    remove all                    (deletes every entry, member and group the file added, newest
                                   first, as p4c's STF runner undoes its inserts)
    setdefault <table> <action>(<param>:<value>, ...)
    packet <port> [<hex bytes ...>]   (no bytes: an empty packet, as p4c's runner sends it;
                                      an odd last digit is a byte of its own, as there)
    expect <port> [<hex with * nibbles ...> [$]]   (compared nibble by nibble)
    no_packet | wait
    mirroring_add <session> <port>
    mc_mgrp_create <group>        mc_mgrp_destroy <group>
    mc_node_create <rid> <port> ...   (node handles are 0, 1, 2... in creation order, as BMv2)
    mc_node_associate <group> <node handle>   mc_node_dissociate <group> <node handle>
    register_write <register> <index> <value>
    register_read <register> <index>        (p4c's form: reads, checks nothing)
    check_counter <counter>(<index>) [packets|bytes] [== != < <= > >=] <number>
    check_counter <direct counter>($<handle>) ...   (the counter of the entry added '= <handle>')
    meter_set_rates <meter> <index> <cir>:<cburst> <pir>:<pburst>
    meter_array_set_rates <meter> <cir>:<cburst> <pir>:<pburst>   (every cell)
    meter_get_rates <meter> <index>         (p4c's form: reads, checks nothing)
      (rates in packets or bytes per microsecond, as simple_switch_CLI takes them)

Action profiles and selectors (p4c's runner has no command for them; extension only, below):

    act_prof_create_member <profile> <member id> <action>(<param>:<value>, ...)
    act_prof_modify_member <profile> <member id> <action>(<param>:<value>, ...)
    act_prof_delete_member <profile> <member id>
    act_prof_create_group <profile> <group id> [<member id> ...]
    act_prof_add_member_to_group <profile> <member id> <group id>   (and _remove_member_from_group)
    act_prof_delete_group <profile> <group id>
    add <table> [<priority>] <key>:<value> ... member(<member id>)   (or group(<group id>))

The names are simple_switch_CLI's; ids are the control plane's (P4Runtime member/group ids),
not BMv2 handles.

Keys: exact ``0x0a``/``10``/``10.0.0.1``; ternary ``v&&&m``, or hex/binary digits with
``*`` for don't-care digits (as p4c: the mask covers the digits written, so ``0x0a``
on a 16-bit field matches only the low byte), ``*`` alone = wildcard; lpm ``v/len``,
``10.0.0.0/8`` or ``0x0a**``; range ``lo->hi`` or ``lo..hi``; optional ``v`` or ``*``.
Wildcard keys may be left out.  Priority: a number >= 0, a higher number wins
(p4c's runner gives BMv2 ``10000 - p``; here it becomes P4Runtime priority ``p + 1``).  It is
required for tables with ternary, range or optional keys and ignored for the others.

Header lines ``# defines: NAME=VALUE NAME2`` and ``# cpu_port: N`` carry
compile options for the program under test (see ``StfFile``).

Softswitch extension, invisible to p4c's runner (a comment there): a line
``#!softswitch <command>`` is a command only this runner executes.  Its uses are
the register check ``#!softswitch register_read <register> <index> <expected value>``
(and the action profile commands above);
a plain ``register_read`` with an expected value is refused, so a file that p4c's
runner would misread cannot be written by accident.  ``p4c_dialect_problems`` lists
what in a file p4c's runner would not parse (lpm ``v/len`` keys, ``&&&`` masks,
dotted-quad addresses, expected register values outside the extension).

This module only parses; name resolution against a loaded program lives in
``stf_names`` and execution in ``stf``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

EXTENSION = "#!softswitch"


class StfSyntaxError(ValueError):
    """A malformed STF line; ``str`` names file, line and the problem."""

    def __init__(self, reason: str, file: str = "<stf>", line: int = 0):
        self.reason, self.file, self.line = reason, file, line
        super().__init__(f"{file}:{line}: {reason}")


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class KeyValue:
    """A key field as written: ``name`` and the raw value text (parsed later, width known)."""

    name: str
    text: str


@dataclass(frozen=True)
class ActionCall:
    name: str
    args: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class AddEntry:
    line: int
    table: str
    keys: tuple[KeyValue, ...]
    action: ActionCall
    priority: int | None = None
    handle: str | None = None     # ``= NAME``: the entry's name for ``check_counter c($NAME)``


@dataclass(frozen=True)
class RemoveAll:
    """``remove all``: undo every insert of the file so far (p4c's STF grammar)."""

    line: int


@dataclass(frozen=True)
class SetDefault:
    line: int
    table: str
    action: ActionCall


@dataclass(frozen=True)
class SendPacket:
    line: int
    port: int
    data: bytes


@dataclass(frozen=True)
class ExpectPacket:
    """``pattern`` is upper-case hex with ``*`` nibbles; ``None`` means any packets on the port."""

    line: int
    port: int
    pattern: str | None
    exact_length: bool = False


@dataclass(frozen=True)
class Checkpoint:
    """``wait`` or ``no_packet``: everything sent so far must be accounted for by expects."""

    line: int
    kind: str


@dataclass(frozen=True)
class MirroringAdd:
    line: int
    session: int
    port: int


@dataclass(frozen=True)
class McGroup:
    """``mc_mgrp_create`` (create=True) or ``mc_mgrp_destroy``."""

    line: int
    group: int
    create: bool


@dataclass(frozen=True)
class McNodeCreate:
    line: int
    rid: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class McNodeAssociate:
    """``mc_node_associate`` (associate=True) or ``mc_node_dissociate``."""

    line: int
    group: int
    node: int
    associate: bool


@dataclass(frozen=True)
class RegisterWrite:
    line: int
    register: str
    index: int
    value: int


@dataclass(frozen=True)
class RegisterRead:
    line: int
    register: str
    index: int
    expected: int | None = None   # None: p4c's plain read; a value only via ``#!softswitch``


@dataclass(frozen=True)
class CheckCounter:
    line: int
    counter: str
    index: int | str  # a cell index, or the name an ``add ... = NAME`` gave an entry
    kind: str  # "packets" or "bytes"
    op: str
    value: int


@dataclass(frozen=True)
class ProfileMember:
    """``act_prof_create_member`` / ``act_prof_modify_member`` (``action`` given) or
    ``act_prof_delete_member`` of an action profile or selector (extension)."""

    line: int
    op: str  # create | modify | delete
    profile: str
    member: int
    action: ActionCall | None = None


@dataclass(frozen=True)
class ProfileGroup:
    """``act_prof_create_group`` (with its members), ``act_prof_delete_group``,
    ``act_prof_add_member_to_group`` / ``act_prof_remove_member_from_group`` (extension)."""

    line: int
    op: str  # create | delete | add | remove
    profile: str
    group: int
    members: tuple[int, ...] = ()


@dataclass(frozen=True)
class AddIndirect:
    """``add TABLE [PRIO] KEYS... member(ID)`` or ``group(ID)``: an indirect entry (extension)."""

    line: int
    table: str
    keys: tuple[KeyValue, ...]
    member: int | None
    group: int | None
    priority: int | None = None
    handle: str | None = None


@dataclass(frozen=True)
class MeterSetRates:
    line: int
    meter: str
    index: int | None                     # None: meter_array_set_rates (every cell)
    rates: tuple[tuple[float, int], ...]  # (units per microsecond, burst): committed, peak


@dataclass(frozen=True)
class MeterGetRates:
    line: int
    meter: str
    index: int


Command = (AddEntry | RemoveAll | SetDefault | SendPacket | ExpectPacket | Checkpoint | MirroringAdd
           | McGroup | McNodeCreate | McNodeAssociate | RegisterWrite | RegisterRead | CheckCounter
           | ProfileMember | ProfileGroup | AddIndirect | MeterSetRates | MeterGetRates)


@dataclass
class StfFile:
    """A parsed STF file: its commands and the compile options from its header comments."""

    path: str
    commands: list[Command] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    cpu_port: int | None = None


# ---------------------------------------------------------------- values

_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*)$")


def parse_number(text: str) -> int:
    """Decimal, 0x hex, 0b binary or 0o octal; underscores allowed as separators."""
    t = text.strip()
    if not _INT_RE.match(t):
        raise ValueError(f"not a number: {text!r}")
    return int(t.replace("_", ""), 0)


_HEX_DIGITS = set("0123456789abcdefABCDEF")


def _packet_hex(words: list[str], allow_wild: bool) -> str:
    """Join hex words, check characters, return upper-case text (an expected pattern with an
    odd number of digits is compared nibble by nibble, as p4c's runner compares it)."""
    text = "".join(words)
    bad = {c for c in text if c not in _HEX_DIGITS and not (allow_wild and c == "*")}
    if bad:
        raise ValueError(f"bad character(s) {''.join(sorted(bad))!r} in packet data")
    return text.upper()


def _packet_bytes(words: list[str]) -> bytes:
    """Packet data as p4c's runner sends it: hex pairs, an odd last digit is one byte
    of its own (``... 10 0`` sends ``10 00``), as its ``HexToByte`` reads it."""
    text = _packet_hex(words, allow_wild=False)
    if len(text) % 2:
        text = text[:-1] + "0" + text[-1]
    return bytes.fromhex(text)


# ---------------------------------------------------------------- commands

_CALL_RE = re.compile(r"^([A-Za-z_][\w.$\[\]]*)\s*\((.*)\)$", re.S)
_CHECK_COUNTER_RE = re.compile(
    r"^([A-Za-z_][\w.$\[\]]*)\s*\(\s*([^)]*?)\s*\)\s*(?:(packets|bytes)\s*(==|!=|<=|>=|<|>)\s*(\S+))?$")
_HEADER_RE = re.compile(r"^#\s*(defines|cpu_port)\s*:\s*(.*)$")


def _parse_call(text: str) -> ActionCall:
    m = _CALL_RE.match(text.strip())
    if not m:
        raise ValueError(f"expected an action call like act(p:1), got {text!r}")
    args: list[tuple[str, int]] = []
    body = m.group(2).strip()
    if body:
        for part in body.split(","):
            if ":" not in part:
                raise ValueError(f"action argument {part.strip()!r} is not name:value")
            name, value = (s.strip() for s in part.split(":", 1))
            try:
                args.append((name, parse_number(value)))
            except ValueError:
                raise ValueError(f"action argument {name}: {value!r} is not a number") from None
    return ActionCall(m.group(1), tuple(args))


def _parse_add(line: int, rest: str, extension: bool = False) -> AddEntry:
    if "(" not in rest:
        raise ValueError("add needs an action call, e.g. add tbl key:1 act(p:2)")
    head, call = rest.split("(", 1)
    call_words = head.split()
    if len(call_words) < 2:
        raise ValueError("add needs a table name and an action")
    action_name = call_words[-1]
    tail = call.rsplit(")", 1)
    if len(tail) != 2:
        raise ValueError("unbalanced parenthesis in action call")
    after = tail[1].strip()
    handle_m = re.fullmatch(r"=\s*([A-Za-z_]\w*)", after)
    if after and not handle_m:
        raise ValueError(f"unexpected text after the action call: {after!r} (want '= NAME')")
    handle = handle_m.group(1) if handle_m else None
    if action_name in ("member", "group") and re.fullmatch(r"\s*\w+\s*", tail[0]):
        if not extension:
            raise ValueError(f"add ... {action_name}(N) is a softswitch extension: write "
                             f"'{EXTENSION} add {rest.strip()}'")
        action = ActionCall(action_name, (("id", parse_number(tail[0])),))
    else:
        action = _parse_call(f"{action_name}({tail[0]})")
    table, *items = call_words[:-1]
    priority = None
    if items and re.fullmatch(r"[0-9]+", items[0]):
        priority = int(items.pop(0))
    keys = []
    for item in items:
        if ":" not in item:
            raise ValueError(f"key {item!r} is not field:value")
        name, value = item.split(":", 1)
        if not name or not value:
            raise ValueError(f"key {item!r} is not field:value")
        keys.append(KeyValue(name, value))
    return AddEntry(line, table, tuple(keys), action, priority, handle)


def _indirect(e: AddEntry) -> AddEntry | AddIndirect:
    """An ``add`` whose "action" is ``member(ID)`` or ``group(ID)``: an indirect entry."""
    if e.action.name not in ("member", "group") or [n for n, _ in e.action.args] != ["id"]:
        return e
    ref = e.action.args[0][1]
    return AddIndirect(e.line, e.table, e.keys, ref if e.action.name == "member" else None,
                       ref if e.action.name == "group" else None, e.priority, e.handle)


def _parse_profile(line: int, cmd: str, args: list[str], rest: str) -> ProfileMember | ProfileGroup:
    """The simple_switch_CLI-named profile commands, with control-plane ids instead of handles."""
    if cmd in ("act_prof_create_member", "act_prof_modify_member"):
        if len(args) < 3:
            raise ValueError(f"{cmd} takes: profile member_id action(param:value, ...)")
        (mid,) = _ints(args[1:2], ["member_id"], cmd)
        call = rest.split(None, 2)[2]
        return ProfileMember(line, cmd.split("_")[2], args[0], mid, _parse_call(call))
    if cmd == "act_prof_delete_member":
        (mid,) = _ints(args[1:], ["member_id"], cmd)
        return ProfileMember(line, "delete", args[0], mid)
    if cmd == "act_prof_create_group":
        if len(args) < 2:
            raise ValueError(f"{cmd} takes: profile group_id [member_id ...]")
        nums = _ints(args[1:], ["group_id"] + ["member_id"] * (len(args) - 2), cmd)
        return ProfileGroup(line, "create", args[0], nums[0], tuple(nums[1:]))
    if cmd == "act_prof_delete_group":
        (gid,) = _ints(args[1:], ["group_id"], cmd)
        return ProfileGroup(line, "delete", args[0], gid)
    if cmd in ("act_prof_add_member_to_group", "act_prof_remove_member_from_group"):
        mid, gid = _ints(args[1:], ["member_id", "group_id"], cmd)
        return ProfileGroup(line, "add" if "_add_" in cmd else "remove", args[0], gid, (mid,))
    raise ValueError(f"unknown STF command {cmd!r}")


def _ints(words: list[str], names: list[str], cmd: str) -> list[int]:
    if len(words) != len(names):
        raise ValueError(f"{cmd} takes {len(names)} argument(s): {' '.join(names)}")
    out = []
    for w, n in zip(words, names, strict=True):
        try:
            out.append(parse_number(w))
        except ValueError:
            raise ValueError(f"{cmd}: {n} {w!r} is not a number") from None
    return out


def parse_command(line: int, text: str, extension: bool = False) -> Command | None:
    """Parse one comment-free line (``extension``: it came from ``#!softswitch``); ``None`` for a
    blank line.  Raises ValueError."""
    words = text.split()
    if not words:
        return None
    cmd, args = words[0].lower(), words[1:]
    rest = text.strip()[len(words[0]):].strip()
    if cmd == "add":
        entry = _parse_add(line, rest, extension)
        return _indirect(entry) if extension else entry
    if cmd.startswith("act_prof_"):
        if not extension:
            raise ValueError(f"{cmd} is a softswitch extension: write '{EXTENSION} {text.strip()}'")
        return _parse_profile(line, cmd, args, rest)
    if cmd == "remove":
        if [a.lower() for a in args] != ["all"]:
            raise ValueError("remove takes: all (p4c's STF grammar removes all entries only)")
        return RemoveAll(line)
    if cmd == "setdefault":
        if not args:
            raise ValueError("setdefault needs a table and an action call")
        return SetDefault(line, args[0], _parse_call(rest[len(args[0]):]))
    for part in (_packet_command, _multicast_command, _state_command):
        command = part(line, cmd, args, rest, extension)
        if command is not None:
            return command
    raise ValueError(f"unknown STF command {words[0]!r}")


def _packet_command(line: int, cmd: str, args: list[str], rest: str, extension: bool) -> Command | None:
    """``packet``, ``expect``, ``wait``, ``no_packet``; None for another command."""
    if cmd == "packet":
        if not args:
            raise ValueError("packet needs a port (and data; p4c's runner also sends an empty one)")
        (port,) = _ints(args[:1], ["port"], cmd)
        return SendPacket(line, port, _packet_bytes(args[1:]))
    if cmd == "expect":
        if not args:
            raise ValueError("expect needs a port")
        (port,) = _ints(args[:1], ["port"], cmd)
        data = args[1:]
        exact = False
        if data and data[-1].endswith("$"):
            exact = True
            data[-1] = data[-1][:-1]
        pattern = _packet_hex(data, allow_wild=True) if data else None
        if pattern == "" or (pattern is None and exact):
            raise ValueError("expect with '$' needs packet data")
        return ExpectPacket(line, port, pattern, exact)
    if cmd in ("wait", "no_packet"):
        if args:
            raise ValueError(f"{cmd} takes no arguments")
        return Checkpoint(line, cmd)
    return None


def _multicast_command(line: int, cmd: str, args: list[str], rest: str, extension: bool) -> Command | None:
    """Mirroring sessions and multicast groups; None for another command."""
    if cmd == "mirroring_add":
        session, port = _ints(args, ["session", "port"], cmd)
        return MirroringAdd(line, session, port)
    if cmd in ("mc_mgrp_create", "mc_mgrp_destroy"):
        (group,) = _ints(args, ["group"], cmd)
        return McGroup(line, group, cmd == "mc_mgrp_create")
    if cmd == "mc_node_create":
        if len(args) < 2:
            raise ValueError("mc_node_create takes: rid port [port ...]")
        nums = _ints(args, ["rid"] + ["port"] * (len(args) - 1), cmd)
        return McNodeCreate(line, nums[0], tuple(nums[1:]))
    if cmd in ("mc_node_associate", "mc_node_dissociate"):
        group, node = _ints(args, ["group", "node"], cmd)
        return McNodeAssociate(line, group, node, cmd == "mc_node_associate")
    return None


def _state_command(line: int, cmd: str, args: list[str], rest: str, extension: bool) -> Command | None:
    """Registers, counters and meters; None for another command."""
    if cmd == "register_write":
        if len(args) != 3:
            raise ValueError("register_write takes: register index value")
        index, value = _ints(args[1:], ["index", "value"], cmd)
        return RegisterWrite(line, args[0], index, value)
    if cmd == "register_read":
        if len(args) == 2:
            (index,) = _ints(args[1:], ["index"], cmd)
            return RegisterRead(line, args[0], index)
        if len(args) == 3 and extension:
            index, value = _ints(args[1:], ["index", "expected_value"], cmd)
            return RegisterRead(line, args[0], index, value)
        if len(args) == 3:
            raise ValueError(f"register_read with an expected value is a softswitch extension: write "
                             f"'{EXTENSION} {cmd} {rest}' (p4c's runner takes register_read NAME INDEX)")
        raise ValueError("register_read takes: register index")
    if cmd == "check_counter":
        m = _CHECK_COUNTER_RE.match(rest)
        if not m:
            raise ValueError("check_counter takes: counter(index) [packets|bytes] <op> <number>")
        name, index_text, kind, op, value = m.groups()
        if index_text.startswith("$"):
            if not re.fullmatch(r"\$[A-Za-z_]\w*", index_text):
                raise ValueError(f"check_counter: {index_text!r} is not an entry name ($NAME)")
            index: int | str = index_text[1:]
        else:
            (index,) = _ints([index_text], ["index"], cmd)
        if kind is None:  # p4c's default check: packet count == 0
            kind, op, value = "packets", "==", "0"
        (number,) = _ints([value], ["number"], cmd)
        return CheckCounter(line, name, index, kind, op, number)
    if cmd in ("meter_set_rates", "meter_array_set_rates"):
        return _parse_meter_rates(line, cmd, args)
    if cmd == "meter_get_rates":
        if len(args) != 2:
            raise ValueError("meter_get_rates takes: meter index")
        (index,) = _ints(args[1:], ["index"], cmd)
        return MeterGetRates(line, args[0], index)
    return None


def _parse_meter_rates(line: int, cmd: str, args: list[str]) -> MeterSetRates:
    """BMv2 meters have two rates: committed then peak, each ``rate:burst``."""
    n_head = 2 if cmd == "meter_set_rates" else 1
    usage = f"{cmd} takes: meter {'index ' if n_head == 2 else ''}<cir>:<cburst> <pir>:<pburst>"
    if len(args) != n_head + 2:
        raise ValueError(usage)
    index = _ints(args[1:2], ["index"], cmd)[0] if n_head == 2 else None
    rates = []
    for pair in args[n_head:]:
        rate, sep, burst = pair.partition(":")
        try:
            r = float(rate)
        except ValueError:
            raise ValueError(f"{cmd}: rate {rate!r} is not a number; {usage}") from None
        if not sep or not r >= 0:
            raise ValueError(usage)
        rates.append((r, _ints([burst], ["burst"], cmd)[0]))
    return MeterSetRates(line, args[0], index, tuple(rates))


def parse_stf(text: str, path: str = "<stf>") -> StfFile:
    """Parse a whole file; the first malformed line raises ``StfSyntaxError``."""
    out = StfFile(path)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        header = _HEADER_RE.match(stripped)
        if header:
            _apply_header(out, header.group(1), header.group(2), path, lineno)
            continue
        extension = stripped.startswith(EXTENSION + " ")
        body = stripped[len(EXTENSION):] if extension else raw
        body = body.split("#", 1)[0]
        try:
            command = parse_command(lineno, body, extension)
        except ValueError as exc:
            raise StfSyntaxError(str(exc), path, lineno) from None
        if command is not None:
            out.commands.append(command)
    return out


def _apply_header(out: StfFile, kind: str, value: str, path: str, lineno: int) -> None:
    if kind == "cpu_port":
        try:
            out.cpu_port = parse_number(value)
        except ValueError:
            raise StfSyntaxError(f"cpu_port {value!r} is not a number", path, lineno) from None
        return
    for item in value.split():
        name, _, val = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise StfSyntaxError(f"bad define {item!r} (want NAME or NAME=VALUE)", path, lineno)
        out.defines[name] = val if val else "1"


def p4c_dialect_problems(text: str) -> list[str]:
    """``line: problem`` for every command p4c's BMv2 STF runner would not parse as meant."""
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0]
        words = body.split()
        if not words:
            continue
        cmd = words[0].lower()
        if cmd == "register_read" and len(words) != 3:
            out.append(f"{lineno}: register_read takes NAME INDEX there (checks go in '{EXTENSION}')")
        if cmd == "add":
            for w in words[1:]:
                key, sep, val = w.partition(":")
                if not sep or "(" in key:
                    continue
                if "/" in val or "&&&" in val or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", val):
                    out.append(f"{lineno}: key {w!r}: write hex/binary digits with '*' for don't-care")
    return out


def load_stf(path: str) -> StfFile:
    with open(path, encoding="utf-8") as fh:
        return parse_stf(fh.read(), path)
