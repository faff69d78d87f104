"""The typed IR between the checked front end and the code generators.

Every scalar expression carries its type as (width, signed); bool is ``Bool``; error and enum
values are lowered to their integer width (error and plain enums: 32 bits).  Compound values
(headers, structs) carry the front end's ``StructLikeT``.  Literals of type ``int`` never reach
the IR: the lowering gives every constant the width p4c infers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..check.types import StructLikeT


# ------------------------------------------------------------------ types
@dataclass(frozen=True)
class Bits:
    width: int
    signed: bool = False

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


@dataclass(frozen=True)
class Bool:
    pass


@dataclass(frozen=True)
class Comp:
    """A header or struct value (passed by reference)."""

    t: StructLikeT


@dataclass(frozen=True)
class Pkt:
    """packet_in / packet_out parameters."""

    name: str


@dataclass(frozen=True)
class Stack:
    """A header stack: ``size`` elements of header type ``elem`` and the next index."""

    elem: StructLikeT
    size: int


IRType = Bits | Bool | Comp | Pkt | Stack


# ------------------------------------------------------------------ expressions
@dataclass
class Expr:
    t: IRType


@dataclass
class Const(Expr):
    value: int  # the bit pattern (two's complement within the width for signed types)


@dataclass
class Ref(Expr):
    """A variable: ``kind`` is param (block parameter), var (block-level variable), local
    (statement-local variable), arg (action/function parameter)."""

    kind: str
    name: str
    by_ptr: bool = False  # an out/inout scalar action/function parameter


@dataclass
class Field(Expr):
    base: Expr
    name: str


@dataclass
class Valid(Expr):
    base: Expr


@dataclass
class StackElem(Expr):
    """An element of a stack: ``which`` is index (``index`` set), next or last; an index out of
    range rejects (StackOutOfBounds) as the Python backend does."""

    base: Expr
    index: Expr | None
    which: str


@dataclass
class StackInfo(Expr):
    base: Expr
    what: str  # nextIndex | lastIndex


@dataclass
class Unary(Expr):
    op: str  # ~ - !
    x: Expr


@dataclass
class Binary(Expr):
    op: str  # + - * / % & | ^ << >> |+| |-| ++ == != < > <= >= && ||
    a: Expr
    b: Expr


@dataclass
class Slice(Expr):
    x: Expr
    hi: int
    lo: int


@dataclass
class Cast(Expr):
    x: Expr


@dataclass
class Mux(Expr):
    cond: Expr
    a: Expr
    b: Expr


@dataclass
class StructInit(Expr):
    """``{a, b}`` converted to a struct or header (a header becomes valid)."""

    items: list[Expr]
    # per item: the current length of a varbit item (a ``VarbitLength``), else None (length 0)
    lens: list[Expr | None] = field(default_factory=list)


@dataclass
class VarbitLength(Expr):
    """The current length in bits of a varbit field, an lvalue: BMv2 keeps it beside the value
    in any field container (a header's one varbit field, each varbit field of a struct), and
    its ``assign_VL`` copies both."""

    field: Field


@dataclass
class Default(Expr):
    """The default value of a compound type (``...``; P4_16 "default values"): what a new local
    is -- headers invalid, no union member valid, stacks of invalid headers with nextIndex 0,
    scalar fields 0 or false, varbit fields of length 0."""


@dataclass
class StackInit(Expr):
    """A list expression converted to a header stack (p4c's HeaderStackExpression): element i
    is ``items[i]`` (BMv2's assignment of each), nextIndex 0."""

    items: list[Expr]


@dataclass
class RegRead(Expr):
    inst: str
    index: Expr


@dataclass
class Lookahead(Expr):
    """``lookahead<T>()``: T is bit<W>/int<W> or a header (Comp, returned valid)."""


@dataclass
class PacketLength(Expr):
    """``packet_in.length()`` in bytes (bit<32>)."""


@dataclass
class CallF(Expr):
    func: str
    args: list[Expr]


# ------------------------------------------------------------------ statements
@dataclass
class Stmt:
    pass


@dataclass
class Assign(Stmt):
    lhs: Expr
    rhs: Expr


@dataclass
class AssignSlice(Stmt):
    lhs: Expr
    hi: int
    lo: int
    rhs: Expr


@dataclass
class VarDecl(Stmt):
    name: str
    t: IRType
    init: Expr | None


@dataclass
class If(Stmt):
    cond: Expr
    then: list[Stmt]
    els: list[Stmt]


@dataclass
class Switch(Stmt):
    """``switch`` on a value, or on ``table.apply().action_run`` (``table`` set, labels are action
    indexes of the table)."""

    value: Expr | None
    table: str | None
    cases: list[tuple[list[int] | None, list[Stmt]]]  # None = default


@dataclass
class Loop(Stmt):
    """A ``for`` loop: ``body`` runs (its first statements test the condition and ``Break``),
    then ``update``; ``Continue`` goes to ``update``, ``Break`` leaves the loop."""

    body: list[Stmt]
    update: list[Stmt]


@dataclass
class Break(Stmt):
    pass


@dataclass
class Continue(Stmt):
    pass


@dataclass
class Exit(Stmt):
    pass


@dataclass
class Return(Stmt):
    value: Expr | None = None


@dataclass
class SetValid(Stmt):
    hdr: Expr
    valid: bool


@dataclass
class ActionCall(Stmt):
    action: str
    args: list[Expr]          # directional then data arguments, in parameter order (an `out`
    #                           scalar's is its fresh start value, see ir.common.fresh_out)
    outs: list[Expr | None]   # copy-out target per out/inout parameter, None otherwise; p4c
    #                           copies every directional argument of actions and functions, so a
    #                           backend passes copies (compound ones included) and copies back
    # statements that finish the copy-out (a varbit argument's value and length from its struct,
    # ir/calls.py): run after the copies back, also where those run after an `exit`
    after: list[Stmt] = field(default_factory=list)


@dataclass
class FuncCall(Stmt):
    func: str
    args: list[Expr]
    outs: list[Expr | None]
    ret: Expr | None = None   # lvalue receiving the value (None: discarded)


@dataclass
class TableApply(Stmt):
    table: str
    hit_var: str | None = None  # local receiving hit (for .hit/.miss)


@dataclass
class ControlApply(Stmt):
    """``control`` is the applied instance's block; its frame (parameters, variables) is one per
    instance and per packet pass, kept between apply sites as p4c's inliner declares the callee's
    locals and parameter temporaries once per instance."""

    control: str
    args: list[Expr | None]   # None: an `out` scalar temporary keeps its value (no copy-in)
    outs: list[Expr | None]
    # p4c substitutes the arguments for the parameters (softswitch/inlining.py): the copy-out
    # also happens after an `exit` in the callee; otherwise they are temporaries it skips
    substituted: bool = True
    after: list[Stmt] = field(default_factory=list)  # as ActionCall.after
    # the block whose code this site runs ("": ``control``'s own): p4c inlines the apply body at
    # each site, so a later site holding calculations runs a copy with its own (ir/calcs.py)
    code: str = ""


@dataclass
class ExternCall(Stmt):
    """v1model functions and extern methods: ``name`` is e.g. ``register.write``, ``counter.count``,
    ``mark_to_drop``, ``hash``, ``verify_checksum``, ``clone``, ``digest``..."""

    name: str
    inst: str | None
    args: list[Any]
    out: Expr | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class StackShift(Stmt):
    stack: Expr
    count: int
    push: bool


# parser statements
@dataclass
class Extract(Stmt):
    hdr: Expr
    varbits: Expr | None = None  # the size of the header's varbit field (two-argument extract)


@dataclass
class ExtractNext(Stmt):
    stack: Expr
    member: str | None = None  # stack of header unions: the member extracted into (others invalid)
    varbits: Expr | None = None  # the size of the element's varbit field (two-argument extract)


@dataclass
class Advance(Stmt):
    """``advance(bits)``; ``peek``: only the length check (a ``lookahead`` whose value is
    unused still fails a short packet with PacketTooShort in BMv2)."""
    bits: Expr
    peek: bool = False


@dataclass
class Verify(Stmt):
    cond: Expr
    error: Expr


@dataclass
class Emit(Stmt):
    hdr: Expr


# ------------------------------------------------------------------ blocks
@dataclass
class SelectCase:
    """One select case: per key ('mask', value, mask), ('range', lo, hi), ('vs', id) (a parser
    value set on that key) or None (don't care); ('vsall', id) first: a value set over all keys;
    all None (or empty) = default."""

    conds: list[tuple]
    target: str


@dataclass
class State:
    name: str
    body: list[Stmt]
    keys: list[Expr]              # select keys; empty for a direct transition
    cases: list[SelectCase]       # for a direct transition: one case without conditions
    nomatch: bool = True          # falling through all cases is error.NoMatch


@dataclass
class Param:
    name: str
    t: IRType
    direction: str  # '' | in | out | inout


@dataclass
class Action:
    name: str
    control: str | None
    params: list[Param]
    body: list[Stmt]


@dataclass
class Key:
    name: str
    kind: str
    width: int
    expr: Expr


@dataclass
class Table:
    name: str
    control: str
    keys: list[Key]
    actions: list[str]
    bound: list[list[Expr]]       # directional arguments per action
    direct_counter: bool
    size: int
    profile: str | None = None    # an indirect table: its action profile / selector (P4Info name)
    algo: str | None = None       # the selector's hash algorithm
    selector: list[Key] = field(default_factory=list)   # `selector` keys, hashed in order
    selector_valid: list[Expr | None] = field(default_factory=list)  # the header validity of each
    direct_meter: int = 0         # 0: none; else its MeterType + 1 (1 packets, 2 bytes)
    meter_target: Expr | None = None  # written with the colour on each hit (walk.direct_meter_target)
    # an exact-match table whose entries are `const` and that has no direct resource: its rows
    # (key values, action index, action data) can never change, so a backend may compile them
    # into the lookup; None for every other table
    fixed_rows: list[tuple[tuple[int, ...], int, tuple[int, ...]]] | None = None
    # per action: statements before its call and after its copy-out (a varbit `out`/`inout`
    # argument bound in the action list travels in a struct, as in ir.ActionCall.after)
    bound_pre: list[list[Stmt]] = field(default_factory=list)
    bound_after: list[list[Stmt]] = field(default_factory=list)


@dataclass
class Block:
    """A parser or control instance (nested control instances are blocks of their own)."""

    name: str
    kind: str                     # parser | control
    params: list[Param]
    vars: list[tuple[str, IRType]]
    init: list[Stmt]
    body: list[Stmt]
    states: list[State] = field(default_factory=list)
    # a copy of an instance's apply body for one of its apply sites (ControlApply.code): the
    # instance named here owns the frame the copy runs in; "" for a block of its own
    frame: str = ""


@dataclass
class Function:
    name: str
    ret: IRType | None
    params: list[Param]
    body: list[Stmt]


@dataclass
class Extern:
    name: str
    kind: str    # register | counter | direct_counter | meter | direct_meter
    size: int
    width: int = 0
    signed: bool = False
    table: str | None = None
    meter_kind: int = 0  # meter: MeterType (0 packets, 1 bytes)


@dataclass
class Program:
    """The whole v1model program: types, blocks by role, actions, tables, externs."""

    headers: list[StructLikeT]
    blocks: dict[str, Block]          # by block name
    roles: dict[str, str]             # v1model role -> block name
    actions: dict[str, Action]
    tables: dict[str, Table]
    functions: dict[str, Function]
    externs: dict[str, Extern]
    errors: list[str]
    field_lists: dict[int, list[str]]  # preserved metadata field lists (id -> field names)
    digests: list[StructLikeT]
    value_sets: list[str] = field(default_factory=list)  # parser value sets by id (P4Info names)
    hdr_t: StructLikeT = None  # type: ignore[assignment]
    meta_t: StructLikeT = None  # type: ignore[assignment]
    std_t: StructLikeT = None  # type: ignore[assignment]
    # hash/checksum calculations by their BMv2 names (``calc``, ``calc_0``...) -> algorithm, in
    # p4c's order (``ir/calcs.py``); each call's ``ExternCall.extra['calc']`` names its own
    calcs: dict[str, str] = field(default_factory=dict)

    def custom_crcs(self) -> dict[str, int]:
        """The calculations of ``crc16_custom``/``crc32_custom``: name -> CRC width."""
        return {n: int(a[3:5]) for n, a in self.calcs.items() if a in ("crc16_custom", "crc32_custom")}
