"""Write the negative programs about default values (``...``; P4_16 "default values") and
values of type ``list<T>``.

Same format as ``gen_negative.py`` (whose template this reuses).  ``...`` in a list expression
must be its last item, a list expression with ``...`` may not hold more items than its target
has fields, and a header_union is never made from a list expression.  p4c has no default
varbit value, refuses ``{..., ...}`` for a type with a varbit field of its own, and refuses a
default value as a return value, an operand of ``==``/``!=`` or a call argument
(``testdata/p4_16_errors/default-*-err.p4``).  A ``list<T>`` value cannot be indexed and only a
list expression may be cast to ``list<T>``.
Run ``python tests/softswitch/negative/gen_negative_dots.py`` after editing.
"""

from __future__ import annotations

from gen_negative import write_cases

PAIR = "struct pair_t {\n    bit<8> a;\n    bit<8> b;\n}\n"
UNION = "header_union eth_u {\n    ethernet_t e;\n}\n"
VB = ("header vb_h {\n    bit<8> n;\n    varbit<16> v;\n}\n"
      "struct vb_s {\n    bit<8> n;\n    varbit<16> v;\n}\n")

CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "dots_not_last": (
        "'...' before another item of a list expression",
        "must be the last",
        {"top": PAIR, "apply": "        pair_t p = { ..., 8w1 }; /*ERR*/"},
    ),
    "dots_too_many_items": (
        "a list expression with '...' holding more items than the struct has fields",
        "cannot initialise pair_t",
        {"top": PAIR, "apply": "        pair_t p = { 8w1, 8w2, 8w3, ... }; /*ERR*/"},
    ),
    "dots_union_from_list": (
        "{...} (a list expression) for a header_union",
        "header_union",
        {"top": UNION, "apply": "        eth_u u = { ... }; /*ERR*/"},
    ),
    "dots_varbit_header": (
        "a list expression with '...' for a header holding a varbit field",
        "containing varbit fields cannot be initialized using",
        {"top": VB, "apply": "        vb_h h = { 8w1, ... }; /*ERR*/"},
    ),
    "dots_varbit_default": (
        "'...' for a struct holding a varbit field (p4c has no default varbit)",
        "no default value for varbit",
        {"top": VB, "apply": "        vb_s s = ...; /*ERR*/"},
    ),
    "dots_in_return": (
        "a list expression with '...' as a function's return value",
        "cannot be used in a return statement",
        {"top": PAIR + "pair_t mk() {\n    return { 8w1, ... }; /*ERR*/\n}\n",
         "apply": "        meta.m8 = mk().a;"},
    ),
    "dots_in_equality": (
        "a struct expression with '...' compared with ==",
        "cannot be used in operation ==",
        {"top": PAIR, "apply": "        pair_t p = { 8w1, 8w2 };\n"
                               "        meta.flag = p == { a = 8w1, ... }; /*ERR*/"},
    ),
    "dots_in_call_argument": (
        "{...} passed to a function",
        "cannot be used in a call argument",
        {"top": PAIR + "bit<8> first(in pair_t p) {\n    return p.a;\n}\n",
         "apply": "        meta.m8 = first({ ... }); /*ERR*/"},
    ),
    "stack_list_size": (
        "a list expression of three headers for a stack of two",
        "has to match stack size",
        {"apply": "        ethernet_t[2] st = { hdr.ethernet, hdr.ethernet, hdr.ethernet }; /*ERR*/"},
    ),
    "list_indexed": (
        "an index of a value of type list<T> (p4c: indexing applied to a non-array, non-tuple type)",
        "cannot be indexed",
        {"apply": "        list<bit<8>> l = { 8w1, 8w2 };\n        meta.m8 = l[0]; /*ERR*/"},
    ),
    "list_cast_of_value": (
        "a cast to list<T> of something other than a list expression",
        "casts to list not supported",
        {"apply": "        meta.m8 = 8w0;\n        for (bit<8> x in (list<bit<8>>)meta.m8) { /*ERR*/\n"
                  "            meta.m16 = 16w1;\n        }"},
    ),
}


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
