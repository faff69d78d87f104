/* Constructs p4c's front end rewrites before code generation (specialize.py, selects.py,
 * desugar.py): generic functions, struct and tuple constants, tuple variables and indexes,
 * select on error and bool values, v1model functions inside functions, control-level
 * initialisers with side effects.
 * The expected packets come from front_end_rewrites_out() in gen_stf_lang.py. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header in_t {
    bit<8> a;
    bit<8> b;
}

header out_t {
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
}

struct pair_t {
    bit<8> lo;
    bit<8> hi;
}

struct limits_t {
    pair_t p;
    bool   on;
}

@noWarn("unused") const pair_t RANGE = { hi = 200, lo = 10 };
@noWarn("unused") const limits_t LIM = { RANGE, true };
@noWarn("unused") const tuple<bit<8>, bit<8>> STEPS = { 3, 5 };

struct headers_t {
    ethernet_t ethernet;
    in_t       i;
    out_t      o;
}

struct metadata_t {
    bit<8> kind;
    bit<8> bumps;
}

// p4c allows no operation on a value of type T inside the body: the caller compares
T pick<T>(in bool first, in T x, in T y) {
    return first ? x : y;
}

// never called: still type-checked, with T an opaque type (as p4c checks it)
T keep<T, U>(in T x, in U u) {
    T y = x;
    U v = u;
    return y;
}

void swap<T>(inout T x, inout T y) {
    T t = x;
    x = y;
    y = t;
}

bit<8> roll() {
    bit<8> r;
    random(r, 8w42, 8w42);
    return r;
}

bit<8> bump(inout bit<8> n) {
    n = n + 1;
    return n;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType == 0x88B9) {
            true: parse_i;
            false: accept;
        }
    }
    state parse_i {
        packet.extract(hdr.i);
        transition select(hdr.i.a == 0 ? error.NoMatch : error.NoError, hdr.i.b[0:0] == 1) {
            (error.NoMatch, _): zero;
            (error.NoError, true): odd;
            default: parse_o;
        }
    }
    state zero {
        meta.kind = 1;
        transition parse_o;
    }
    state odd {
        meta.kind = 2;
        transition parse_o;
    }
    state parse_o {
        packet.extract(hdr.o);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    bit<8> first = bump(meta.bumps);
    bit<8> second = bump(meta.bumps) + first;

    action put(bit<8> v) {
        hdr.o.r6 = v;
    }
    table by_range {
        key = { hdr.i.a: exact; }
        actions = { put; NoAction; }
        const entries = {
            RANGE.lo: put(1);
            RANGE.hi: put(2);
        }
    }
    apply {
        standard_metadata.egress_spec = 1;
        tuple<bit<8>, bit<8>> t = { hdr.i.a, hdr.i.b };
        swap(t[0], t[1]);
        hdr.o.r1 = pick(hdr.i.a > hdr.i.b, hdr.i.a, hdr.i.b);
        hdr.o.r2 = t[0] + STEPS[1];
        hdr.o.r3 = hdr.i.a >= LIM.p.lo && hdr.i.a <= LIM.p.hi && LIM.on ? 8w1 : 8w0;
        hdr.o.r4 = meta.kind;
        hdr.o.r5 = roll();
        by_range.apply();
        hdr.o.r7 = second;
        bit<16> wide = 0;
        bit<16> other = 7;
        swap(wide, other);
        hdr.o.r8 = (bit<8>) wide + (bit<8>) pick<bit<16>>(other > 16w1, other, 16w1);
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.i);
        packet.emit(hdr.o);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
