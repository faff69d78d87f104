"""P4 types as the compiler sees them.  Runtime values: bit/int/bool/error/enum are Python ints
(bools for bool); headers and structs are generated classes; stacks are ``Stack`` objects."""

from __future__ import annotations

from dataclasses import dataclass, field


class P4Type:
    """Base of all types."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


@dataclass(frozen=True)
class BitT(P4Type):
    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


@dataclass(frozen=True)
class NewBitT(BitT):
    """``type bit<W> N;``: N's values are bit<W> values to the backends, a distinct type to the
    checks (no implicit conversion to or from bit<W>, no arithmetic; casts convert)."""

    newtype: str = ""

    def __str__(self) -> str:
        return self.newtype


@dataclass(frozen=True)
class VarbitT(P4Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class IntLitT(P4Type):
    """Infinite-precision integer (literals and constants without a width)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class BoolT(P4Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class ErrorT(P4Type):
    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True)
class StringT(P4Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidT(P4Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class MatchKindT(P4Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class DontCareT(P4Type):
    def __str__(self) -> str:
        return "_"


@dataclass(eq=False)
class StructLikeT(P4Type):
    name: str
    fields: list[tuple[str, P4Type]]
    annotations: dict[str, list] = field(default_factory=dict)
    pyname: str = ""

    def field_type(self, fname: str) -> P4Type | None:
        for n, t in self.fields:
            if n == fname:
                return t
        return None

    def __str__(self) -> str:
        return self.name


class HeaderT(StructLikeT):
    """A header: fixed fields (at most one varbit), a validity bit."""

    @property
    def width(self) -> int:
        w = 0
        for _, t in self.fields:
            if isinstance(t, BitT):
                w += t.width
            elif isinstance(t, VarbitT):
                w += t.max_width
            elif isinstance(t, BoolT):
                w += 1
            elif isinstance(t, EnumT) and t.underlying is not None:
                w += t.underlying.width
            elif isinstance(t, StructT):
                w += bit_width(t)
        return w


class StructT(StructLikeT):
    pass


@dataclass(eq=False)
class ArrayT(StructT):
    """An array of a non-header type (``bit<8>[4]``, ``S[2]``; P4 spec "Arrays", 2025): a struct
    whose fields ``0`` .. ``size-1`` hold the elements, so assignment, ``==``, initialisers,
    layout in headers and both backends treat it as one; indexing and ``.size`` are its own.
    One object per (element type, size) in a program (``Decls.array_type``)."""

    elem: P4Type | None = None
    size: int = 0


class UnionT(StructLikeT):
    """A header_union: header members, at most one valid (setting one valid invalidates the others)."""


@dataclass(frozen=True)
class StackT(P4Type):
    elem: HeaderT | UnionT
    size: int

    def __str__(self) -> str:
        return f"{self.elem.name}[{self.size}]"


@dataclass(eq=False)
class EnumT(P4Type):
    name: str
    members: list[str]
    underlying: BitT | None = None
    values: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TupleT(P4Type):
    elems: tuple[P4Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.elems)) + ">"


@dataclass(frozen=True)
class ListT(P4Type):
    """Type of a ``{a, b}`` list expression before it meets its target type."""

    elems: tuple[P4Type, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elems)) + "}"


@dataclass(frozen=True)
class DotsListT(ListT):
    """``{a, b, ...}`` or ``{...}`` (P4_16 "default values"): the items not written take the
    default values of the target struct's, header's or tuple's remaining fields."""

    def __str__(self) -> str:
        return "{" + "".join(f"{t}, " for t in self.elems) + "...}"


@dataclass(frozen=True)
class DefaultT(P4Type):
    """``...`` alone: the default value of whatever type the context expects."""

    def __str__(self) -> str:
        return "..."


@dataclass(frozen=True)
class KVListT(ListT):
    """Type of a struct expression ``{a = x, b = y}`` before it meets its target type."""

    names: tuple[str, ...] = ()
    dots: bool = False  # ``{a = x, ...}`` (P4_16 1.2.4): the other fields take default values

    def __str__(self) -> str:
        kvs = [f"{n} = {t}" for n, t in zip(self.names, self.elems, strict=True)]
        return "{" + ", ".join(kvs + (["..."] if self.dots else [])) + "}"

    def ordered(self, items: list, dst: StructLikeT) -> list | None:
        """The items in ``dst``'s field order (None for a field ``...`` leaves to its default),
        or None when the names do not match its fields."""
        fields = [n for n, _ in dst.fields]
        if (not set(self.names) <= set(fields)) if self.dots else sorted(self.names) != sorted(fields):
            return None
        by = dict(zip(self.names, items, strict=True))
        return [by.get(n) for n in fields]


@dataclass(frozen=True)
class TypeVar(P4Type):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class SpecializedT(P4Type):
    """An extern (or parser/control/package type) with type arguments."""

    base: str
    args: tuple[P4Type, ...] = ()

    def __str__(self) -> str:
        return self.base + ("<" + ", ".join(map(str, self.args)) + ">" if self.args else "")


@dataclass(frozen=True)
class NamedT(P4Type):
    """Parser, control, package or extern object type by name (no type arguments)."""

    name: str

    def __str__(self) -> str:
        return self.name


#: members and methods of header stacks that arrays of other types do not have
STACK_ONLY = ("next", "last", "lastIndex", "nextIndex", "push_front", "pop_front")


def same_type(a: P4Type, b: P4Type) -> bool:
    if isinstance(a, StructLikeT) or isinstance(b, StructLikeT) or isinstance(a, EnumT):
        return a is b
    if isinstance(a, StackT) and isinstance(b, StackT):
        return a.elem is b.elem and a.size == b.size
    return a == b


def is_numeric(t: P4Type) -> bool:
    return isinstance(t, (BitT, IntLitT))


def is_scalar_bits(t: P4Type) -> bool:
    """``bit<W>``/``int<W>``, ``bool`` or an enum with an underlying type: one run of bits."""
    return isinstance(t, (BitT, BoolT)) or (isinstance(t, EnumT) and t.underlying is not None)


def bit_width(t: P4Type, *, varbit: int | None = None) -> int:
    """Width in bits of a serialisable type (for hashing, field lists, digests, header layout).
    A ``varbit`` counts ``varbit`` bits; with None it has no fixed width (TypeError)."""
    if isinstance(t, BitT):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, VarbitT) and varbit is not None:
        return varbit
    if isinstance(t, StructLikeT):
        return sum(bit_width(ft, varbit=varbit) for _, ft in t.fields)
    if isinstance(t, StackT):
        return bit_width(t.elem, varbit=varbit) * t.size
    raise TypeError(f"type {t} has no fixed bit width")


def cast_error(src: P4Type, dst: P4Type) -> str | None:
    """Why p4c refuses the cast ``(dst) e`` of a value of type ``src`` (None: this check lets it
    through).  A new type (``type bit<W> N``) converts to N from a literal, from N or from
    exactly bit<W>, and from N only to N or exactly bit<W>; a header, struct or union is made
    by casting a list expression, never another value."""
    if isinstance(dst, NewBitT) and not (isinstance(src, IntLitT) or src == dst or (
            type(src) is BitT and (src.width, src.signed) == (dst.width, dst.signed))):
        return f"invalid cast from {src} to {dst}"
    if isinstance(src, NewBitT) and not isinstance(dst, NewBitT) and not (
            type(dst) is BitT and (dst.width, dst.signed) == (src.width, src.signed)):
        return f"invalid cast from {src} to {dst}"
    if isinstance(dst, StructLikeT) and not isinstance(src, ListT):
        return f"{dst}: cast not supported"
    return None


def newtype_operand(op: str, *types: P4Type) -> P4Type | None:
    """The new-type operand of a binary operator other than == and != (p4c: such values take
    no arithmetic, comparison or bitwise operator), or None."""
    if op in ("==", "!="):
        return None
    return next((t for t in types if isinstance(t, NewBitT)), None)

