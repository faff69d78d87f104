/* The native delivery engine: one exchange's send / receive / match / retransmit loop in C.
 *
 * hostagent/delivery.py is the reference (the Python engine); this file is the same algorithm,
 * step for step, so that both make the same decisions from the same clock readings:
 *   - window: AIMD in-flight limit (slow start to ssthresh, then one item per window), halved
 *     once per expiry pass, never below 2, optionally self-clocking (item i once i - clock done);
 *   - timers: RFC 6298 (SRTT + 4 RTTVAR, one sample per batch of answers from items sent once,
 *     Karn's rule), exponential backoff to max_timeout, restart of backed-off timers (5.3);
 *   - the retry budget: an expired item with max_retries retransmissions ends the exchange.
 * The loop (hde_run) talks to the world through an hde_io: the clock, transmit, receive and
 * finished.  Production passes the socket I/O below (DHC chunks: hde_dhc_*, ring steps:
 * hde_ring_*); the differential tests pass Python callbacks with a scripted clock.
 * hostagent/native_delivery.py loads it with cffi; calls release the GIL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "native_delivery.h"

/* ------------------------------------------------------------------ engine core */

static double rto_of(const hde_engine *e) {
    if (!e->has_srtt)
        return e->initial_timeout;
    double r = e->srtt + 4 * e->rttvar;
    r = r > e->min_timeout ? r : e->min_timeout;
    return r < e->max_timeout ? r : e->max_timeout;
}

double hde_rto(const hde_engine *e) { return rto_of(e); }

static void rtt_sample(hde_engine *e, double rtt) {
    if (!e->has_srtt) {
        e->srtt = rtt;
        e->rttvar = rtt / 2;
        e->has_srtt = 1;
    } else {
        e->rttvar = 0.75 * e->rttvar + 0.25 * fabs(e->srtt - rtt);
        e->srtt = 0.875 * e->srtt + 0.125 * rtt;
    }
}

static void window_grow(hde_engine *e, int64_t completed) {
    for (int64_t k = 0; k < completed; k++)
        e->cwnd += e->cwnd < e->ssthresh ? 1.0 : 1.0 / e->cwnd;
    if (e->cwnd > (double)e->limit)
        e->cwnd = (double)e->limit;
}

static void window_shrink(hde_engine *e) {
    double half = e->cwnd / 2;
    e->ssthresh = half > 2.0 ? half : 2.0;
    e->cwnd = e->ssthresh;
}

/* Items whose done flag was just set (by the caller) got their answer: one RTT sample from the
 * oldest of them sent once, timers stopped, the window opened by their count. */
void hde_complete_marked(hde_engine *e, hde_out *o, const int64_t *items, int64_t k, double now) {
    if (k == 0)
        return;
    double oldest = INFINITY;
    int once = 0;
    for (int64_t j = 0; j < k; j++) {
        int64_t i = items[j];
        if (o->tries[i] == 0) {
            once = 1;
            if (o->first_sent[i] < oldest)
                oldest = o->first_sent[i];
        }
        o->deadline[i] = INFINITY;
    }
    if (once)
        rtt_sample(e, now - oldest);
    o->n_done += k;
    window_grow(e, k);
}

/* hde_complete_marked for items not yet marked done (distinct, not done). */
void hde_complete(hde_engine *e, hde_out *o, const int64_t *items, int64_t k, double now) {
    for (int64_t j = 0; j < k; j++)
        o->done[items[j]] = 1;
    hde_complete_marked(e, o, items, k, now);
}

/* The index of the newest done item of [lo, hi), or -1: the RFC 6298 5.3 rules below act on the
 * items before and after it. */
static int64_t newest_done(const hde_out *o, int64_t lo, int64_t hi) {
    for (int64_t i = hi - 1; i >= lo; i--)
        if (o->done[i])
            return i;
    return -1;
}

/* RFC 6298 5.3: items of [lo, hi) older than the newest done one, not done and backed off, get
 * the current timeout again. */
void hde_restart_backed_off(hde_engine *e, hde_out *o, int64_t lo, int64_t hi, double now) {
    int64_t top = newest_done(o, lo, hi);
    if (top < 0)
        return;
    double rto = rto_of(e);
    for (int64_t i = lo; i < top; i++)
        if (!o->done[i] && o->tries[i] > 0) {
            if (o->timeout[i] > rto)
                o->timeout[i] = rto;
            if (o->deadline[i] > now + rto)
                o->deadline[i] = now + rto;
        }
}

/* RFC 6298 5.3 for items in flight: items of [lo, hi) sent after the newest done one, sent once,
 * expire no earlier than their timeout from now (delivery.py restart_in_flight). */
void hde_restart_in_flight(hde_engine *e, hde_out *o, int64_t lo, int64_t hi, double now) {
    (void)e;
    int64_t top = newest_done(o, lo, hi);
    if (top < 0)
        return;
    for (int64_t i = top + 1; i < hi; i++)
        if (o->tries[i] == 0 && o->deadline[i] < now + o->timeout[i])
            o->deadline[i] = now + o->timeout[i];
}

static int64_t sendable(const hde_engine *e, const hde_out *o, int64_t clock) {
    int64_t stop = (int64_t)ceil((double)o->n_done + e->cwnd);
    if (stop > o->n)
        stop = o->n;
    int64_t start = o->sent > (clock > 0 ? clock : 0) ? o->sent : (clock > 0 ? clock : 0);
    if (clock > 0 && stop > start)
        for (int64_t i = start; i < stop; i++)
            if (!o->done[i - clock]) {
                stop = i;
                break;
            }
    return stop > o->sent ? stop : o->sent;
}

/* Retransmit every expired item (one window halving per pass); HDE_GIVE_UP when one of them has
 * spent its budget (its number in *spent). */
static int expire(hde_engine *e, hde_out *o, const hde_io *io, int64_t *spent) {
    double now = io->now(io->ctx);
    int64_t k = 0;
    for (int64_t i = o->lo; i < o->sent; i++)
        if (o->deadline[i] <= now)
            o->scratch[k++] = i;
    if (k == 0)
        return 0;
    window_shrink(e);
    for (int64_t j = 0; j < k; j++)
        if (o->tries[o->scratch[j]] >= e->max_retries) {
            *spent = o->scratch[j];
            return HDE_GIVE_UP;
        }
    for (int64_t j = 0; j < k; j++) {
        int64_t i = o->scratch[j];
        o->tries[i] += 1;
        double t = o->timeout[i] * e->backoff;
        o->timeout[i] = t < e->max_timeout ? t : e->max_timeout;
    }
    io->transmit(io->ctx, o->scratch, k, 1);
    now = io->now(io->ctx);
    for (int64_t j = 0; j < k; j++)
        o->deadline[o->scratch[j]] = now + o->timeout[o->scratch[j]];
    return 0;
}

/* Deliver o's items until io->finished: HDE_DONE, HDE_GIVE_UP (*spent = the item), or a
 * transport's own status (< 0 or >= HDE_TRANSPORT) from io->receive, after which the caller may
 * call again to resume.  ``clock`` <= 0: no self-clocking. */
int hde_run(hde_engine *e, hde_out *o, const hde_io *io, double poll_cap, int64_t clock,
            int64_t *spent) {
    while (!io->finished(io->ctx)) {
        int64_t sent = o->sent, stop = sendable(e, o, clock);
        if (stop > sent) {
            double rto = rto_of(e), t = io->now(io->ctx);
            for (int64_t i = sent; i < stop; i++) {
                o->timeout[i] = rto;
                o->first_sent[i] = t;
                o->scratch[i - sent] = i;
            }
            io->transmit(io->ctx, o->scratch, stop - sent, 0);
            t = io->now(io->ctx);
            for (int64_t i = sent; i < stop; i++)
                o->deadline[i] = t + rto;
            o->sent = sent = stop;
        }
        int64_t lo = o->lo;
        while (lo < sent && o->done[lo])
            lo++;
        o->lo = lo;
        double first = INFINITY;
        for (int64_t i = lo; i < sent; i++)
            if (o->deadline[i] < first)
                first = o->deadline[i];
        double wait = INFINITY;
        if (first < INFINITY) {
            wait = first - io->now(io->ctx);
            wait = wait > 0 ? wait : 0.0;
        }
        int r = io->receive(io->ctx, wait < poll_cap ? wait : poll_cap);
        if (r == 1) {
            if (expire(e, o, io, spent))
                return HDE_GIVE_UP;
        } else if (r != 0) {
            return r;
        }
    }
    return HDE_DONE;
}

/* ------------------------------------------------------------------ socket I/O shared */

double hde_monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_real(void *ctx) {
    (void)ctx;
    return hde_monotonic();
}

/* Wait up to ``wait`` s for the socket to be readable: 1 readable, 0 not. */
static int readable(int fd, double wait) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    struct timespec ts;
    if (wait < 0)
        wait = 0;
    ts.tv_sec = (time_t)wait;
    ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
    int r = ppoll(&p, 1, &ts, NULL);
    return r > 0;
}

int hio_send(int fd, const uint8_t *frames, size_t stride, const uint32_t *lens,
             const int64_t *idx, int n, uint32_t ip, uint16_t port, int *errs, int errcap);
int hio_recv(int fd, uint8_t *buf, size_t stride, int cap, uint32_t *lens, uint32_t *ips,
             uint16_t *ports);

static void send_rows(hde_sock *s, const int64_t *items, int64_t k) {
    int errs[64];
    s->sends += (k + 63) / 64;
    int refused = hio_send(s->fd, s->frames, s->stride, s->lens, items, (int)k, s->ip, s->port,
                           errs, 64);
    for (int j = 0; j < refused && j < 64; j++) {
        if (s->n_errs < HDE_ERRS)
            s->errs[s->n_errs] = errs[j];
        s->n_errs++;
    }
    s->packets_sent += k;
    if (s->lens == NULL)
        s->bytes_sent += k * (int64_t)s->stride;
    else
        for (int64_t j = 0; j < k; j++)
            s->bytes_sent += s->lens[items[j]];
}

/* Read one buffer's worth of datagrams: how many (0 none, < 0 -errno). */
static int drain_once(hde_sock *s) {
    int n = hio_recv(s->fd, s->rx, s->rx_stride, s->rx_rows, s->rx_lens, s->rx_ips,
                     s->rx_ports);
    s->drains += 1 + (n > 64 ? (n - 1) / 64 : 0);
    if (n > 0) {
        s->packets_received += n;
        for (int k = 0; k < n; k++)
            s->bytes_received += s->rx_lens[k];
    }
    return n;
}

/* The first drain of a receive: datagrams (> 0), none within ``wait`` s (0) or -errno.  With a
 * ``linger`` (hde_linger_for, native_linger.c) the loop sleeps that long first and drains without polling.
 * (Trying recvmmsg before ppoll while answers keep coming measured no faster: one drain
 * already takes 20-50 datagrams, 0.02-0.05 system calls per packet; docs/e2e.md.) */
static int wait_and_drain(hde_sock *s, double wait, double linger) {
    if (linger > 0) {
        hde_sleep(linger);
        s->lingers++;
        int n = drain_once(s);
        if (n != 0)
            return n;
        wait -= linger;
    }
    s->polls++;
    if (!readable(s->fd, wait))
        return 0;
    return drain_once(s);
}

static uint64_t read_field(const uint8_t *row, const hde_field *f) {
    uint64_t v = 0;
    for (int j = 0; j < f->n_bytes; j++)
        v = (v << 8) | row[f->first_byte + j];
    return (v >> f->shift) & f->mask;
}

/* ------------------------------------------------------------------ DHC chunk exchange */

static void dhc_transmit(void *ctx, const int64_t *items, int64_t k, int again) {
    hde_dhc *d = ctx;
    if (again)
        d->retransmissions += k;
    send_rows(&d->sock, items, k);
}

static int dhc_finished(void *ctx) {
    hde_dhc *d = ctx;
    return d->out->n_done == d->out->n;
}

/* Take the RESULTs of rx rows [0, n) (the Python engine's _absorb, row by row); rows that are
 * not well-formed RESULTs of the right size are left for Python (d->other). */
static int64_t dhc_absorb(hde_dhc *d, int n, double now) {
    hde_out *o = d->out;
    hde_sock *s = &d->sock;
    int64_t k = 0;
    for (int r = 0; r < n; r++) {
        const uint8_t *row = s->rx + (size_t)r * s->rx_stride;
        if (s->rx_lens[r] != d->frame_len || row[0] != d->result_byte0 ||
            read_field(row, &d->f_num_lanes) != d->num_lanes_wire) {
            d->other[d->n_other++] = r;
            continue;
        }
        if (read_field(row, &d->f_job) != d->job_id) {
            d->foreign++;
            continue;
        }
        if (read_field(row, &d->f_epoch) != d->epoch) {
            d->stale++;
            continue;
        }
        int64_t i = (int64_t)read_field(row, &d->f_chunk) - d->base;
        if (i < 0 || i >= o->n) {
            d->foreign++;
            continue;
        }
        if (o->done[i]) {
            d->duplicates++;
            continue;
        }
        o->done[i] = 1;
        const uint8_t *body = row + d->header_bytes;
        uint32_t *dst = d->results + (size_t)i * (size_t)d->lanes;
        for (int l = 0; l < d->lanes; l++, body += 4)
            dst[l] = ((uint32_t)body[0] << 24) | ((uint32_t)body[1] << 16) |
                     ((uint32_t)body[2] << 8) | body[3];
        o->scratch2[k++] = i;
    }
    hde_complete_marked(d->engine, o, o->scratch2, k, now);
    return k;
}

static int dhc_receive(void *ctx, double wait) {
    hde_dhc *d = ctx;
    int64_t completed = 0;
    int n = wait_and_drain(&d->sock, wait, hde_linger_for(&d->sock, d->engine, d->out, wait));
    int status = 0;
    if (n == 0)
        return 1;
    d->n_other = 0;
    for (; n > 0; n = drain_once(&d->sock)) {
        completed += dhc_absorb(d, n, hde_monotonic());
        if (d->n_other) {          /* probes, malformed or foreign datagrams: Python's */
            d->n_rx = n;
            status = HDE_OTHER;
            break;
        }
        if (n < d->sock.rx_rows)
            break;
    }
    if (n < 0) {
        d->sock.rx_errno = -n;
        status = HDE_SOCKET_ERROR;
    }
    d->completed += completed;
    if (completed) {
        double now = hde_monotonic();
        hde_restart_backed_off(d->engine, d->out, d->out->lo, d->out->sent, now);
        hde_linger_sample(&d->sock, d->out->n_done, now);
    }
    return status;
}

int hde_dhc_run(hde_dhc *d, double poll_cap, int64_t clock, int64_t *spent) {
    hde_io io = {d, now_real, dhc_transmit, dhc_receive, dhc_finished};
    return hde_run(d->engine, d->out, &io, poll_cap, clock, spent);
}

/* ------------------------------------------------------------------ ring step exchange */

/* The little-endian ring header (bench/baselines/ring_transport.py HEADER). */
#define RING_HDR 16
#define RING_ACK_PRIORITY 6 /* TC_PRIO_INTERACTIVE: pfifo_fast's band 0 */
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32); }

static void ring_transmit(void *ctx, const int64_t *items, int64_t k, int again) {
    hde_ring *g = ctx;
    if (again)
        g->retransmissions += k;
    g->data_packets_sent += k;
    send_rows(&g->sock, items, k);
}

static int ring_finished(void *ctx) {
    hde_ring *g = ctx;
    return g->out->n_done == g->out->n && g->box[0].count > 0 &&
           g->box[0].n_have == g->box[0].count;
}

static void ring_ack(hde_ring *g, int64_t cum, uint64_t sack) {
    hde_out *o = g->out;
    int64_t k = 0;
    for (int64_t i = 0; i < cum && i < o->n; i++)
        if (!o->done[i]) {
            o->done[i] = 1;
            o->scratch2[k++] = i;
        }
    for (int b = 0; b < 64; b++)
        if (sack >> b & 1) {
            int64_t i = cum + 1 + b;
            if (i < o->n && !o->done[i]) {
                o->done[i] = 1;
                o->scratch2[k++] = i;
            }
        }
    double now = hde_monotonic();
    hde_complete_marked(g->engine, o, o->scratch2, k, now);
    if (k > 0)
        hde_restart_in_flight(g->engine, o, o->lo, o->sent, now);
}

/* A DATA datagram for one of the two steps held here; 0 taken, 1 for Python. */
static int ring_data(hde_ring *g, hde_box *b, uint32_t seq, uint32_t count, const uint8_t *payload,
                     uint32_t bytes) {
    if (b->count == 0) {
        if (count > b->cap) {  /* larger than the buffer Python gave: Python takes the
                                  datagram and grows the buffer */
            g->grow_box = (int)(b - g->box);
            g->grow_count = count;
            return 3;
        }
        b->count = count;
    }
    if (count != b->count || seq >= b->count) {
        g->mismatch_seq = seq;
        g->mismatch_count = count;
        g->mismatch_step = b->step;
        return 2;
    }
    b->dirty = 1;
    if (b->have[seq]) {
        g->duplicates++;
        return 0;
    }
    b->have[seq] = 1;
    b->n_have++;
    b->nvalues[seq] = bytes / 4;
    memcpy(b->values + (size_t)seq * g->values_per_packet, payload, bytes);
    return 0;
}

static void ring_send_ack(hde_ring *g, hde_box *b) {
    uint8_t pkt[RING_HDR + 8];
    uint32_t cum = 0;
    while (cum < b->count && b->have[cum])
        cum++;
    uint64_t sack = 0;
    for (int j = 0; j < 64 && cum + 1 + (uint32_t)j < b->count; j++)
        if (b->have[cum + 1 + j])
            sack |= (uint64_t)1 << j;
    memset(pkt, 0, sizeof pkt);
    pkt[0] = 'R';
    pkt[1] = 'G';
    pkt[2] = 2; /* ACK */
    pkt[4] = (uint8_t)(g->job & 0xFF);
    pkt[5] = (uint8_t)(g->job >> 8);
    pkt[6] = (uint8_t)(b->step & 0xFF);
    pkt[7] = (uint8_t)(b->step >> 8);
    for (int j = 0; j < 4; j++) {
        pkt[8 + j] = (uint8_t)(cum >> (8 * j));
        pkt[12 + j] = (uint8_t)(b->count >> (8 * j));
    }
    for (int j = 0; j < 8; j++)
        pkt[16 + j] = (uint8_t)(sack >> (8 * j));
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = g->sock.port};
    dst.sin_addr.s_addr = g->prev_ip;
    /* ACKs at the control priority (ring_transport.py ACK_PRIORITY), DATA at 0 */
    int control = RING_ACK_PRIORITY, data = 0;
    setsockopt(g->sock.fd, SOL_SOCKET, SO_PRIORITY, &control, sizeof control);
    if (sendto(g->sock.fd, pkt, sizeof pkt, 0, (struct sockaddr *)&dst, sizeof dst) < 0 &&
        g->sock.n_errs < HDE_ERRS)
        g->sock.errs[g->sock.n_errs++] = errno;
    setsockopt(g->sock.fd, SOL_SOCKET, SO_PRIORITY, &data, sizeof data);
    g->sock.packets_sent++;
    g->sock.sends++;
    g->sock.bytes_sent += sizeof pkt;
    g->acks_sent++;
    b->dirty = 0;
}

/* One buffer of datagrams: ACKs of this step from next, DATA of the two held steps from prev;
 * anything else is left for Python (g->other).  HDE_MISMATCH when the previous neighbour's
 * packet count disagrees with its earlier packets. */
static int ring_take(hde_ring *g, int n) {
    hde_sock *s = &g->sock;
    int status = 0;
    for (int r = 0; r < n; r++) {
        const uint8_t *p = s->rx + (size_t)r * s->rx_stride;
        uint32_t len = s->rx_lens[r];
        if (len < RING_HDR || len > s->rx_stride || p[0] != 'R' || p[1] != 'G' ||
            le16(p + 4) != g->job) {
            g->other[g->n_other++] = r;
            continue;
        }
        uint16_t step = le16(p + 6);
        uint32_t seq = le32(p + 8), count = le32(p + 12);
        if (p[2] == 2 && s->rx_ips[r] == g->next_ip && len == RING_HDR + 8 && step == g->step) {
            ring_ack(g, seq, le64(p + RING_HDR));
            continue;
        }
        int which = step == g->box[0].step ? 0 : step == g->box[1].step ? 1 : -1;
        if (p[2] == 1 && s->rx_ips[r] == g->prev_ip && which >= 0 && count >= 1 &&
            (len - RING_HDR) % 4 == 0 && len - RING_HDR <= 4 * g->values_per_packet) {
            g->last_from_prev = hde_monotonic();
            int t = ring_data(g, &g->box[which], seq, count, p + RING_HDR, len - RING_HDR);
            if (t == 2)
                status = HDE_MISMATCH;
            else if (t == 3) { /* Python stores it and gives a larger buffer for the rest */
                g->other[g->n_other++] = r;
                status = status ? status : HDE_GROW;
            }
            continue;
        }
        g->other[g->n_other++] = r;
    }
    return status;
}

static int ring_receive(void *ctx, double wait) {
    hde_ring *g = ctx;
    int status = 0, n = 0;
    g->n_other = 0;
    int64_t done0 = g->out->n_done;
    n = wait_and_drain(&g->sock, wait, hde_linger_for(&g->sock, g->engine, g->out, wait));
    if (n != 0) {
        for (; n > 0; n = drain_once(&g->sock)) {
            status = ring_take(g, n);
            if (g->n_other || status) {
                g->n_rx = n;
                status = status ? status : HDE_OTHER;
                break;
            }
            if (n < g->sock.rx_rows)
                break;
        }
        if (n < 0 && !status) {
            g->sock.rx_errno = -n;
            status = HDE_SOCKET_ERROR;
        }
    }
    for (int j = 0; j < 2; j++)
        if (g->box[j].dirty)
            ring_send_ack(g, &g->box[j]);
    if (g->out->n_done > done0)
        hde_linger_sample(&g->sock, g->out->n_done, hde_monotonic());
    if (status)
        return status;
    hde_box *b = &g->box[0];
    if ((b->count == 0 || b->n_have < b->count) &&
        hde_monotonic() - g->last_from_prev > g->silence)
        return HDE_SILENT;
    return 1;
}

int hde_ring_run(hde_ring *g, double poll_cap, int64_t *spent) {
    hde_io io = {g, now_real, ring_transmit, ring_receive, ring_finished};
    return hde_run(g->engine, g->out, &io, poll_cap, 0, spent);
}
