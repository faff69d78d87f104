"""Write the negative programs about arrays of non-header types and generic functions.

Same format as ``gen_negative.py`` (whose template this reuses): each case is a complete
v1model program that p4c rejects, its error line marked ``/*ERR*/``.  Arrays of non-header
types (P4 spec "Arrays") have indexing and ``size`` only: the header-stack members and
methods are not defined on them.  Run ``python tests/softswitch/negative/gen_negative_types.py``
after editing.
"""

from __future__ import annotations

from pathlib import Path

from gen_negative import render

HERE = Path(__file__).parent
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
        "out of range",
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
}


def main() -> None:
    for name, (why, expect, parts) in CASES.items():
        lines = render(parts).splitlines()
        marked = [i for i, ln in enumerate(lines) if "/*ERR*/" in ln]
        assert len(marked) == 1, name
        lines[marked[0]] = lines[marked[0]].replace(" /*ERR*/", "")
        header = [f"// expect-error: {marked[0] + 3}: {expect}", f"// {why} (p4c rejects this)"]
        (HERE / f"{name}.p4").write_text("\n".join(header + lines) + "\n")


if __name__ == "__main__":
    main()
