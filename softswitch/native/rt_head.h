/* softswitch native runtime, part 1: value types, bit access, hashes, per-packet context.
 * The generated program is compiled between this file and rt_tail.c (one translation unit).
 * Values: bit<W>/int<W> for W <= 64 are uint64_t, for 64 < W <= 128 unsigned __int128, always
 * holding the W-bit pattern (two's complement for int<W>), so wraparound is a mask. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
typedef int64_t i64;
typedef unsigned __int128 u128;
typedef __int128 i128;

#define M64(w) ((w) >= 64 ? ~(u64)0 : (((u64)1 << (w)) - 1))
#define M128(w) ((w) >= 128 ? ~(u128)0 : (((u128)1 << (w)) - 1))
#define U128(hi, lo) ((((u128)(hi)) << 64) | (u128)(lo))

static inline i64 sx64(u64 v, int w) { return w >= 64 ? (i64)v : ((i64)(v << (64 - w))) >> (64 - w); }
static inline i128 sx128(u128 v, int w) { return w >= 128 ? (i128)v : ((i128)(v << (128 - w))) >> (128 - w); }

/* n <= 64 bits at bit offset pos (MSB first); the caller checked the bounds */
static inline __attribute__((always_inline)) u64 getb64(const uint8_t *d, size_t pos, int n) {
    if (((pos | (size_t)n) & 7) == 0) {  /* whole bytes on a byte boundary: most header fields */
        const uint8_t *p = d + (pos >> 3);
        u64 v = 0;
        for (int i = 0; i < (n >> 3); i++) v = (v << 8) | p[i];
        return v;
    }
    size_t start = pos >> 3, end = (pos + n + 7) >> 3;
    u128 v = 0;
    for (size_t i = start; i < end; i++) v = (v << 8) | d[i];
    v >>= (end * 8 - pos - n);
    return (u64)v & M64(n);
}
static inline u128 getb128(const uint8_t *d, size_t pos, int n) {
    if (n <= 64) return getb64(d, pos, n);
    return ((u128)getb64(d, pos, n - 64) << 64) | getb64(d, pos + n - 64, 64);
}
static inline __attribute__((always_inline)) void putb64(uint8_t *d, size_t pos, int n, u64 v) {
    if (((pos | (size_t)n) & 7) == 0) {
        uint8_t *p = d + (pos >> 3);
        for (int i = (n >> 3) - 1; i >= 0; i--) { p[i] = (uint8_t)v; v >>= 8; }
        return;
    }
    while (n > 0) {
        size_t byte = pos >> 3;
        int off = pos & 7, take = 8 - off;
        if (take > n) take = n;
        unsigned bits = (unsigned)(v >> (n - take)) & ((1u << take) - 1);
        int sh = 8 - off - take;
        unsigned m = ((1u << take) - 1) << sh;
        d[byte] = (uint8_t)((d[byte] & ~m) | (bits << sh));
        pos += take;
        n -= take;
    }
}
static inline void putb128(uint8_t *d, size_t pos, int n, u128 v) {
    if (n <= 64) { putb64(d, pos, n, (u64)v); return; }
    putb64(d, pos, n - 64, (u64)(v >> 64));
    putb64(d, pos + n - 64, 64, (u64)v);
}

/* big-endian loads and stores of whole bytes at any address (the generator's byte-aligned
 * fast paths, cexpr.get_bits_at / put_bits_at) */
static inline __attribute__((always_inline)) u64 ldbe8(const uint8_t *p) { return p[0]; }
static inline __attribute__((always_inline)) u64 ldbe16(const uint8_t *p) {
    uint16_t v; memcpy(&v, p, 2); return __builtin_bswap16(v);
}
static inline __attribute__((always_inline)) u64 ldbe32(const uint8_t *p) {
    uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v);
}
static inline __attribute__((always_inline)) u64 ldbe64(const uint8_t *p) {
    u64 v; memcpy(&v, p, 8); return __builtin_bswap64(v);
}
static inline __attribute__((always_inline)) void stbe8(uint8_t *p, u64 v) { p[0] = (uint8_t)v; }
static inline __attribute__((always_inline)) void stbe16(uint8_t *p, u64 v) {
    uint16_t x = __builtin_bswap16((uint16_t)v); memcpy(p, &x, 2);
}
static inline __attribute__((always_inline)) void stbe32(uint8_t *p, u64 v) {
    uint32_t x = __builtin_bswap32((uint32_t)v); memcpy(p, &x, 4);
}
static inline __attribute__((always_inline)) void stbe64(uint8_t *p, u64 v) {
    u64 x = __builtin_bswap64(v); memcpy(p, &x, 8);
}

/* ---------------------------------------------------------------- hashes (as softswitch/externs.py) */
static u64 h_crc16(const uint8_t *d, size_t n) {
    static uint16_t tbl[256];
    static int init;
    if (!init) {
        for (int i = 0; i < 256; i++) {
            unsigned c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xA001 : c >> 1;
            tbl[i] = (uint16_t)c;
        }
        init = 1;
    }
    unsigned c = 0;
    for (size_t i = 0; i < n; i++) c = (c >> 8) ^ tbl[(c ^ d[i]) & 0xFF];
    return c;
}
static u64 h_crc32(const uint8_t *d, size_t n) {
    static uint32_t tbl[256];
    static int init;
    if (!init) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            tbl[i] = c;
        }
        init = 1;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = (c >> 8) ^ tbl[(c ^ d[i]) & 0xFF];
    return c ^ 0xFFFFFFFFu;
}
static u64 h_csum16(const uint8_t *d, size_t n) {
    u64 s = 0;
    for (size_t i = 0; i + 1 < n; i += 2) s += ((unsigned)d[i] << 8) | d[i + 1];
    if (n & 1) s += (unsigned)d[n - 1] << 8;
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return (~s) & 0xFFFF;
}
static u64 h_xor16(const uint8_t *d, size_t n) {
    unsigned x = 0;
    for (size_t i = 0; i + 1 < n; i += 2) x ^= ((unsigned)d[i] << 8) | d[i + 1];
    if (n & 1) x ^= (unsigned)d[n - 1] << 8;
    return x;
}
/* random source (softswitch/rng.py): xorshift64 over the switch's state */
static u64 h_random(u64 *state) {
    u64 x = *state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    *state = x;
    return x;
}
/* identity: the data as one big-endian integer; reduced modulo mx exactly (mx = 0: low 128 bits) */
static u128 h_identity_mod(const uint8_t *d, size_t n, u128 mx) {
    u128 v = 0;
    if (mx == 0) {
        for (size_t i = 0; i < n; i++) v = (v << 8) | d[i];
        return v;
    }
    for (size_t i = 0; i < n; i++) {
        /* v = (v * 256 + d[i]) mod mx without overflow: shift bit by bit */
        for (int b = 7; b >= 0; b--) {
            int top = (int)(v >> 127);
            v = (v << 1) | ((d[i] >> b) & 1);
            if (top || v >= mx) v -= mx;
        }
    }
    return v;
}
/* custom CRCs (softswitch/crc.py, BMv2's crc_custom): parameters set by the control plane */
typedef struct {
    u64 poly, init, xorv;
    int refin, refout, width;
    u64 table[256];
} CRCC;
static u64 reflect_bits(u64 v, int n) {
    u64 r = 0;
    for (int i = 0; i < n; i++, v >>= 1) r = (r << 1) | (v & 1);
    return r;
}
static void crcc_config(CRCC *c, int width, u64 poly, u64 init, u64 xorv, int refin, int refout) {
    u64 m = M64(width), top = (u64)1 << (width - 1);
    c->width = width; c->poly = poly; c->init = init; c->xorv = xorv; c->refin = refin; c->refout = refout;
    for (u64 d = 0; d < 256; d++) {
        u64 r = d << (width - 8);
        for (int k = 0; k < 8; k++) r = (r & top) ? ((r << 1) ^ poly) & m : (r << 1) & m;
        c->table[d] = r;
    }
}
static u64 crcc_run(const CRCC *c, const uint8_t *d, size_t n) {
    u64 m = M64(c->width), r = c->init;
    int sh = c->width - 8;
    for (size_t i = 0; i < n; i++) {
        u64 b = c->refin ? reflect_bits(d[i], 8) : d[i];
        r = c->table[b ^ (r >> sh)] ^ ((r << 8) & m);
    }
    if (c->refout) r = reflect_bits(r, c->width);
    return r ^ c->xorv;
}

struct PX_;
static const CRCC *ss_crcc(const struct PX_ *px, int calc);  /* rt_tail.c: a calculation's CRC */
static u64 *ss_rng(const struct PX_ *px);                      /* rt_tail.c: its random state */

static u128 ss_hash(const struct PX_ *px, int algo, int calc, const uint8_t *d, size_t n, u128 mx) {
    /* algo: 0 crc32, 1 crc16, 2 random, 3 identity, 4 csum16, 5 xor16, 6 crc16_custom,
     * 7 crc32_custom; calc: the custom CRC's calculation (its index in SW.crcc) */
    u64 h;
    switch (algo) {
    case 0: h = h_crc32(d, n); break;
    case 1: h = h_crc16(d, n); break;
    case 2: h = h_random(ss_rng(px)); break;
    case 3: return h_identity_mod(d, n, mx);
    case 4: h = h_csum16(d, n); break;
    case 6: case 7: h = crcc_run(ss_crcc(px, calc), d, n); break;
    default: h = h_xor16(d, n); break;
    }
    return mx ? (u128)h % mx : (u128)h;
}

/* ---------------------------------------------------------------- meters (softswitch/meters.py) */
/* a two-rate three-colour marker as BMv2's Meter; buckets [0] peak (RED), [1] committed (YELLOW) */
typedef struct {
    double rate[2];       /* units per microsecond */
    u64 burst[2], tokens[2], last[2];
    int configured;
} MCELL;
static int ss_meter_exec(MCELL *m, u64 amount, int64_t now_us) {
    if (!m->configured) return 0;
    double t = now_us > 0 ? (double)now_us : 0.0;
    for (int r = 0; r < 2; r++) {
        double x = t * m->rate[r];  /* saturated below: a cast of 2^64 or more is undefined */
        u64 since = x >= 18446744073709551616.0 ? ~(u64)0 : (u64)x;
        if (since > m->last[r]) {  /* tokens <= burst always: add without overflow */
            u64 add = since - m->last[r];
            m->tokens[r] = add >= m->burst[r] - m->tokens[r] ? m->burst[r] : m->tokens[r] + add;
            m->last[r] = since;
        }
        if (m->tokens[r] < amount) return 2 - r;
        m->tokens[r] -= amount;
    }
    return 0;
}

/* ---------------------------------------------------------------- packets and context */
typedef struct { const uint8_t *data; size_t nbits; size_t pos; } PKT;
typedef struct { uint8_t *buf; size_t len, cap; } OBUF;

static int ob_reserve(OBUF *o, size_t extra) {
    if (o->len + extra <= o->cap) return 0;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + extra) cap *= 2;
    uint8_t *b = realloc(o->buf, cap);
    if (!b) return -1;
    o->buf = b;
    o->cap = cap;
    return 0;
}

struct SW;
typedef struct PX_ {
    struct SW *sw;
    void *st;                     /* the program's stateful externs (generated type ST) */
    int clone_set, clone_type, clone_fl;
    u64 clone_session;
    int resubmit_fl, recirc_fl;   /* -1: not requested */
    int truncate_set;
    u64 truncate;
    int checksum_error;
    int exit;
    int reject;                   /* a header stack index out of range (StackOutOfBounds) */
    int oob;                      /* a run-time stack index out of range in a control statement */
    const uint8_t *payload;
    size_t payload_len;
    u64 cur_len;
    int dm_color;                 /* colour of the last direct-meter table hit; -1 after a miss */
    void *std;                    /* this pass's std_t: a bare mark_to_drop() (BMv2's drop) */
} PX;
static int64_t ss_now(PX *px);    /* rt_tail.c: meter time, microseconds since the switch started */

#define SS_NO_FL (-1)

/* tables: implemented in rt_tail.c, described by the generated SS_TD[] */
#define SS_MAXKEYS 64
/* kind 1 = range; dmeter: 0 none, else the direct meter's MeterType + 1 */
typedef struct { int nkeys, nargs, exact, direct, dmeter; int kinds[SS_MAXKEYS]; } TDESC;
static int ss_lookup(PX *px, int tid, const u128 *keys, uint32_t h, const u128 **args, int *ai);
static uint32_t ss_sel_hash(PX *px, int algo, const uint8_t *d, size_t n);
static int ss_lookup_miss(PX *px, int tid, const u128 **args, int *ai);
static void ss_digest_push(PX *px, int id, const u128 *vals, int n);
static int ss_vs_match(PX *px, int id, const u128 *keys, int nk);
