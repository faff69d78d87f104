/*
 * DHC data plane: plain L2/L3 so hosts can ping through the topology.
 *
 * ARP requests (the verdict in DhcIndex checked format and opcode) for an
 * address in arp_table are answered by the switch itself (proxy ARP: the reply
 * is built here and sent back out the ingress port).
 * IPv4 marked for routing (transit traffic and partials going up) is routed
 * by ipv4_lpm: new destination MAC and port from the entry, source MAC = the
 * switch MAC from switch_config's default action, TTL - 1.
 */
#ifndef _DHC_FORWARDING_P4_
#define _DHC_FORWARDING_P4_

control DhcForwarding(inout headers_t hdr,
                      inout dhc_meta_t m,
                      in bit<9> ingress_port,
                      inout bit<9> egress_spec) {

    action drop_as(bit<8> reason) {
        m.drop = 1;
        m.drop_reason = reason;
    }

    /* ---- switch_config: keyless, the default action carries the switch MAC ---- */
    action set_switch_mac(bit<48> mac) {
        m.switch_mac = mac;
    }

    table switch_config {
        actions = { set_switch_mac; }
        default_action = set_switch_mac(0);
        size = 1;
    }

    /* ---- arp_table: target IP -> MAC to answer with ---- */
    action arp_reply(bit<48> mac) {
        bit<32> target = hdr.arp.tpa;
        hdr.ethernet.dstAddr = hdr.ethernet.srcAddr;
        hdr.ethernet.srcAddr = mac;
        hdr.arp.oper = ARP_OPER_REPLY;
        hdr.arp.tha = hdr.arp.sha;
        hdr.arp.tpa = hdr.arp.spa;
        hdr.arp.sha = mac;
        hdr.arp.spa = target;
        egress_spec = ingress_port;
    }

    action arp_miss() {
        m.drop = 1;
        m.drop_reason = DROP_ARP;
    }

    table arp_table {
        key = { hdr.arp.tpa : exact @name("target_addr"); }
        actions = { arp_reply; @defaultonly arp_miss; }
        const default_action = arp_miss();
        size = ARP_TABLE_SIZE;
    }

    /* ---- ipv4_lpm: dst prefix -> next hop ---- */
    action set_nhop(bit<48> dmac, bit<9> port) {
        hdr.ethernet.srcAddr = m.switch_mac;
        hdr.ethernet.dstAddr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        egress_spec = port;
    }

    action route_miss() {
        m.drop = 1;
        m.drop_reason = DROP_NO_ROUTE;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr : lpm @name("dst_addr"); }
        actions = { set_nhop; @defaultonly route_miss; }
        const default_action = route_miss();
        size = IPV4_LPM_TABLE_SIZE;
    }

    apply {
        switch_config.apply();
        if (m.arp_req == 1) {
            arp_table.apply();
        } else if (m.route == 1) {
            if (hdr.ipv4.ttl <= 1) {
                drop_as(DROP_TTL);
            } else {
                ipv4_lpm.apply();
            }
        }
    }
}

#endif /* _DHC_FORWARDING_P4_ */
