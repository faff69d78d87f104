/*
 * DHC data plane: IPv4 header checksum.
 *
 * Verified on arrival (verify_checksum, csum16 over the option-less header):
 * a wrong checksum sets standard_metadata.checksum_error and ingress drops the
 * packet and counts it (DROP_BAD_CHECKSUM), DHC or transit alike.  The
 * condition is exactly hdr.ipv4.isValid(): p4c's Tofino back end accepts no
 * other condition and computes the check in the parser: its Checksum verify()
 * sets bit 12 of ig_intr_md_from_prsr.parser_err, which its v1model
 * translation maps to standard_metadata.checksum_error (it has no mapping for
 * parser_error, hence the parser flags).  IPv4 with options
 * fails this check too, but ingress tests hdr_bad first (malformed).
 *
 * Ingress may change TTL and addresses (routing, results, partials); egress
 * rewrites addresses per multicast replica.  The checksum is recomputed once,
 * after egress, over the option-less header (the parser flags IPv4 with
 * options as unsupported, so ihl is always 5 here).  UDP checksums of packets
 * the switch rewrites are set to 0 (allowed for UDP over IPv4).
 */
#ifndef _DHC_CHECKSUM_P4_
#define _DHC_CHECKSUM_P4_

control DhcVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.diffserv,
              hdr.ipv4.totalLen,
              hdr.ipv4.identification,
              hdr.ipv4.flags,
              hdr.ipv4.fragOffset,
              hdr.ipv4.ttl,
              hdr.ipv4.protocol,
              hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control DhcComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.diffserv,
              hdr.ipv4.totalLen,
              hdr.ipv4.identification,
              hdr.ipv4.flags,
              hdr.ipv4.fragOffset,
              hdr.ipv4.ttl,
              hdr.ipv4.protocol,
              hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

#endif /* _DHC_CHECKSUM_P4_ */
