"""Python classes and (de)serialisers generated per header/struct type, compiled once (the
python backend's layout of headers and structs; names and widths come from ``fields.py``)."""

from __future__ import annotations

from ..check.fields import default_code, field_width, flat_fields, pyfield, struct_varbits, vbl_name
from ..check.types import ArrayT, BitT, BoolT, HeaderT, P4Type, StackT, StructLikeT, VarbitT


def class_source(t: StructLikeT, oob: int) -> str:
    """Source of the Python class for a header or struct type."""
    names = [pyfield(n) for n, _ in t.fields]
    is_hdr = isinstance(t, HeaderT)
    lens = [vbl_name(t, n) for n in struct_varbits(t)]
    slots = names + (["_v", "_vbl"] if is_hdr else lens)
    L = [f"class {t.pyname}:",
         f"    __slots__ = {tuple(slots)!r}",
         f"    _fields = {tuple(names)!r}",
         "    def __init__(self):"]
    for n, ft in t.fields:
        L.append(f"        self.{pyfield(n)} = {default_code(ft, oob)}")
    if is_hdr:
        L.append("        self._v = False")
        L.append("        self._vbl = 0")
    L += [f"        self.{n} = 0" for n in lens]
    if not t.fields and not is_hdr:
        L.append("        pass")
    L.append("    def copy(self):")
    L.append(f"        o = {t.pyname}.__new__({t.pyname})")
    for n, ft in t.fields:
        n = pyfield(n)
        if isinstance(ft, (StructLikeT, StackT)):
            L.append(f"        o.{pyfield(n)} = self.{n}.copy()")
        else:
            L.append(f"        o.{pyfield(n)} = self.{n}")
    if is_hdr:
        L.append("        o._v = self._v")
        L.append("        o._vbl = self._vbl")
    L += [f"        o.{n} = self.{n}" for n in lens]
    L.append("        return o")
    vals = ", ".join(
        f"self.{pyfield(n)}._vals()" if isinstance(ft, (StructLikeT, StackT)) else f"self.{pyfield(n)}"
        for n, ft in t.fields)
    L.append("    def _vals(self):")
    if is_hdr:  # p4c's == on headers: equal when both invalid, fields compared only when both valid
        L.append(f"        return (True, {vals}{',' if t.fields else ''}) if self._v else (False,)")
    else:
        L.append(f"        return ({vals}{',' if t.fields else ''})")
    L += _asg_source(t, is_hdr)
    if isinstance(t, ArrayT):
        L += _array_access(t, oob)
    if is_hdr:
        L.append("    def _inval(self):")
        L.append("        self._v = False")
        for n, ft in t.fields:
            L.append(f"        self.{pyfield(n)} = {default_code(ft, oob)}")
    return "\n".join(L)


def _array_access(t: ArrayT, oob: int) -> list[str]:
    """``at(i)``/``put(i, v)`` of an array at a run-time index: out of range raises
    ``IndexOutOfRange`` (StackOutOfBounds in a parser; in a control the statement is skipped)."""
    return ["    def at(self, i):",
            f"        if not 0 <= i < {t.size}: raise _OOR({oob})",
            "        return getattr(self, self._fields[i])",
            "    def put(self, i, v):",
            f"        if not 0 <= i < {t.size}: raise _OOR({oob})",
            "        setattr(self, self._fields[i], v)"]


def _asg_source(t: StructLikeT, is_hdr: bool) -> list[str]:
    """``_asg(src)``: assignment in place with BMv2's semantics (``assign_header``: an invalid
    source only invalidates the destination, whose fields stay; structs, unions and stacks
    assign member by member)."""
    L = ["    def _asg(self, s):"]
    if is_hdr:
        L += ["        if not s._v:", "            self._v = False", "            return"]
    for n, ft in t.fields:
        n = pyfield(n)
        if isinstance(ft, (StructLikeT, StackT)):
            L.append(f"        self.{n}._asg(s.{n})")
        else:
            L.append(f"        self.{n} = s.{n}")
    if is_hdr:
        L += ["        self._vbl = s._vbl", "        self._v = True"]
    L += [f"        self.{n} = s.{n}" for n in (vbl_name(t, f) for f in struct_varbits(t))]
    if len(L) == 1:
        L.append("        pass")
    return L


def _from_int(n: str, ft: P4Type, expr: str) -> str:
    if isinstance(ft, BitT) and ft.signed:
        h = 1 << (ft.width - 1)
        return f"((({expr}) + {h}) & {ft.mask}) - {h}"
    if isinstance(ft, BoolT):
        return f"bool({expr})"
    return expr


def extract_source(h: StructLikeT, err_short: int) -> str:
    """``X_<hdr>(pk, o)``: extract a fixed header; ``XV_<hdr>(pk, o, nbits)`` for varbit headers.
    Also generated for fixed-width structs (``lookahead<S>()``): no validity bit, any width."""
    var = [n for n, t in flat_fields(h) if isinstance(t, VarbitT)]
    fixed_w = sum(field_width(t) for _, t in flat_fields(h))
    nbytes = fixed_w // 8
    L = []
    if not var:
        L.append(f"def X_{h.pyname}(pk, o):")
        L.append("    pos = pk.pos")
        L.append(f"    end = pos + {fixed_w}")
        L.append(f"    if end > pk.nbits: raise _Reject({err_short})")
        if fixed_w % 8:
            L.append(f"    v = pk.bits(pos, {fixed_w})")
        else:
            L.append("    if pos & 7 == 0:")
            L.append(f"        v = int.from_bytes(pk.data[pos >> 3:(pos >> 3) + {nbytes}], 'big')")
            L.append("    else:")
            L.append(f"        v = pk.bits(pos, {fixed_w})")
        shift = fixed_w
        for n, ft in flat_fields(h):
            w = field_width(ft)
            shift -= w
            mask = (1 << w) - 1
            e = f"(v >> {shift}) & {mask}" if shift else f"v & {mask}"
            if shift + w == fixed_w and shift:
                e = f"v >> {shift}"
            L.append(f"    o.{n} = {_from_int(n, ft, e)}")
        if isinstance(h, HeaderT):
            L.append("    o._v = True")
        L.append("    pk.pos = end")
        return "\n".join(L)
    # varbit header: field by field
    L.append(f"def X_{h.pyname}(pk, o, vbits=0):")
    L.append("    pos = pk.pos")
    max_w = sum(t.max_width for _, t in flat_fields(h) if isinstance(t, VarbitT))
    L.append(f"    if vbits > {max_w} or vbits < 0: raise _Reject(_ERR_HDR_TOO_LONG)")
    L.append("    if vbits & 7: raise _Reject(_ERR_INVALID_ARG)")
    L.append(f"    if pos + {fixed_w} + vbits > pk.nbits: raise _Reject({err_short})")
    for n, ft in flat_fields(h):
        if isinstance(ft, VarbitT):
            L.append(f"    o.{n} = pk.bits(pos, vbits) if vbits else 0")
            L.append("    pos += vbits")
        else:
            w = field_width(ft)
            L.append(f"    o.{n} = {_from_int(n, ft, f'pk.bits(pos, {w})')}")
            L.append(f"    pos += {w}")
    L.append("    o._vbl = vbits")
    L.append("    o._v = True")
    L.append("    pk.pos = pos")
    return "\n".join(L)


def emit_source(h: HeaderT) -> str:
    """``E_<hdr>(parts, o)``: append the header's bytes when valid."""
    var = [n for n, t in flat_fields(h) if isinstance(t, VarbitT)]
    L = [f"def E_{h.pyname}(parts, o):", "    if not o._v: return"]
    if not var:
        fixed_w = sum(field_width(t) for _, t in flat_fields(h))
        terms = []
        shift = fixed_w
        for n, ft in flat_fields(h):
            w = field_width(ft)
            shift -= w
            val = f"(o.{n} & {(1 << w) - 1})" if (isinstance(ft, BitT) and ft.signed) else f"int(o.{n})" \
                if isinstance(ft, BoolT) else f"o.{n}"
            terms.append(f"({val} << {shift})" if shift else val)
        L.append(f"    parts.append(({' | '.join(terms) or '0'}).to_bytes({fixed_w // 8}, 'big'))")
        return "\n".join(L)
    L.append("    v = 0")
    L.append("    w = 0")
    for n, ft in flat_fields(h):
        if isinstance(ft, VarbitT):
            L.append(f"    v = (v << o._vbl) | (o.{n} & ((1 << o._vbl) - 1))")
            L.append("    w += o._vbl")
        else:
            fw = field_width(ft)
            L.append(f"    v = (v << {fw}) | (int(o.{n}) & {(1 << fw) - 1})")
            L.append(f"    w += {fw}")
    L.append("    parts.append(v.to_bytes(w // 8, 'big'))")
    return "\n".join(L)

