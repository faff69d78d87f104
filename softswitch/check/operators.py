"""Binary operators of the expression compiler: p4c's typing and constant folding of each
operator family, as Python source over the value representation of ``exprs.py`` (bit<W> as
non-negative ints, int<W> as signed ints, bool as bool, untyped literals folded)."""

from __future__ import annotations

from ..frontend.literals import MAX_CONST_BITS
from .types import BitT, BoolT, EnumT, IntLitT, ListT, P4Type, StackT, StructLikeT, newtype_operand, same_type


def wrap_code(code: str, t: BitT) -> str:
    """Python source reducing an unbounded int expression to type t."""
    if t.signed:
        h = 1 << (t.width - 1)
        return f"(((({code}) + {h}) & {t.mask}) - {h})"
    return f"(({code}) & {t.mask})"


def wrap_value(v: int, t: BitT) -> int:
    v &= t.mask
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return v


BOOL_CONSTS = {"True": True, "False": False}


def both_bool_consts(*codes: str) -> bool:
    """True when every operand is a folded bool constant (so the operator folds, as p4c does)."""
    return all(c in BOOL_CONSTS for c in codes)


def is_const(code: str) -> bool:
    try:
        int(code)
        return True
    except ValueError:
        return False


def _ser_enum_operand(x: tuple[str, P4Type], other: tuple[str, P4Type]) -> tuple[str, P4Type]:
    """A serializable enum operand meeting a bit<W>/int operand takes its underlying type
    (p4c's implicit cast; the value is already the underlying integer)."""
    t = x[1]
    if isinstance(t, EnumT) and t.underlying is not None and isinstance(other[1], (BitT, IntLitT)):
        return x[0], t.underlying
    return x


_ARITH = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%"}
Operand = tuple[str, P4Type]


class BinaryOperators:
    """The ``binary`` method of ``exprs.ExprChecker`` (a mixin: it uses the compiler's
    ``err``, ``unify``, ``convert`` and ``d``)."""

    def binary(self, op: str, a: Operand, b: Operand, n) -> Operand:
        a, b = _ser_enum_operand(a, b), _ser_enum_operand(b, a)
        if op in ("&&", "||"):
            return self._logical(op, a, b, n)
        if (nt := newtype_operand(op, a[1], b[1])) is not None:
            raise self.err(n, f"{op}: cannot be applied to an expression of type {nt}")
        if op in ("==", "!="):
            return self._equality(op, a, b, n)
        if op in ("<", ">", "<=", ">="):
            ac, bc, _t = self.unify(a, b, n, op)
            if is_const(ac) and is_const(bc):
                return str(eval(f"{ac} {op} {bc}")), BoolT()
            return f"({ac} {op} {bc})", BoolT()
        if op == "++":
            return self._concat(a, b, n)
        if op in ("<<", ">>"):
            return self._shift(op, a, b, n)
        ac, bc, t = self.unify(a, b, n, op)
        if isinstance(t, IntLitT):
            return self._fold_literals(op, int(ac), int(bc), t, n)
        return self._arith(op, ac, bc, t, n)

    def _logical(self, op: str, a: Operand, b: Operand, n) -> Operand:
        for _c, t in (a, b):
            if not isinstance(t, BoolT):
                raise self.err(n, f"operator {op} needs bool operands, got {t}")
        ac, bc = a[0], b[0]
        if both_bool_consts(ac, bc):
            x, y = BOOL_CONSTS[ac], BOOL_CONSTS[bc]
            return str(x and y if op == "&&" else x or y), BoolT()
        return f"({ac} {'and' if op == '&&' else 'or'} {bc})", BoolT()

    def _equality(self, op: str, a: Operand, b: Operand, n) -> Operand:
        (ac, at), (bc, bt) = a, b
        if isinstance(at, (BitT, IntLitT)) and isinstance(bt, (BitT, IntLitT)):
            ac, bc, _ = self.unify(a, b, n, op)
        elif not same_type(at, bt) and not (isinstance(at, ListT) or isinstance(bt, ListT)):
            raise self.err(n, f"operator {op}: cannot compare {at} and {bt}")
        elif isinstance(at, ListT) and isinstance(bt, ListT) and len(at.elems) != len(bt.elems):
            raise self.err(n, f"operator {op}: cannot compare {at} and {bt} (different lengths)")
        if isinstance(bt, ListT) and isinstance(at, StructLikeT):  # a list is a valid header/struct
            bc = self.convert(bc, bt, at, n)
        elif isinstance(at, ListT) and isinstance(bt, StructLikeT):
            ac, at = self.convert(ac, at, bt, n), bt
        if isinstance(at, (StructLikeT, StackT)):
            return f"({'' if op == '==' else 'not '}_eq({ac}, {bc}))", BoolT()
        if is_const(ac) and is_const(bc):
            return str((int(ac) == int(bc)) == (op == "==")), BoolT()
        if both_bool_consts(ac, bc):
            return str((ac == bc) == (op == "==")), BoolT()
        return f"({ac} {op} {bc})", BoolT()

    def _concat(self, a: Operand, b: Operand, n) -> Operand:
        (ac, at), (bc, bt) = a, b
        for _c, t in (a, b):
            if not isinstance(t, BitT):
                raise self.err(n, f"operator ++ needs bit<W>/int<W> operands with a known width, got {t}")
        rt = BitT(at.width + bt.width, at.signed)
        if is_const(ac) and is_const(bc):  # folded, so it can initialise a constant
            return str(wrap_value((int(ac) & at.mask) << bt.width | int(bc) & bt.mask, rt)), rt
        bm = f"({bc} & {bt.mask})" if bt.signed else bc
        am = f"({ac} & {at.mask})" if at.signed else ac
        code = f"(({am} << {bt.width}) | {bm})"
        return (wrap_code(code, rt) if rt.signed else code), rt

    def _shift(self, op: str, a: Operand, b: Operand, n) -> Operand:
        (ac, at), (bc, bt) = a, b
        if isinstance(bt, BitT) and bt.signed:
            raise self.err(n, f"shift amount must be unsigned, got {bt}")
        if not isinstance(bt, (BitT, IntLitT)):
            raise self.err(n, f"shift amount must be an integer, got {bt}")
        if is_const(bc) and int(bc) < 0:
            raise self.err(n, f"negative shift amount {bc}")
        if isinstance(at, IntLitT):
            if not is_const(bc):
                raise self.err(n, "shift of an integer literal by a non-constant amount: width of the "
                                  "left operand cannot be inferred (cast the literal)")
            if op == "<<" and int(ac) and int(ac).bit_length() + int(bc) > MAX_CONST_BITS:
                raise self.err(n, f"constant too large: {ac} << {bc} exceeds {MAX_CONST_BITS} bits")
            return str(eval(f"{ac} {op} {bc}")), at
        if not isinstance(at, BitT):
            raise self.err(n, f"operator {op} cannot be applied to {at}")
        if is_const(bc) and is_const(ac):  # fold, as p4c does (constants, widths)
            v = int(ac) << int(bc) if op == "<<" else int(ac) >> int(bc)
            return str(wrap_value(v, at)), at
        if is_const(bc):
            s = int(bc)
            if s >= at.width:
                self.d.warn(n, "overflow", f"{op}: shifting value with {at.width} bits by {s}")
                return ("0" if op == "<<" or not at.signed else f"(-1 if {ac} < 0 else 0)"), at
            if op == "<<":
                return wrap_code(f"{ac} << {s}", at), at
            return f"({ac} >> {s})", at
        if op == "<<":
            return f"(({wrap_code(f'{ac} << {bc}', at)}) if {bc} < {at.width} else 0)", at
        return f"({ac} >> {bc})", at

    def _fold_literals(self, op: str, x: int, y: int, t: P4Type, n) -> Operand:
        """An operator on two untyped literals, folded as p4c folds ``int`` values."""
        if op in ("/", "%") and y == 0:
            raise self.err(n, "division by zero")
        if op in ("|+|", "|-|"):
            raise self.err(n, f"saturating operator {op} needs a fixed-width operand")
        if op in ("/", "%") and (x < 0 or y < 0):
            raise self.err(n, f"operator {op} on negative constants is not allowed")
        if op not in ("+", "-", "*", "/", "%", "&", "|", "^"):
            raise self.err(n, f"unsupported operator {op}")
        val = {"+": x + y, "-": x - y, "*": x * y, "/": x // y if y else 0, "%": x % y if y else 0,
               "&": x & y, "|": x | y, "^": x ^ y}[op]
        if val.bit_length() > MAX_CONST_BITS:
            raise self.err(n, f"constant too large: exceeds {MAX_CONST_BITS} bits")
        return str(val), t

    def _arith(self, op: str, ac: str, bc: str, t: BitT, n) -> Operand:
        """Bitwise, arithmetic, division and saturating operators on bit<W>/int<W>."""
        if op in ("&", "|", "^"):
            return f"({ac} {op} {bc})", t
        if op in ("+", "-", "*"):
            if is_const(ac) and is_const(bc):
                return str(wrap_value(eval(f"{ac} {op} {bc}"), t)), t
            return wrap_code(f"{ac} {op} {bc}", t), t
        if op in ("/", "%"):
            return self._division(op, ac, bc, t, n)
        if op in ("|+|", "|-|"):
            total = f"{ac} {op[1]} {bc}"
            if t.signed:
                lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
                return f"min(max({total}, {lo}), {hi})", t
            return (f"min({total}, {t.mask})" if op == "|+|" else f"max({total}, 0)"), t
        raise self.err(n, f"unsupported operator {op}")

    def _division(self, op: str, ac: str, bc: str, t: BitT, n) -> Operand:
        if t.signed:
            raise self.err(n, f"operator {op} is not supported on signed values")
        if is_const(bc) and int(bc) == 0:
            raise self.err(n, "division by zero")
        if is_const(ac) and is_const(bc):
            return str(eval(f"{ac} {_ARITH[op]} {bc}")), t
        if is_const(ac) and int(ac) == 0:
            return "0", t  # p4c's strength reduction: 0 / x and 0 % x are 0
        if is_const(bc) and int(bc) & (int(bc) - 1) == 0:
            return f"({ac} {_ARITH[op]} {bc})", t  # p4c's strength reduction: a shift or a mask
        # p4c's mid end (CompileTimeOperations) rejects every / and % left after constant
        # folding and strength reduction: BMv2 has no division
        raise self.err(n, f"{op}: could not evaluate at compilation time (only constants, or a "
                          "division by a power of two, can be computed)")
