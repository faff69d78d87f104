"""Write the negative programs about tables, entries and control-plane names.

Same format as ``gen_negative.py`` (whose template this reuses): each case is a complete
v1model program that p4c rejects, its error line marked ``/*ERR*/``.  The cases follow what
p4c's BMv2 back end checks on table entries (an lpm mask must be a prefix, optional keys take
no mask, a range only on range keys...), its ``EntryPriorities`` pass, and its duplicate
control-plane name checks.  Run ``python tests/softswitch/negative/gen_negative_tables.py``
after editing.
"""

from __future__ import annotations

from gen_negative import write_cases

ACTIONS = ("    action set_port(bit<9> port) {\n        standard_metadata.egress_spec = port;\n    }\n"
           "    action other() {\n        meta.m8 = 8w1;\n    }\n")


def table(key: str, entries: str, props: str = "", const: bool = True,
          actions: str = "set_port; other; NoAction;") -> dict[str, str]:
    """A control with one table ``t`` whose key, properties and entries are given."""
    kw = "const entries" if const else "entries"
    body = (f"    table t {{\n        key = {{\n{key}\n        }}\n        actions = {{ {actions} }}\n"
            f"{props}        {kw} = {{\n{entries}\n        }}\n    }}")
    return {"decls": ACTIONS + body, "apply": "        t.apply();"}


ET_EXACT = "            hdr.ethernet.etherType: exact;"
ET_TERNARY = "            hdr.ethernet.etherType: ternary;"

CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "key_complex_without_name": (
        "a computed key expression without @name (p4c cannot name its match field)",
        "Complex key expression requires a @name annotation",
        table("            hdr.ethernet.etherType + 16w1: exact; /*ERR*/",
              "            16w0x0800 : set_port(9w1);")),
    "entry_lpm_mask_not_prefix": (
        "an lpm entry whose mask is not a prefix (p4c: invalid mask for LPM key)", "lpm|prefix|mask",
        table("            hdr.ethernet.etherType: lpm;",
              "            16w0x0800 &&& 16w0x0f0f : set_port(9w1); /*ERR*/")),
    "entry_optional_with_mask": (
        "an optional key given a mask", "optional|mask",
        table("            hdr.ethernet.etherType: optional;",
              "            16w0x0800 &&& 16w0xff00 : set_port(9w1); /*ERR*/")),
    "entry_mask_on_exact": (
        "an exact key given a mask", "exact|mask",
        table(ET_EXACT, "            16w0x0800 &&& 16w0xff00 : set_port(9w1); /*ERR*/")),
    "entry_range_on_ternary": (
        "a ternary key given a range", "ternary|range",
        table(ET_TERNARY, "            16w1 .. 16w5 : set_port(9w1); /*ERR*/")),
    "entry_empty_range": (
        "a range whose low end is above its high end", "range|empty",
        table("            hdr.ethernet.etherType: range;",
              "            16w10 .. 16w5 : set_port(9w1); /*ERR*/")),
    "entry_arity": (
        "an entry with two values for a table with one key", "key|entry|values",
        table(ET_EXACT, "            (16w1, 16w2) : set_port(9w1); /*ERR*/")),
    "entries_without_key": (
        "entries in a table that has no key", "key",
        {"decls": ACTIONS + "    table t {\n        actions = { set_port; NoAction; }\n"
                  "        const entries = {\n            _ : set_port(9w1); /*ERR*/\n        }\n    }",
         "apply": "        t.apply();"}),
    "entry_defaultonly_action": (
        "an entry that runs an @defaultonly action", "defaultonly",
        table(ET_EXACT, "            16w1 : other(); /*ERR*/", actions="set_port; @defaultonly other;")),
    "default_tableonly_action": (
        "a default action that is @tableonly", "tableonly|default",
        {"decls": ACTIONS + "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { @tableonly set_port; NoAction; }\n"
                  "        default_action = set_port(9w1); /*ERR*/\n    }",
         "apply": "        t.apply();"}),
    "entry_action_args": (
        "an entry that leaves an action-data parameter unbound", "argument|param",
        table(ET_EXACT, "            16w1 : set_port(); /*ERR*/")),
    "const_entries_priority": (
        "priority = N on const entries (p4c: const entries cannot have priorities)", "priorit",
        table(ET_TERNARY, "            priority = 10: 16w1 : set_port(9w1); /*ERR*/")),
    "entries_first_without_priority": (
        "initial entries where only a later entry has a priority", "priority",
        table(ET_TERNARY, "            16w1 : set_port(9w1); /*ERR*/\n"
                          "            priority = 5: 16w2 : set_port(9w2);", const=False)),
    "entries_priority_on_exact": (
        "priorities on a table whose keys need none", "priorit",
        {"decls": ACTIONS + "    table t { /*ERR*/\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { set_port; NoAction; }\n        entries = {\n"
                  "            priority = 3: 16w1 : set_port(9w1);\n        }\n    }",
         "apply": "        t.apply();"}),
    "entries_priority_overflow": (
        "priorities that would go below zero (p4c: overflow in priority computation)", "overflow|priorit",
        {"decls": ACTIONS + "    table t { /*ERR*/\n        key = { hdr.ethernet.etherType: ternary; }\n"
                  "        actions = { set_port; NoAction; }\n        priority_delta = 10;\n"
                  "        entries = {\n            priority = 12: 16w1 : set_port(9w1);\n"
                  "            16w2 : set_port(9w2);\n            16w3 : set_port(9w3);\n        }\n    }",
         "apply": "        t.apply();"}),
    "duplicate_key_name": (
        "two keys of one table with the same name", "duplicate|key",
        table("            hdr.ethernet.etherType: exact;\n"
              "            meta.m16: exact @name(\"hdr.ethernet.etherType\"); /*ERR*/",
              "            (16w1, 16w2) : set_port(9w1);")),
    "conflicting_action_names": (
        "two actions with one control-plane name (p4c: conflicting control plane name)",
        "conflicting|duplicate",
        {"decls": "    @name(\".foo\") action a1() {\n        meta.m8 = 8w1;\n    }\n"
                  "    @name(\".foo\") action a2() { /*ERR*/\n        meta.m8 = 8w2;\n    }\n"
                  "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { a1; a2; NoAction; }\n    }",
         "apply": "        t.apply();"}),
    "duplicate_table_property": (
        "a table property given twice", "duplicate|property",
        {"decls": ACTIONS + "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { set_port; NoAction; }\n        size = 4;\n"
                  "        size = 8; /*ERR*/\n    }",
         "apply": "        t.apply();"}),
    "negative_table_size": (
        "a negative table size", "size|negative",
        {"decls": ACTIONS + "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { set_port; NoAction; }\n        size = -1; /*ERR*/\n    }",
         "apply": "        t.apply();"}),
    "key_of_header_type": (
        "a table key that is a whole header", "key",
        {"decls": ACTIONS + "    table t {\n        key = { hdr.ethernet: exact; } /*ERR*/\n"
                  "        actions = { set_port; NoAction; }\n    }",
         "apply": "        t.apply();"}),
    "table_apply_in_action": (
        "a table applied inside an action", "action|apply",
        {"decls": ACTIONS + "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { set_port; NoAction; }\n    }\n"
                  "    action runs_table() {\n        t.apply(); /*ERR*/\n    }",
         "apply": "        runs_table();"}),
    "switch_default_not_last": (
        "a switch whose default label is not the last one", "default|last",
        {"apply": "        switch (meta.m8) {\n            default: { meta.m16 = 16w1; }\n"
                  "            8w1: { meta.m16 = 16w2; } /*ERR*/\n        }"}),
    "enum_duplicate_member": (
        "an enum with the same member twice", "duplicate",
        {"top": "\nenum Color { RED, RED } /*ERR*/\n"}),
    "error_duplicate_member": (
        "an error member declared twice", "duplicate",
        {"top": "\nerror { BadThing, BadThing } /*ERR*/\n"}),
    "extern_ctor_arg_type": (
        "a counter constructed with a number where CounterType is expected", "CounterType|type",
        {"decls": "    counter(32w16, 5) c; /*ERR*/", "apply": "        c.count(32w0);"}),
    "update_checksum_in_ingress": (
        "update_checksum called in ingress (BMv2 computes checksums only in its checksum stages)",
        "checksum",
        {"apply": "        update_checksum(true, { hdr.ethernet.dstAddr }, hdr.ethernet.etherType, "
                  "HashAlgorithm.csum16); /*ERR*/"}),
    "direct_counter_two_tables": (
        "one direct_counter given to two tables", "direct|table",
        {"decls": "    direct_counter(CounterType.packets) dc;\n"
                  "    table t1 {\n        key = { meta.m8: exact; }\n        actions = { NoAction; }\n"
                  "        counters = dc;\n    }\n"
                  "    table t2 {\n        key = { meta.m16: exact; }\n        actions = { NoAction; }\n"
                  "        counters = dc; /*ERR*/\n    }",
         "apply": "        t1.apply();\n        t2.apply();"}),
    "default_action_other_binding": (
        "a default action binding its inout parameter to another field than the actions list",
        "directional|match",
        {"decls": "    action bump(inout bit<8> x) {\n        x = x + 8w1;\n    }\n"
                  "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { bump(meta.m8); }\n"
                  "        default_action = bump(meta.m16[7:0]); /*ERR*/\n    }",
         "apply": "        t.apply();"}),
    "push_front_negative": (
        "push_front by a negative count", "negative|push_front",
        {"top": "\nheader item_t {\n    bit<8> v;\n}\n",
         "apply": "        item_t[2] s;\n        s.push_front(-1); /*ERR*/"}),
    "entry_bool_for_bit_key": (
        "a bool entry value for a bit<16> key (p4c: cannot unify bool and bit<16>)", "bool|type",
        table(ET_EXACT, "            true : set_port(9w1); /*ERR*/")),
    "entry_number_for_bool_key": (
        "an integer entry value for a bool key", "int|bool|type",
        table("            hdr.ethernet.isValid(): exact;", "            1 : set_port(9w1); /*ERR*/")),
    "entry_other_directional_binding": (
        "an entry binding an inout parameter to another field than the actions list does",
        "directional|match",
        {"decls": "    action bump(inout bit<8> x, bit<8> by) {\n        x = x + by;\n    }\n"
                  "    table t {\n        key = { hdr.ethernet.etherType: exact; }\n"
                  "        actions = { bump(meta.m8); }\n"
                  "        const entries = {\n"
                  "            16w1 : bump(meta.m16[7:0], 8w2); /*ERR*/\n        }\n    }",
         "apply": "        t.apply();"}),
}


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
