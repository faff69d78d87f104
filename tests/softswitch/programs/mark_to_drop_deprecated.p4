// v1model's deprecated mark_to_drop() without an argument drops through the
// standard_metadata_t in scope: the action's own parameter, else the control's.
// An unused top-level action with none in scope is accepted (p4c removes it).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> v; }
struct headers_t { h_t h; }
struct meta_t {}

action unused_drop() { mark_to_drop(); }
action drop_via(inout standard_metadata_t s) { mark_to_drop(); }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action local_drop() { mark_to_drop(); }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.h.op : exact; }
        actions = { local_drop; fwd; }
        const entries = { 1 : local_drop(); 2 : fwd(3); }
        default_action = fwd(2);
    }
    apply {
        t.apply();
        if (hdr.h.op == 4) { drop_via(sm); }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.v == 0xdd) { mark_to_drop(); }
    }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
