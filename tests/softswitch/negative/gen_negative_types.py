"""Write the negative programs about arrays of non-header types and generic functions.

Same format as ``gen_negative.py`` (whose template this reuses): each case is a complete
v1model program that p4c rejects, its error line marked ``/*ERR*/``.  Arrays of non-header
types (P4 spec "Arrays") have indexing and ``size`` only: the header-stack members and
methods are not defined on them.  A generic function's body is checked once for every ``T``
where it is declared (spec: operations on types that are type variables), whatever its calls
pass; an untyped literal binds ``T`` to ``int``, which a return type cannot be.  ``{#}`` needs
a cast to a header or header union type (p4c 1.2.5).  Run
``python tests/softswitch/negative/gen_negative_types.py`` after editing.
"""

from __future__ import annotations

from gen_negative import write_cases

ARR = "        bit<8>[4] a = { 1, 2, 3, 4 };\n"

CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "array_push_front": (
        "push_front on an array of bit<8> (a header-stack method)",
        "only defined for header stacks",
        {"apply": ARR + "        a.push_front(1); /*ERR*/"},
    ),
    "array_is_valid": (
        "isValid() on an array of bit<8>",
        "only defined for headers",
        {"apply": ARR + "        meta.flag = a.isValid(); /*ERR*/"},
    ),
    "array_next": (
        "next on an array of structs in a parser",
        "only defined for header stacks",
        {"top": "struct pair_t {\n    bit<8> x;\n    bit<8> y;\n}\n",
         "parser": "    state start {\n        pair_t[2] p;\n        p.next.x = 8w1; /*ERR*/\n"
                   "        transition accept;\n    }"},
    ),
    "array_last_index": (
        "lastIndex of an array of bool",
        "only defined for header stacks",
        {"parser": "    state start {\n        bool[2] b;\n        meta.m16 = (bit<16>)b.lastIndex; /*ERR*/\n"
                   "        transition accept;\n    }"},
    ),
    "array_index_out_of_range": (
        "a constant index past the end of an array",
        "Array index 4 larger or equal to array size 4",
        {"apply": ARR + "        meta.m8 = a[4]; /*ERR*/"},
    ),
    "array_element_type": (
        "an array assigned to an array of another element type",
        "type|mismatch|cannot assign",
        {"apply": ARR + "        bit<16>[4] w;\n        w = a; /*ERR*/"},
    ),
    "array_size_mismatch": (
        "an array assigned to an array of another size",
        "type|mismatch|cannot assign",
        {"apply": ARR + "        bit<8>[3] s;\n        s = a; /*ERR*/"},
    ),
    "generic_int_return": (
        "an untyped literal binds T to int, and T is the return type (p4c's issue2260-1)",
        "'int' type can only be unified",
        {"top": "T same<T>(in T x) {\n    return x;\n}\n",
         "apply": "        meta.m8 = same(5); /*ERR*/"},
    ),
    "generic_arithmetic_when_called": (
        "arithmetic on values of a type variable, although the only call passes bit<8>",
        "cannot be applied to T|not defined on T",
        {"top": "T twice<T>(in T x) {\n    return x + x; /*ERR*/\n}\n",
         "apply": "        meta.m8 = twice(meta.m8);"},
    ),
    "generic_method_when_called": (
        "a header method on a value of a type variable, although the only call passes a header",
        "no method setValid",
        {"top": "void mark<H>(inout H h) {\n    h.setValid(); /*ERR*/\n}\n",
         "apply": "        mark(hdr.ethernet);"},
    ),
    "invalid_header_without_cast": (
        "{#} without a cast to a header type (p4c gives it an unknown type)",
        "unknown type|Unknown type",
        {"apply": "        hdr.ethernet = {#}; /*ERR*/"},
    ),
    "invalid_header_cast_to_bits": (
        "{#} cast to a type that is not a header or header union",
        "cannot cast {#}",
        {"apply": "        meta.m8 = (bit<8>){#}; /*ERR*/"},
    ),
}


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
