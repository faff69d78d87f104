"""Write the negative programs of the fourth sweep of p4c's error corpus (``p4_16_errors``):
top-level names, package arguments and annotations.

Same format as ``gen_negative.py`` (whose template this reuses).  Run
``python tests/softswitch/negative/gen_negative_corpus2.py`` after editing.
"""

from __future__ import annotations

from gen_negative import write_cases

_PACK = ("parser Filter_t(out bool keep);\npackage Pack(Filter_t f);\n"
         "parser Wrong(in bit<8> x) {\n    state start {\n        transition accept;\n    }\n}\n")

CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "redeclaration_control_function": (
        "a function with the name of a control (one namespace for every top-level name)",
        "Re-declaration of Twice with different type",
        {"top": "control Twice(inout bit<8> v) {\n    apply { }\n}\n"
                "bool Twice() { /*ERR*/\n    return true;\n}\n"},
    ),
    "redeclaration_constant_type": (
        "a constant with the name of a struct type",
        "Re-declaration of pair_t with different type",
        {"top": "struct pair_t {\n    bit<8> a;\n}\nconst bit<8> pair_t = 1; /*ERR*/\n"},
    ),
    "duplicate_control_type": (
        "two control type declarations with one name",
        "duplicate declaration of Hook_t",
        {"top": "control Hook_t();\ncontrol Hook_t(in bit<8> x); /*ERR*/\n"},
    ),
    "package_argument_direction": (
        "a parser passed to a package whose parser type declares another direction",
        "direction mismatch",
        {"top": _PACK + "Pack(Wrong()) pack; /*ERR*/\n"},
    ),
    "package_argument_kind": (
        "a control passed where a package expects a parser",
        "a control is not a parser",
        {"top": "parser Filter_t(out bool keep);\npackage Pack(Filter_t f);\n"
                "control NotParser(out bool keep) {\n    apply { keep = true; }\n}\n"
                "Pack(NotParser()) pack; /*ERR*/\n"},
    ),
    "package_argument_type": (
        "a control whose parameter type differs from the control type once the package's "
        "explicit type argument is substituted",
        "has another type than in Count_t",
        {"top": "control Count_t<T>(inout T v);\npackage PackT<T>(Count_t<T> c);\n"
                "control Bump(inout bit<8> v) {\n    apply { v = v + 1; }\n}\n"
                "PackT<bit<16>>(Bump()) pack; /*ERR*/\n"},
    ),
    "package_argument_value_type": (
        "a parser passed for a package parameter of a tuple type",
        "cannot pass parser Empty as p of type tuple",
        {"top": "package PackV(tuple<> p);\nparser Empty() {\n    state start {\n"
                "        transition accept;\n    }\n}\nPackV(Empty()) pack; /*ERR*/\n"},
    ),
    "package_instance_type_argument": (
        "a package instance whose inferred type argument differs from the one the enclosing "
        "package's explicit type argument gives",
        "its type argument IH differs",
        {"top": "parser Prs_t<IH>(out IH h);\npackage Inner<IH>(Prs_t<IH> p);\n"
                "package Outer<IH>(Inner<IH> i);\nstruct pair_t {\n    bit<8> a;\n}\n"
                "parser Fill(out pair_t h) {\n    state start {\n        h.a = 1;\n"
                "        transition accept;\n    }\n}\nInner(Fill()) inner;\n"
                "Outer<bit<8>>(inner) outer; /*ERR*/\n"},
    ),
    "unused_constant_wrong_type": (
        "a struct-typed constant nothing uses, whose initialiser has a field of another type",
        "cannot use bool where bit<16> is expected",
        {"top": "struct pair_t {\n    bit<8> a;\n    bit<16> b;\n}\n"
                "const pair_t unused_pair = { a = 1, b = true }; /*ERR*/\n"},
    ),
    "unused_generic_control_arithmetic": (
        "arithmetic on a type-parameter value in a generic control nothing instantiates",
        "cannot be applied to T",
        {"top": "control Bump_g<T>(inout T x) {\n    apply {\n        x = x + 1; /*ERR*/\n"
                "    }\n}\n"},
    ),
    "name_annotation_not_string": (
        "@name with a number instead of a string",
        "@name: expected one string literal argument",
        {"top": "@name(4) /*ERR*/\nconst bit<8> named = 1;\n"},
    ),
    "structured_annotation_twice": (
        "one structured annotation twice on a declaration",
        "duplicate structured annotation",
        {"top": "@dup[]\n@dup[] /*ERR*/\nconst bit<8> twice = 1;\n"},
    ),
    "structured_annotation_list_value": (
        "a structured annotation whose value is a list expression",
        "illegal structured annotation value",
        {"top": "@bad[a = { 2, 3 }] /*ERR*/\nconst bit<8> listed = 1;\n"},
    ),
    "structured_and_plain_annotation": (
        "a structured and an unstructured annotation with one name on a declaration",
        "cannot share its name with an unstructured one",
        {"top": "@num(3)\n@num[] /*ERR*/\nconst bit<8> mixed = 1;\n"},
    ),
    # found when the whole corpus ran again after generic types and abstract methods landed
    "abstract_extern_constructor_call": (
        "an extern with abstract methods instantiated by a constructor call (issue3282)",
        "with abstract methods cannot be instantiated using a constructor call",
        {"top": "extern Hooked {\n    Hooked();\n    abstract void h();\n}\n"
                "package Holder(Hooked hk);\nHolder(Hooked()) holder; /*ERR*/\n"},
    ),
    "string_parameter_with_direction": (
        "an abstract method parameter of type string with a direction",
        "a parameter with type string cannot have a direction",
        {"top": "extern Named {\n    Named();\n    abstract void f(out string s); /*ERR*/\n}\n"},
    ),
    "generic_struct_self_argument": (
        "a generic struct given a copy of itself as type argument (issue3291)",
        "contains self 'struct pair' as type argument",
        {"top": "struct pair<T> {\n    T f;\n}\ntypedef pair<bit<8>> p8;\n"
                "typedef pair<p8> pp; /*ERR*/\n"},
    ),
    "struct_field_int": (
        "a struct field of type int (arbitrary precision exists at compile time only)",
        "Field 'f' of 'struct loose_t' cannot have type 'int'",
        {"top": "struct loose_t {\n    int f; /*ERR*/\n}\n"},
    ),
    "list_compare_lengths": (
        "== between list expressions of different lengths",
        "cannot compare",
        {"apply": "        if ({meta.m8, meta.m16} == {1}) { } /*ERR*/"},
    ),
    "type_in_structured_annotation": (
        "a type parameter used as a value in a structured annotation (type-in-expr)",
        "Type cannot be used here, expecting an expression",
        {"top": "@cfg[limit = 4 < W] /*ERR*/\ncontrol Sized<W>(in W v) {\n    apply { }\n}\n"},
    ),
}


def main() -> None:
    write_cases(CASES)


if __name__ == "__main__":
    main()
