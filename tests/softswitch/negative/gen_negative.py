"""Write the negative programs of this folder: one compile error each, marked on its line.

Every case is a complete v1model program that p4c rejects with an error (not a
warning).  The offending line carries ``/*ERR*/`` in the case text; it is removed
and its line number goes into the program's first line::

    // expect-error: <line>: <alternatives separated by |, matched case-insensitively>

Run ``python tests/softswitch/negative/gen_negative.py`` after editing; the .p4
files are the checked-in result.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent

TEMPLATE = """\
#include <core.p4>
#include <v1model.p4>

header ethernet_t {{
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}}

struct headers_t {{
    ethernet_t ethernet;
}}

struct metadata_t {{
    bit<8>  m8;
    bit<16> m16;
    bool    flag;
}}
{top}
parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {{
{parser}
}}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {{
    apply {{ }}
}}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {{
{decls}
    apply {{
{apply}
    }}
}}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {{
    apply {{ }}
}}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {{
    apply {{ }}
}}

control MyDeparser(packet_out packet, in headers_t hdr) {{
    apply {{
{deparser}
    }}
}}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
"""

PARSER = """\
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }"""
APPLY = "        standard_metadata.egress_spec = 9w1;"
DEPARSER = "        packet.emit(hdr.ethernet);"

# name -> (what p4c says, in words; match alternatives; template parts)
CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "undeclared_name": (
        "use of a name that is declared nowhere",
        "undefined_var",
        {"apply": "        meta.m8 = undefined_var; /*ERR*/"},
    ),
    "width_mismatch_assign": (
        "bit<16> assigned to bit<8> without a cast",
        "bit<16>|bit<8>|width|cast",
        {"apply": "        meta.m8 = meta.m16; /*ERR*/"},
    ),
    "width_mismatch_binop": (
        "arithmetic on operands of different widths",
        "bit<16>|bit<8>|width|cast",
        {"apply": "        meta.m16 = meta.m16 + meta.m8; /*ERR*/"},
    ),
    "assign_in_param": (
        "a field of an in parameter is read-only",
        "read-only|readonly|in parameter|assign|l-?value|writ|target",
        {"deparser": "        hdr.ethernet.etherType = 16w1; /*ERR*/\n        packet.emit(hdr.ethernet);"},
    ),
    "extern_arity": (
        "mark_to_drop with two arguments (no overload takes two)",
        "argument|arity|parameter",
        {"apply": "        mark_to_drop(standard_metadata, standard_metadata); /*ERR*/"},
    ),
    "action_arity": (
        "action called with one argument too many",
        "argument|arity|parameter",
        {
            "decls": "    action set_port(bit<9> port) {\n"
                     "        standard_metadata.egress_spec = port;\n    }",
            "apply": "        set_port(9w1, 9w2); /*ERR*/",
        },
    ),
    "action_arg_type": (
        "bool passed for a bit<9> action parameter",
        "bool",
        {
            "decls": "    action set_port(bit<9> port) {\n"
                     "        standard_metadata.egress_spec = port;\n    }",
            "apply": "        set_port(true); /*ERR*/",
        },
    ),
    "default_action_unbound": (
        "default_action leaves a directionless action parameter unbound",
        "argument|param|bound|port",
        {
            "decls": "    action set_port(bit<9> port) {\n"
                     "        standard_metadata.egress_spec = port;\n    }\n"
            "    table t {\n        key = { hdr.ethernet.dstAddr: exact; }\n"
            "        actions = { set_port; }\n        default_action = set_port(); /*ERR*/\n    }",
            "apply": "        t.apply();",
        },
    ),
    "table_in_parser": (
        "tables cannot be declared in a parser",
        "table|syntax|unexpected",
        {
            "parser": "    table t { /*ERR*/\n        key = { hdr.ethernet.dstAddr: exact; }\n"
            "        actions = { NoAction; }\n    }\n" + PARSER
        },
    ),
    "exit_in_parser": (
        "exit is not a parser statement",
        "exit|syntax|unexpected",
        {
            "parser": "    state start {\n        packet.extract(hdr.ethernet);\n        exit; /*ERR*/\n"
            "        transition accept;\n    }"
        },
    ),
    "unknown_extern_function": (
        "call of an extern function that is not declared",
        "frobnicate",
        {"apply": "        frobnicate(meta.m8); /*ERR*/"},
    ),
    "unknown_extern_type": (
        "instantiation of an extern type that is not declared",
        "Frobnicator|syntax|unexpected",
        {"decls": "    Frobnicator<bit<8>>(4) f; /*ERR*/"},
    ),
    "undefined_type": (
        "local variable of an undeclared type",
        "foo_t|syntax|unexpected",
        {"apply": "        foo_t x; /*ERR*/"},
    ),
    "duplicate_declaration": (
        "two actions with the same name in one control",
        "duplicat|redeclar|already",
        {"decls": "    action a() { }\n    action a() { } /*ERR*/"},
    ),
    "duplicate_local": (
        "two local variables with the same name in one block",
        "duplicat|redeclar|already",
        {"apply": "        bit<8> x = 1;\n        bit<8> x = 2; /*ERR*/"},
    ),
    "select_key_count": (
        "a select label with two values for one key",
        "select|tuple|key|label|expression|match",
        {
            "parser": "    state start {\n        packet.extract(hdr.ethernet);\n"
            "        transition select(hdr.ethernet.etherType) {\n"
            "            (16w0x800, 16w1): accept; /*ERR*/\n            default: accept;\n        }\n    }"
        },
    ),
    "bool_condition_bit": (
        "a bit<8> used as an if condition",
        "bool",
        {"apply": "        if (meta.m8) { /*ERR*/\n            meta.m16 = 16w1;\n        }"},
    ),
    "bool_assigned_to_bit": (
        "a bool assigned to a bit<8>",
        "bool",
        {"apply": "        meta.m8 = meta.flag; /*ERR*/"},
    ),
    "no_such_field": (
        "a header field that does not exist",
        "vlan",
        {"apply": "        hdr.ethernet.vlan = 16w1; /*ERR*/"},
    ),
    "return_value_in_action": (
        "return with a value inside an action",
        "return",
        {"decls": "    action a() {\n        return 8w5; /*ERR*/\n    }", "apply": "        a();"},
    ),
    "assign_to_constant": (
        "assignment to a compile-time constant",
        "const|assign|l-?value|read-only|target",
        {"top": "\nconst bit<8> C = 8w1;\n", "apply": "        C = 8w2; /*ERR*/"},
    ),
    "undeclared_state": (
        "transition to a state that does not exist",
        "nowhere",
        {
            "parser": "    state start {\n        packet.extract(hdr.ethernet);\n"
            "        transition nowhere; /*ERR*/\n    }"
        },
    ),
    "extract_non_header": (
        "extract of a bit<8> instead of a header",
        "header|extract",
        {
            "parser": "    state start {\n        packet.extract(meta.m8); /*ERR*/\n"
                      "        transition accept;\n    }"
        },
    ),
    "unknown_match_kind": (
        "a key with a match kind that is not declared",
        "fuzzy",
        {
            "decls": "    table t {\n        key = { hdr.ethernet.dstAddr: fuzzy; } /*ERR*/\n"
            "        actions = { NoAction; }\n    }",
            "apply": "        t.apply();",
        },
    ),
    "negative_shift": (
        "shift by a negative constant (p4c: negative shift amount)",
        "shift|negative",
        {"apply": "        meta.m8 = meta.m8 << -1; /*ERR*/"},
    ),
    "slice_out_of_range": (
        "bit slice [8:0] of a bit<8>",
        "slice|range|bound|index|width",
        {"apply": "        meta.m16 = (bit<16>)meta.m8[8:0]; /*ERR*/"},
    ),
    "duplicate_parameter": (
        "two parameters of one function with the same name",
        "duplicate parameter name a",
        {"top": "bit<8> pick(in bit<8> a, in bit<8> a) { /*ERR*/\n    return a;\n}\n",
         "apply": "        meta.m8 = pick(8w1, 8w2);"},
    ),
    "duplicate_type_parameter": (
        "a generic function with the type parameter T twice",
        "duplicate type parameter T",
        {"top": "T first<T, T>(in T a) { /*ERR*/\n    return a;\n}\n",
         "apply": "        meta.m8 = first(meta.m8);"},
    ),
    "generic_type_not_inferable": (
        "no argument decides the type argument T of a generic function",
        "cannot infer type argument T",
        {"top": "T zero<T>() {\n    return 0;\n}\n",
         "apply": "        meta.m8 = zero(); /*ERR*/"},
    ),
    "tuple_index_out_of_range": (
        "index 2 of a tuple of two elements",
        "out of range",
        {"apply": "        tuple<bit<8>, bit<16>> t = { 8w1, 16w2 };\n"
                   "        meta.m8 = t[2]; /*ERR*/"},
    ),
    "error_select_mask": (
        "a mask on an error value in a select label",
        "error.X labels|error",
        {"parser": "    state start {\n        packet.extract(hdr.ethernet);\n"
                    "        transition select(error.NoError) {\n"
                    "            error.NoError: accept;\n"
                    "            1 &&& 1: reject; /*ERR*/\n        }\n    }"},
    ),
    "void_variable": (
        "a local variable of type void",
        "type void",
        {"apply": "        void v; /*ERR*/"},
    ),
    "digest_receiver_bool": (
        "digest's receiver is bit<32>; a bool is not converted",
        "bool|bit<32>",
        {"apply": "        digest<metadata_t>(true, meta); /*ERR*/"},
    ),
    "division_at_run_time": (
        "a division p4c's mid end cannot fold or strength-reduce (BMv2 has no division)",
        "could not evaluate at compilation time",
        {"apply": "        meta.m8 = meta.m8 / 8w3; /*ERR*/"},
    ),
    "modulo_by_a_field": (
        "x % y with y a field (p4c: could not evaluate at compilation time)",
        "could not evaluate at compilation time",
        {"apply": "        meta.m16 = meta.m16 % meta.m16; /*ERR*/"},
    ),
    "extern_inout_parameter": (
        "a function parameter of an extern type with a direction",
        "extern values cannot be passed",
        {"top": "void bump(inout counter<bit<32>> c) { /*ERR*/\n}\n"},
    ),
    "string_variable": (
        "a local variable of type string (strings are compile-time only)",
        "type string",
        {"apply": "        string s = \"x\"; /*ERR*/"},
    ),
    "duplicate_extern_method": (
        "an extern with two methods of one name and one number of parameters",
        "duplicate method",
        {"top": "extern Box {\n    Box();\n    void put(in bit<8> v);\n"
                "    void put(in bit<16> v); /*ERR*/\n}\n"},
    ),
    "self_instantiating_control": (
        "a control that instantiates itself (instances would nest forever)",
        "Self-referencing types not supported",
        {"top": "control Loop() {\n    Loop() inner; /*ERR*/\n    apply { inner.apply(); }\n}\n"},
    ),
    "self_applying_control": (
        "a control that applies its own type (an implicit instance of itself)",
        "Self-referencing types not supported",
        {"top": "control Loop() {\n    apply {\n        Loop.apply(); /*ERR*/\n    }\n}\n"},
    ),
    "function_missing_return": (
        "a function with a result that falls off its end on one path (nothing calls it)",
        "does not return a value on all paths",
        {"top": "bit<8> pick(in bit<8> a, in bit<8> b) { /*ERR*/\n"
                "    if (a > b) {\n        return a;\n    }\n}\n"},
    ),
    "tuple_header_field": (
        "a header field of a tuple type (through a typedef)",
        "cannot have type tuple",
        {"top": "typedef tuple<bit<8>, bit<8>> pair_t;\n"
                "header pair_h {\n    pair_t both; /*ERR*/\n}\n"},
    ),
    "union_from_list": (
        "a header_union variable initialised from a list expression",
        "header_union",
        {"top": "header a_h {\n    bit<8> a;\n}\nheader b_h {\n    bit<8> b;\n}\n"
                "header_union ab_u {\n    a_h a;\n    b_h b;\n}\n",
         "apply": "        ab_u u = { { 8w1 }, { 8w2 } }; /*ERR*/"},
    ),
    "action_param_of_control_type": (
        "an action parameter of a control type (controls are not values an action can take)",
        "parameter cannot have type control",
        {"top": "control Hook();\naction run_hook(in Hook h) { /*ERR*/\n}\n"},
    ),
    "struct_instantiated": (
        "an instantiation of a struct type (only externs, controls, parsers are objects)",
        "cannot allocate objects of type struct",
        {"top": "struct pair_t {\n    bit<8> a;\n}\npair_t() pair_obj; /*ERR*/\n"},
    ),
    "struct_field_of_parser_type": (
        "a struct field whose type is a parser type",
        "cannot have type 'parser",
        {"top": "parser Sub_t();\nstruct holder_t {\n    Sub_t p; /*ERR*/\n}\n"},
    ),
    "instance_argument_not_constant": (
        "a sub-control instantiated with a run-time parameter of the enclosing control",
        "cannot evaluate to a compile-time constant",
        {"top": "control Leaf(inout bit<8> v)(bit<8> k) {\n    apply { v = k; }\n}\n"
                "control Outer(inout bit<8> v, in bit<8> z) {\n    Leaf(z) leaf; /*ERR*/\n"
                "    apply { leaf.apply(v); }\n}\n",
         "decls": "    Outer() outer;",
         "apply": "        outer.apply(meta.m8, meta.m8);"},
    ),
    "subparser_argument_type": (
        "a sub-parser applied with an argument wider than its parameter (no implicit cast)",
        "type mismatch",
        {"top": "parser Peek(packet_in pk, in bit<8> tag) {\n"
                "    state start {\n        transition accept;\n    }\n}\n",
         "parser": "    state start {\n        packet.extract(hdr.ethernet);\n"
                   "        Peek.apply(packet, hdr.ethernet.etherType); /*ERR*/\n"
                   "        transition accept;\n    }"},
    ),
    "extern_method_shadows_type_parameter": (
        "a method of a generic extern declaring the extern's own type parameter again",
        "already a type parameter",
        {"top": "extern Box<D> {\n    Box();\n    void put<D>(in D d); /*ERR*/\n}\n"},
    ),
    "param_of_control_decl_type": (
        "a constructor parameter typed by a control declaration (an object, not a type), in a "
        "control nothing instantiates",
        "parameter cannot have type control",
        {"top": "control Leaf() {\n    apply { }\n}\n"
                "control Holder()(Leaf l) { /*ERR*/\n    apply { }\n}\n"},
    ),
}


def render(parts: dict[str, str]) -> str:
    return TEMPLATE.format(top=parts.get("top", ""), parser=parts.get("parser", PARSER),
                           decls=parts.get("decls", ""), apply=parts.get("apply", APPLY),
                           deparser=parts.get("deparser", DEPARSER))


def write_cases(cases: dict[str, tuple[str, str, dict[str, str]]]) -> None:
    """One negative program per case; its first line names the line of the ``/*ERR*/`` mark."""
    for name, (why, expect, parts) in cases.items():
        lines = render(parts).splitlines()
        marked = [i for i, ln in enumerate(lines) if "/*ERR*/" in ln]
        assert len(marked) == 1, name
        lines[marked[0]] = lines[marked[0]].replace(" /*ERR*/", "")
        # +2: the two header lines come first
        header = [f"// expect-error: {marked[0] + 3}: {expect}", f"// {why} (p4c rejects this)"]
        (HERE / f"{name}.p4").write_text("\n".join(header + lines) + "\n")


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
