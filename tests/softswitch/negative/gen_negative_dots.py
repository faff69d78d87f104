"""Write the negative programs about default values (``...``; P4_16 "default values").

Same format as ``gen_negative.py`` (whose template this reuses).  ``...`` in a list expression
must be its last item, a list expression with ``...`` may not hold more items than its target
has fields, and a header_union is never made from a list expression (p4c rejects all three).
Run ``python tests/softswitch/negative/gen_negative_dots.py`` after editing.
"""

from __future__ import annotations

from gen_negative import write_cases

PAIR = "struct pair_t {\n    bit<8> a;\n    bit<8> b;\n}\n"
UNION = "header_union eth_u {\n    ethernet_t e;\n}\n"

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
}


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
