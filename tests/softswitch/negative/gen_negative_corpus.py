"""Write the negative programs found by sweeping p4c's error corpus (``p4_16_errors``) beyond
the names the other generators cover.

Same format as ``gen_negative.py`` (whose template this reuses): each case is a complete
v1model program that p4c rejects, its error line marked ``/*ERR*/``.  Most cases put the error
in a declaration nothing uses, because p4c type-checks every declaration, used or not.  Run
``python tests/softswitch/negative/gen_negative_corpus.py`` after editing.
"""

from __future__ import annotations

from gen_negative import write_cases

CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "unused_control_empty_ctor_params": (
        "a type error in a control with an empty constructor parameter list that nothing "
        "instantiates",
        "type mismatch",
        {"top": "control Unused(inout bit<8> v)() {\n    apply {\n        bool b = v; /*ERR*/\n"
                "    }\n}\n"},
    ),
    "unused_control_ctor_param_read": (
        "a type error on a constructor parameter of a control nothing instantiates",
        "type mismatch",
        {"top": "control Unused(inout bit<8> v)(bit<4> k) {\n    apply {\n        v = k; /*ERR*/\n"
                "    }\n}\n"},
    ),
    "default_action_before_actions": (
        "a table whose default_action comes before its actions list (p4c resolves the "
        "properties in order)",
        "has no action list",
        {"decls": "    action nop() { }\n    table t { /*ERR*/\n        default_action = nop;\n"
                  "        actions = { nop; }\n    }",
         "apply": "        t.apply();"},
    ),
    "bit_width_too_large": (
        "a bit<N> wider than p4c's front end supports (2048 bits)",
        "does not support bitstrings this large",
        {"top": "const bit<4096> wide = 0; /*ERR*/\n"},
    ),
    "action_int_param": (
        "an action parameter of type int (p4c: actions cannot have parameters with type int)",
        "actions cannot have parameters with type int",
        {"top": "action scale(int k) { /*ERR*/\n}\n"},
    ),
    "int_param_with_direction": (
        "a function parameter of type int with a direction (int values are compile-time only)",
        "parameters with type int must be directionless",
        {"top": "bit<8> plus(in bit<8> a, in int k) { /*ERR*/\n    return a;\n}\n"},
    ),
    "parser_never_accepts": (
        "a parser whose states loop forever without reaching accept or reject",
        "never reaches accept or reject",
        {"top": "parser Spin(packet_in pk) { /*ERR*/\n    state start {\n"
                "        transition one;\n    }\n    state one {\n        transition start;\n"
                "    }\n}\n"},
    ),
    "extern_method_self_typed": (
        "a method of an extern taking a value of that extern's own type",
        "Self-referencing types not supported",
        {"top": "extern Chain {\n    Chain();\n    void link(in Chain other); /*ERR*/\n}\n"},
    ),
    "control_apply_in_action": (
        "a sub-control applied from inside an action",
        "apply cannot be called from actions",
        {"top": "control Leaf() {\n    apply { }\n}\n",
         "decls": "    Leaf() leaf;\n    action run_leaf() {\n        leaf.apply(); /*ERR*/\n    }",
         "apply": "        run_leaf();"},
    ),
    "unary_plus_on_bool": (
        "unary + applied to a bool",
        "+ cannot be applied to bool",
        {"apply": "        meta.flag = +meta.flag; /*ERR*/"},
    ),
    "newtype_cast_from_other_width": (
        "a cast to a new type (`type bit<8> N`) from a value of another width",
        "invalid cast from bit<16> to small_t",
        {"top": "type bit<8> small_t;\n",
         "apply": "        small_t s = (small_t)meta.m16; /*ERR*/"},
    ),
    "switch_in_action": (
        "a switch statement inside an action (p4c's BMv2 back end: not supported in actions)",
        "switch statements not supported in actions",
        {"decls": "    action pick() {\n        switch (meta.m8) { /*ERR*/\n"
                  "            8w0: { meta.m16 = 1; }\n        }\n    }",
         "apply": "        pick();"},
    ),
    "signed_literal_zero_width": (
        "a signed integer literal of width 0",
        "Width of signed type cannot be zero",
        {"apply": "        meta.m8 = (bit<8>)(int<8>)0s0; /*ERR*/"},
    ),
    "select_bool_key_bit_label": (
        "a select on a bool matched by a bit<1> label (true/false only)",
        "does not match a key of type bool",
        {"parser": "    state start {\n        packet.extract(hdr.ethernet);\n"
                   "        transition select(meta.flag) {\n            1w1: accept; /*ERR*/\n"
                   "            default: accept;\n        }\n    }"},
    ),
    "param_default_not_constant": (
        "a parameter default value computed by a function call",
        "must be a compile-time constant",
        {"top": "bit<8> seven() {\n    return 7;\n}\n"
                "bit<8> plus(in bit<8> a, in bit<8> k = seven()) { /*ERR*/\n    return a + k;\n}\n"},
    ),
    "tuple_of_control_type": (
        "a tuple whose element type is a control type (an object, not a value)",
        "cannot have type",
        {"top": "control Hook_t();\ntypedef tuple<Hook_t, bit<8>> pair_t; /*ERR*/\n"},
    ),
    "action_call_type_arguments": (
        "an action called with type arguments (actions are not generic)",
        "Cannot supply type parameters for an action invocation",
        {"decls": "    action bump() {\n        meta.m8 = meta.m8 + 1;\n    }",
         "apply": "        bump<bit<8>>(); /*ERR*/"},
    ),
    "hash_max_untyped_literal": (
        "hash() with an untyped integer literal as its max (nothing gives its type parameter a "
        "width)",
        "could not infer a width",
        {"apply": "        hash(meta.m16, HashAlgorithm.crc16, 16w0, { hdr.ethernet.etherType },\n"
                  "             0xFFFF); /*ERR*/"},
    ),
    "package_arity": (
        "a package instantiated with more arguments than it declares",
        "1 arguments supplied while 0 are expected",
        {"top": "package Empty_p();\nparser Nop_p() {\n    state start {\n"
                "        transition accept;\n    }\n}\nEmpty_p(Nop_p()) unused_pkg; /*ERR*/\n"},
    ),
    "newtype_implicit_conversion": (
        "a bit<8> value assigned to a new type over bit<8> without a cast",
        "cannot use bit<8> where tag_t is expected",
        {"top": "type bit<8> tag_t;\n",
         "apply": "        tag_t t = meta.m8; /*ERR*/"},
    ),
    "newtype_arithmetic": (
        "arithmetic on a value of a new type",
        "cannot be applied to an expression of type tag_t",
        {"top": "type bit<8> tag_t;\n",
         "apply": "        tag_t t = (tag_t)meta.m8;\n        tag_t u = t + (tag_t)8w1; /*ERR*/"},
    ),
    "ser_enum_value_out_of_range": (
        "a serializable enum member whose untyped value does not fit the underlying type",
        "is out of bounds of the underlying type",
        {"top": "enum bit<4> nibble_e {\n    LOW = 1,\n    HIGH = 16 /*ERR*/\n}\n"},
    ),
    "ser_enum_over_new_type": (
        "a serializable enum whose underlying type is a type-declared type",
        "Illegal type for enum",
        {"top": "type bit<8> tag_t;\nenum tag_t tag_e { /*ERR*/\n    A = 1\n}\n"},
    ),
    "entries_before_key": (
        "a table whose const entries come before its key (p4c resolves properties in order)",
        "Could not find type for table key",
        {"decls": "    action nop() { }\n    table t {\n        actions = { nop; }\n"
                  "        const entries = {\n            16w1 : nop();\n        }\n"
                  "        key = { hdr.ethernet.etherType : exact; } /*ERR*/\n    }",
         "apply": "        t.apply();"},
    ),
    "package_duplicate_type_parameter": (
        "a package type declaring one type parameter name twice",
        "duplicate type parameter T",
        {"top": "package Twice_p<T, T>(); /*ERR*/\n"},
    ),
    "new_type_of_tuple": (
        "a `type` declaration over a tuple (only base types can be given a new type)",
        "can only be applied to base types",
        {"top": "type tuple<bit<8>> pair_t; /*ERR*/\n"},
    ),
    "select_empty_range": (
        "a select case range whose end is below its start",
        "Range end is less than start",
        {"parser": "    state start {\n        packet.extract(hdr.ethernet);\n"
                   "        transition select(hdr.ethernet.etherType) {\n"
                   "            0x0806 .. 0x0800: accept; /*ERR*/\n"
                   "            default: accept;\n        }\n    }"},
    ),
    "match_annotation_not_a_match_kind": (
        "a struct field annotated @match with an expression instead of a match_kind",
        "@match must name one match_kind",
        {"top": "struct vs_t {\n    @match(ternary) bit<16> a;\n    @match(1 + 1) bit<8> b; /*ERR*/\n}\n"},
    ),
    "struct_value_cast": (
        "a cast of a struct value to a struct type (only list expressions are cast to structs)",
        "cast not supported",
        {"top": "struct pair_t {\n    bit<8> a;\n    bit<8> b;\n}\n",
         "apply": "        pair_t p = { 1, 2 };\n        pair_t q = (pair_t)p; /*ERR*/"},
    ),
    "extern_function_type_arguments": (
        "an extern function called with more type arguments than it declares",
        "2 type arguments supplied while 1 are expected",
        {"apply": "        random<bit<8>, bit<8>>(meta.m8, 0, 7); /*ERR*/"},
    ),
    "generic_extern_without_type_arguments": (
        "a parameter of a generic extern type that names no type arguments",
        "a generic type needs its type arguments",
        {"top": "extern Box<T> {\n    Box();\n    T get();\n}\n"
                "control Holder(Box b) { /*ERR*/\n    apply { }\n}\n"},
    ),
    "varbit_lpm_key": (
        "a varbit field used as an lpm table key",
        "cannot be matched with lpm",
        {"top": "header opt_h {\n    varbit<32> data;\n}\n",
         "decls": "    opt_h o;\n    table t {\n        key = { o.data : lpm; } /*ERR*/\n"
                  "        actions = { NoAction; }\n    }",
         "apply": "        t.apply();"},
    ),
    "param_default_wrong_type": (
        "a parameter default of another type than the parameter (nothing calls the function)",
        "cannot use bool where bit<8> is expected",
        {"top": "bit<8> plus(in bit<8> a, in bit<8> k = true) { /*ERR*/\n    return a + k;\n}\n"},
    ),
}


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
