/* The native delivery engine's types (native_delivery.c); hostagent/native_delivery.py hands
 * the part between the BEGIN/END CDEF markers to cffi as it is, so it stays plain C
 * declarations and integer #defines. */
#ifndef DHC_NATIVE_DELIVERY_H
#define DHC_NATIVE_DELIVERY_H
#include <stddef.h>
#include <stdint.h>
/* BEGIN CDEF */
#define HDE_DONE 0
#define HDE_GIVE_UP 2
#define HDE_OTHER 3
#define HDE_SOCKET_ERROR 4
#define HDE_SILENT 5
#define HDE_MISMATCH 6
#define HDE_GROW 7
#define HDE_ERRS 64

/* What persists across a transport's exchanges: the policy, the RTT estimate, the window. */
typedef struct {
    double initial_timeout, backoff, max_timeout, min_timeout;
    int64_t max_retries;
    int64_t has_srtt;
    double srtt, rttvar;
    int64_t limit;
    double cwnd, ssthresh;
} hde_engine;

/* One exchange's per-item state: the arrays of hostagent.delivery.Outstanding (numpy-owned). */
typedef struct {
    int64_t n, n_done, sent, lo;
    uint8_t *done;
    double *deadline, *first_sent, *timeout;
    int64_t *tries;
    int64_t *scratch, *scratch2;      /* n items each: batches being sent / completed */
} hde_out;

typedef struct {
    void *ctx;
    double (*now)(void *ctx);
    void (*transmit)(void *ctx, const int64_t *items, int64_t k, int again);
    int (*receive)(void *ctx, double wait);   /* 1: look at the timers, 0: answers came, else a status */
    int (*finished)(void *ctx);
} hde_io;

/* One socket's sending rows and receive buffer, with its counters. */
typedef struct {
    int fd;
    const uint8_t *frames;
    size_t stride;
    const uint32_t *lens;             /* NULL: every row is ``stride`` bytes */
    uint32_t ip;
    uint16_t port;                    /* network order, as fastio's Destination */
    uint8_t *rx;
    size_t rx_stride;
    int rx_rows;
    uint32_t *rx_lens, *rx_ips;
    uint16_t *rx_ports;
    int64_t packets_sent, bytes_sent, packets_received, bytes_received;
    int errs[64];
    int64_t n_errs;
    int rx_errno;
    int64_t polls, drains, sends;     /* ppoll, recvmmsg and sendmmsg/sendto calls (about) */
    /* receive coalescing (native_linger.c): seconds per completed item (EWMA,
     * 0 = not measured yet), the last completion seen, and nanosleep calls made */
    int coalesce;                     /* 0: poll for every answer (DHC_HOST_COALESCE=off) */
    double gap, mark_t;
    int64_t mark_done, lingers;
} hde_sock;

/* Where a DHC header field lives (hostagent.frames.FieldSpan). */
typedef struct {
    int first_byte, n_bytes, shift;
    uint64_t mask;
} hde_field;

typedef struct {
    hde_engine *engine;
    hde_out *out;
    hde_sock sock;
    int64_t base;
    int lanes;
    uint32_t frame_len, header_bytes;
    uint8_t result_byte0;
    uint64_t num_lanes_wire, job_id, epoch;
    hde_field f_job, f_epoch, f_chunk, f_num_lanes;
    uint32_t *results;                /* n x lanes */
    int other[256];
    int n_other, n_rx;
    int64_t retransmissions, duplicates, foreign, stale, completed;
} hde_dhc;

/* What the previous ring neighbour sent in one step, held in buffers Python gave. */
typedef struct {
    int32_t step;                     /* -1: no step */
    uint32_t cap, count, n_have;
    uint8_t *have;
    uint32_t *nvalues;
    int32_t *values;                  /* cap x values_per_packet */
    int dirty;
} hde_box;

typedef struct {
    hde_engine *engine;
    hde_out *out;
    hde_sock sock;
    uint32_t next_ip, prev_ip;
    uint16_t job;
    int32_t step;
    uint32_t values_per_packet;
    hde_box box[2];                   /* this step and the next one */
    double last_from_prev, silence;
    int other[256];
    int n_other, n_rx;
    uint32_t mismatch_seq, mismatch_count;
    int32_t mismatch_step;
    int grow_box;
    uint32_t grow_count;
    int64_t retransmissions, data_packets_sent, acks_sent, duplicates;
} hde_ring;

double hde_monotonic(void);
double hde_rto(const hde_engine *e);
void hde_complete(hde_engine *e, hde_out *o, const int64_t *items, int64_t k, double now);
void hde_restart_backed_off(hde_engine *e, hde_out *o, int64_t lo, int64_t hi, double now);
void hde_restart_in_flight(hde_engine *e, hde_out *o, int64_t lo, int64_t hi, double now);
int hde_run(hde_engine *e, hde_out *o, const hde_io *io, double poll_cap, int64_t clock,
            int64_t *spent);
int hde_dhc_run(hde_dhc *d, double poll_cap, int64_t clock, int64_t *spent);
int hde_ring_run(hde_ring *g, double poll_cap, int64_t *spent);
double hde_linger_for(const hde_sock *s, const hde_engine *e, const hde_out *o, double wait);
void hde_linger_sample(hde_sock *s, int64_t n_done, double now);
/* END CDEF */
void hde_sleep(double t);
void hde_complete_marked(hde_engine *e, hde_out *o, const int64_t *items, int64_t k, double now);
#endif
