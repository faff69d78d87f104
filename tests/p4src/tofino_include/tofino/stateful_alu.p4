/*
 * The one declaration of p4c-tofino's <tofino/stateful_alu.p4> that p4src/dhc.p4
 * uses when __TARGET_TOFINO__ is defined, so that test_tofino_rules.py can
 * preprocess the Tofino variant of the program with the softswitch's
 * preprocessor (the rules are checked on the text; nothing runs it).  The real
 * header ships with the compiler (../shared/toolchain).
 */
extern RegisterAction<T, I, U> {
    RegisterAction(register<_, _> reg);
    U execute(in I index);
    abstract void apply(inout T value, @optional out U rv);
    U predicate(@optional in bool cmplo, @optional in bool cmphi);
}
