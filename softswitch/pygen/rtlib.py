"""Runtime support used by the generated code: exceptions, stacks, packet cursor, struct helpers."""

from __future__ import annotations


class Exit(Exception):
    """``exit`` statement: ends the current top-level control."""


class Reject(Exception):
    """Parser reached reject with an error code."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class IndexOutOfRange(Reject):
    """A run-time header stack index out of range: StackOutOfBounds in a parser; in a control
    the statement that evaluates it has no effect (p4c lowers run-time indexes that way)."""


class PacketIn:
    """Bit cursor over the received frame."""

    __slots__ = ("data", "pos", "nbits")

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0
        self.nbits = len(data) * 8

    def bits(self, pos: int, n: int) -> int:
        """n bits starting at bit pos (MSB first)."""
        start, end = pos >> 3, (pos + n + 7) >> 3
        v = int.from_bytes(self.data[start:end], "big")
        return (v >> ((end << 3) - pos - n)) & ((1 << n) - 1)


class PacketOut:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []


class Stack:
    """A header stack: elements ``h`` and ``n`` (nextIndex)."""

    __slots__ = ("h", "n", "cls", "size", "oob")

    def __init__(self, cls, size: int, oob: int):
        self.cls, self.size, self.oob = cls, size, oob
        self.h = [cls() for _ in range(size)]
        self.n = 0

    def copy(self) -> Stack:
        s = Stack.__new__(Stack)
        s.cls, s.size, s.oob, s.n = self.cls, self.size, self.oob, self.n
        s.h = [e.copy() for e in self.h]
        return s

    def next(self):
        if self.n >= self.size:
            raise Reject(self.oob)
        return self.h[self.n]

    def last(self):
        if self.n == 0:
            raise Reject(self.oob)
        return self.h[self.n - 1]

    def at(self, i: int):
        if not 0 <= i < self.size:
            raise IndexOutOfRange(self.oob)
        return self.h[i]

    def push_front(self, k: int) -> None:
        """BMv2's P4_16 push_front: elements move up by swapping (so the k new, invalid elements
        hold the values swapped down from the end, as in BMv2), nextIndex grows."""
        if k <= 0:
            return
        h, size = self.h, self.size
        self.n = min(size, self.n + k)
        for i in range(size - 1, k - 1, -1):
            h[i], h[i - k] = h[i - k], h[i]
        for i in range(min(size, k)):
            mark_invalid(h[i])

    def pop_front(self, k: int) -> None:
        """BMv2's P4_16 pop_front: elements move down by swapping; the last k become invalid."""
        if k <= 0:
            return
        h, size = self.h, self.size
        self.n -= min(self.n, k)
        i = 0
        if k < size:
            for i in range(size - k):
                h[i], h[i + k] = h[i + k], h[i]
            i = size - k
        for j in range(i, size):
            mark_invalid(h[j])

    def _vals(self) -> tuple:
        return tuple(e._vals() for e in self.h)

    def _asg(self, s: Stack) -> None:
        """BMv2 ``assign_header_stack``: nextIndex, then element by element."""
        self.n = s.n
        for d, e in zip(self.h, s.h, strict=True):
            d._asg(e)


def look(pk: PacketIn, n: int, err: int) -> int:
    """``lookahead<bit<n>>()``: the next n bits without moving the cursor."""
    if pk.pos + n > pk.nbits:
        raise Reject(err)
    return pk.bits(pk.pos, n)


def lookh(pk: PacketIn, extract, cls):
    """``lookahead<H>()`` of a header or fixed-width struct."""
    o = cls()
    save = pk.pos
    extract(pk, o)
    pk.pos = save
    return o


def adv(pk: PacketIn, n: int, err: int) -> None:
    """``advance(n)``: a short packet is ``err`` (PacketTooShort)."""
    if pk.pos + n > pk.nbits:
        raise Reject(err)
    pk.pos += n


def reject_state(L) -> None:
    """The parser's ``reject`` state."""
    raise Reject(0)


def mark_invalid(o) -> None:
    """BMv2 mark_invalid of a header (fields kept) or of a header union (every member)."""
    if hasattr(o, "_v"):
        o._v = False
    else:
        for f in o._fields:
            getattr(o, f)._v = False


def mk(cls, vals: tuple, valid: bool = False, lens: dict[str, int] | None = None):
    """Build a struct/header object from field values (list expression); ``lens``: the current
    lengths of varbit fields by attribute (``layout.vbl_name``)."""
    o = cls()
    for name, v in zip(cls._fields, vals, strict=False):
        setattr(o, name, v.copy() if hasattr(v, "copy") else v)
    if valid:
        o._v = True
    for name, n in (lens or {}).items():
        setattr(o, name, n)
    return o


def mkstack(cls, size: int, oob: int, items: tuple) -> Stack:
    """A header stack from a list expression: element i assigned ``items[i]`` (BMv2's
    assignment), nextIndex 0."""
    s = Stack(cls, size, oob)
    for d, v in zip(s.h, items, strict=True):
        d._asg(v)
    return s


def fresh(o, src):
    """``o`` (a new value) after ``o = src`` with BMv2's assignment semantics."""
    o._asg(src)
    return o


def eq(a, b) -> bool:
    return a._vals() == b._vals()


class Locals:
    """Per-invocation namespace of a parser/control: parameters and control-level variables."""
