/* Load generator and sink for bench/softswitch/softswitch_native.py: C so that it is not the bottleneck.
 * blast(): one port sends, the other receives, at most `window` frames in flight; every received
 * frame is checked (destination MAC rewritten, TTL decremented).  dhc(): two workers stream
 * chunks, W chunks in flight per worker, every RESULT checked (MACs, addresses/ports, IPv4 header
 * checksum, UDP payload = the expected sum); DATA without a RESULT is resent after a timeout. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <time.h>

#define B 64
#define FR 2048

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct { struct mmsghdr mm[B]; struct iovec iov[B]; struct sockaddr_ll a[B]; uint8_t buf[B][FR]; } RX;

static int rx_batch(int fd, RX *r) {
    for (int k = 0; k < B; k++) {
        r->iov[k] = (struct iovec){r->buf[k], FR};
        memset(&r->mm[k], 0, sizeof r->mm[k]);
        r->mm[k].msg_hdr.msg_iov = &r->iov[k];
        r->mm[k].msg_hdr.msg_iovlen = 1;
        r->mm[k].msg_hdr.msg_name = &r->a[k];
        r->mm[k].msg_hdr.msg_namelen = sizeof r->a[k];
    }
    return recvmmsg(fd, r->mm, B, MSG_DONTWAIT, NULL);
}

static int tx_frames(int fd, const uint8_t *base, size_t stride, size_t len, int from, int count) {
    struct mmsghdr mm[B];
    struct iovec iov[B];
    int sent = 0;
    while (sent < count) {
        int k = count - sent < B ? count - sent : B;
        for (int i = 0; i < k; i++) {
            iov[i] = (struct iovec){(void *)(base + (size_t)(from + sent + i) * stride), len};
            memset(&mm[i], 0, sizeof mm[i]);
            mm[i].msg_hdr.msg_iov = &iov[i];
            mm[i].msg_hdr.msg_iovlen = 1;
        }
        int s = sendmmsg(fd, mm, k, 0);
        if (s <= 0) { if (errno == EINTR) continue; return sent; }
        sent += s;
    }
    return sent;
}

/* out: [received, bad]; returns elapsed seconds from first send to last frame received */
double blast(int tx, int rx, const uint8_t *frames, size_t stride, size_t len, int n, int window,
             const uint8_t *mac, double idle_s, int64_t *out) {
    static RX r;
    int sent = 0, got = 0, bad = 0;
    double t0 = now(), last = t0;
    struct pollfd p = {rx, POLLIN, 0};
    while (got < n) {
        int room = window - (sent - got);
        if (sent < n && room > 0) {
            int k = n - sent < room ? n - sent : room;
            sent += tx_frames(tx, frames, stride, len, sent, k);
        }
        if (poll(&p, 1, 100) <= 0) {
            if (now() - last > idle_s) break;
            continue;
        }
        int m = rx_batch(rx, &r);
        for (int k = 0; k < m; k++) {
            if (r.a[k].sll_pkttype == PACKET_OUTGOING) continue;
            const uint8_t *f = r.buf[k];
            if (r.mm[k].msg_len < 34 || f[12] != 0x08 || f[13] != 0x00) continue;
            if (memcmp(f, mac, 6) || f[22] != 63) bad++;
            got++;
            last = now();
        }
    }
    out[0] = got;
    out[1] = bad;
    return last - t0;
}

static int csum_ok(const uint8_t *h) {
    uint32_t s = 0;
    for (int i = 0; i < 20; i += 2) s += (h[i] << 8) | h[i + 1];
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return s == 0xFFFF;
}

/* Two workers (fds[0], fds[1]); data[w] holds n DATA frames of dlen bytes (stride dstride), res the
 * n expected RESULT UDP payloads (rlen bytes), hdr[w] 24 bytes: the MACs (12) and the IPs and
 * ports (12) of a RESULT to worker w.  out: [results, correct, wrong, duplicates, retransmits,
 * stalled]; returns elapsed seconds until the last RESULT. */
double dhc(const int *fds, const uint8_t *data0, const uint8_t *data1, size_t dstride, size_t dlen,
           const uint8_t *res, size_t rlen, const uint8_t *hdr, int n, uint32_t first, int window,
           int chunk_off, double resend_s, double stall_s, int64_t *out) {
    static RX r;
    const uint8_t *data[2] = {data0, data1};
    uint8_t *got[2] = {calloc(n + 1, 1), calloc(n + 1, 1)};
    int nxt[2] = {0, 0}, low[2] = {0, 0};
    int64_t results = 0, correct = 0, wrong = 0, dup = 0, resent = 0;
    double t0 = now(), last = t0, progress = t0, last_resend = t0;
    struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    int stalled = 0;
    while (low[0] < n || low[1] < n) {
        for (int w = 0; w < 2; w++) {
            int from = nxt[w], k = 0;
            while (nxt[w] < n && (nxt[w] < window || got[w][nxt[w] - window])) { nxt[w]++; k++; }
            if (k) tx_frames(fds[w], data[w], dstride, dlen, from, k);
        }
        poll(p, 2, (int)(resend_s * 1000));
        double t = now();
        for (int w = 0; w < 2; w++) {
            if (!(p[w].revents & POLLIN)) continue;
            int m;
            while ((m = rx_batch(fds[w], &r)) > 0) {
                for (int k = 0; k < m; k++) {
                    if (r.a[k].sll_pkttype == PACKET_OUTGOING) continue;
                    const uint8_t *f = r.buf[k];
                    size_t len = r.mm[k].msg_len;
                    if (len < (size_t)chunk_off + 4 || f[12] != 0x08 || f[23] != 17) continue;
                    uint32_t c = ((uint32_t)f[chunk_off] << 24) | (f[chunk_off + 1] << 16) |
                                 (f[chunk_off + 2] << 8) | f[chunk_off + 3];
                    int64_t i = (int64_t)c - first;
                    if (i < 0 || i >= n) { wrong++; continue; }
                    if (got[w][i]) { dup++; continue; }
                    got[w][i] = 1;
                    results++;
                    int ok = !memcmp(f, hdr + 24 * w, 12) && !memcmp(f + 26, hdr + 24 * w + 12, 12) &&
                             csum_ok(f + 14) && len == 42 + rlen && !memcmp(f + 42, res + i * rlen, rlen);
                    correct += ok;
                    wrong += !ok;
                    progress = last = t;
                    while (low[w] < n && got[w][low[w]]) low[w]++;
                }
            }
        }
        if (t - progress > resend_s && t - last_resend > resend_s) {
            if (t - progress > stall_s) { stalled = 1; break; }
            for (int w = 0; w < 2; w++)
                for (int i = low[w]; i < nxt[w]; i++)
                    if (!got[w][i]) { tx_frames(fds[w], data[w], dstride, dlen, i, 1); resent++; }
            last_resend = t;
        }
    }
    free(got[0]);
    free(got[1]);
    out[0] = results; out[1] = correct; out[2] = wrong; out[3] = dup; out[4] = resent; out[5] = stalled;
    return last - t0;
}
