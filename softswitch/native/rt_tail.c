/* softswitch native runtime, part 2: tables, PRE, the v1model packet flow (as
 * softswitch/pipeline.py, i.e. BMv2 simple_switch), the control API and the port loop.
 * Compiled after the generated program, which provides hdr_t/meta_t/std_t, ST, SS_TD and the
 * ss_parse/ss_verify/ss_ingress/ss_egress/ss_compute/ss_deparse/ss_preserve entry points. */
#include <pthread.h>
#include <poll.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>

#define DROP_PORT 511
#define MAX_PASSES 64
enum { NORMAL = 0, INGRESS_CLONE = 1, EGRESS_CLONE = 2, RECIRC = 4, REPLICATION = 5, RESUBMIT = 6 };

/* gsz/goff/gai/gargs: an indirect table's rows; gsz[i] = 0 runs row i's own action, n > 0 one of
 * the n members at goff[i] (in BMv2's order), -1 nothing (an empty group) */
typedef struct {
    u128 *kv, *km, *args; int *ai; u64 *cnt; int n, *hidx; u64 hmask;
    MCELL *mtr;        /* direct meter cells of the rows (tables with a direct meter) */
    int *gsz, *goff, *gai; u128 *gargs;
    /* a ternary/LPM/range table's rows as the terms that can fail (a key of mask 0 and value 0
     * matches anything): row i is terms roff[i]..roff[i+1] of key rkey[], value rv[], mask rm[] */
    int *roff, *rkey; u128 *rv, *rm;
} TBL;
typedef struct { int n; int *port, *rid; } GRP;
typedef struct { uint32_t id; int n; int *port, *rid; u64 trunc; } SESS;
typedef struct { int id, n; u128 v[64]; } DIG;
/* an output frame; its buffer (bcap bytes) is kept for the next frame in this slot */
typedef struct { int port; size_t len; uint8_t *data; size_t bcap; } OUTP;
/* v[0..n) are the frames; v[n..cap) spare slots whose buffers (maybe NULL) are reused */
typedef struct OUTL { OUTP *v; int n, cap; } OUTL;
typedef struct { int n, nf; u128 *v, *m; } VSET;  /* parser value set: n members of nf (value, mask) */

typedef struct SW {
    pthread_mutex_t mu;
    ST *st;
    TBL tbl[SS_NTABLES > 0 ? SS_NTABLES : 1];
    /* default actions, apart from the tables so that a packet missing many tables in a row
     * reads a few adjacent cache lines */
    int def_ai[SS_NTABLES > 0 ? SS_NTABLES : 1];
    u128 *def_args[SS_NTABLES > 0 ? SS_NTABLES : 1];
    VSET vs[SS_NVS > 0 ? SS_NVS : 1];
    GRP **mc;
    SESS *sess;
    int nsess;
    DIG *dq;
    int dq_n, dq_cap;
    OUTL pin;          /* frames for the CPU port (loop mode) */
    struct ITEM *ifree; /* packet items to reuse (rt_flow.c: item_get/item_put) */
    OBUF ob;           /* the egress pass's deparse buffer, reused */
    u64 stats[8];      /* rx, tx, passes exceeded, oversize, send errors, packet-in dropped, digests dropped */
    CRCC crcc[SS_NCRC > 0 ? SS_NCRC : 1];  /* one per crc16_custom/crc32_custom calculation */
    u64 rng;           /* random source state (softswitch/rng.py) */
    int clock_ext;     /* 1: meter time is now_us, set by the caller before each packet */
    int64_t now_us;
    struct timespec t0;
} SW;

typedef struct ITEM {
    struct ITEM *next;
    int ingress, port, itype, depth, pres_fl;
    uint8_t *data;     /* ingress: the frame; egress: the payload */
    size_t len, dcap;  /* dcap: the buffer's size (kept when the item is reused) */
    u64 trunc;
    /* not zeroed on reuse: pres is read only when pres_fl is set, hdr/meta/std are written
     * whole before a pass reads them */
    meta_t pres;
    hdr_t hdr;
    meta_t meta;
    std_t std;
} ITEM;

typedef struct { SW *sw; OUTL *out; ITEM *head, *tail; } RUN;

/* free every buffer of o, spare slots included */
static void outl_release(OUTL *o) {
    for (int i = 0; i < o->cap; i++) free(o->v[i].data);
    free(o->v);
    o->v = NULL;
    o->n = o->cap = 0;
}

/* ---------------------------------------------------------------- tables */
static u64 key_hash(const u128 *k, int n) {
    u64 h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < n; i++) {  /* two multiply-xorshift rounds per key word */
        h = (h ^ (u64)k[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        h = (h ^ (u64)(k[i] >> 64)) * 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 29;
    }
    return h;
}

static inline int keys_eq(const u128 *a, const u128 *b, int n) {
    for (int i = 0; i < n; i++) if (a[i] != b[i]) return 0;
    return 1;
}

/* an action selector's hash as BMv2's ActionProfile::choose_from_group takes it (unsigned int);
 * identity is BMv2's: the first (at most) 8 bytes, big-endian */
static uint32_t ss_sel_hash(PX *px, int algo, const uint8_t *d, size_t n) {
    if (algo == 3) {
        u64 v = 0;
        for (size_t i = 0; i < n && i < 8; i++) v = (v << 8) | d[i];
        return (uint32_t)v;
    }
    /* a selector's custom CRCs keep their default parameters (profiles.selector_hash) */
    return (uint32_t)ss_hash(px, algo == 6 ? 1 : algo == 7 ? 0 : algo, 0, d, n, 0);
}

static int ss_lookup(PX *px, int tid, const u128 *keys, uint32_t h, const u128 **args, int *ai) {
    TBL *t = &px->sw->tbl[tid];
    const TDESC *d = &SS_TD[tid];
    int nk = d->nkeys, idx = -1;
    if (d->exact) {
        if (t->hidx) {
            for (u64 h = key_hash(keys, nk);; h++) {
                int e = t->hidx[h & t->hmask];
                if (e < 0) break;
                if (keys_eq(&t->kv[(size_t)e * nk], keys, nk)) { idx = e; break; }
            }
        }
    } else {
        for (int i = 0; i < t->n && idx < 0; i++) {
            int ok = 1;
            for (int q = t->roff[i]; q < t->roff[i + 1] && ok; q++) {
                int j = t->rkey[q];
                ok = d->kinds[j] ? (keys[j] >= t->rv[q] && keys[j] <= t->rm[q]) : ((keys[j] & t->rm[q]) == t->rv[q]);
            }
            if (ok) idx = i;
        }
    }
    if (idx < 0) {
        if (d->dmeter) px->dm_color = -1;  /* no meter runs on a miss (BMv2) */
        *ai = px->sw->def_ai[tid]; *args = px->sw->def_args[tid]; return 0;
    }
    if (d->direct) { t->cnt[2 * idx]++; t->cnt[2 * idx + 1] += px->cur_len; }
    if (d->dmeter) px->dm_color = ss_meter_exec(&t->mtr[idx], d->dmeter == 2 ? px->cur_len : 1, ss_now(px));
    if (t->gsz && t->gsz[idx]) {
        int n = t->gsz[idx];
        if (n < 0) { *ai = -1; *args = px->sw->def_args[tid]; return 1; }
        int m = t->goff[idx] + (int)(h % (uint32_t)n);
        *ai = t->gai[m];
        *args = &t->gargs[(size_t)m * (d->nargs ? d->nargs : 1)];
        return 1;
    }
    *ai = t->ai[idx];
    *args = &t->args[(size_t)idx * (d->nargs ? d->nargs : 1)];
    return 1;
}

/* the miss of a table whose rows the generated code compares itself (cgen._fixed_lookup) */
static int ss_lookup_miss(PX *px, int tid, const u128 **args, int *ai) {
    *ai = px->sw->def_ai[tid];
    *args = px->sw->def_args[tid];
    return 0;
}

static void tbl_free(TBL *t) {
    free(t->kv); free(t->km); free(t->args); free(t->ai); free(t->cnt); free(t->hidx); free(t->mtr);
    free(t->gsz); free(t->goff); free(t->gai); free(t->gargs);
    free(t->roff); free(t->rkey); free(t->rv); free(t->rm);
    t->kv = t->km = t->args = t->gargs = t->rv = t->rm = NULL;
    t->ai = t->hidx = t->gsz = t->goff = t->gai = t->roff = t->rkey = NULL;
    t->cnt = NULL; t->mtr = NULL; t->n = 0;
}

/* the terms of a non-exact table's rows (TBL.roff): what a lookup tests, row by row */
static int tbl_terms(TBL *t, const TDESC *d) {
    int nk = d->nkeys;
    size_t nt = 0, q = 0;
    for (size_t x = 0; x < (size_t)t->n * nk; x++)
        if (d->kinds[x % nk] || t->km[x] || t->kv[x]) nt++;
    t->roff = calloc((size_t)t->n + 1, sizeof(int));
    t->rkey = calloc(nt + 1, sizeof(int));
    t->rv = calloc(nt + 1, sizeof(u128));
    t->rm = calloc(nt + 1, sizeof(u128));
    if (!t->roff || !t->rkey || !t->rv || !t->rm) return -1;
    for (int i = 0; i < t->n; i++) {
        t->roff[i] = (int)q;
        for (int j = 0; j < nk; j++) {
            size_t x = (size_t)i * nk + j;
            if (!(d->kinds[j] || t->km[x] || t->kv[x])) continue;
            t->rkey[q] = j; t->rv[q] = t->kv[x]; t->rm[q] = t->km[x];
            q++;
        }
    }
    t->roff[t->n] = (int)q;
    return 0;
}

static u128 w2(const u64 *p, size_t i) { return U128(p[2 * i + 1], p[2 * i]); }

/* replace a table's entries: n rows of keys (value/mask or low/high as lo,hi word pairs), action
 * index, action data, direct-counter values and direct-meter cells (NULL: unconfigured); rows in
 * lookup order (the first match wins) */
int ss_tbl_load(SW *sw, int tid, int n, const u64 *kv, const u64 *km, const int *ai, const u64 *args,
                const u64 *cnt, const MCELL *mtr, const int *gsz, int ng, const int *gai, const u64 *gargs) {
    if (tid < 0 || tid >= SS_NTABLES) return -1;
    const TDESC *d = &SS_TD[tid];
    int nk = d->nkeys, na = d->nargs ? d->nargs : 1;
    TBL t = {0};
    t.n = n;
    t.kv = calloc((size_t)n * nk + 1, sizeof(u128));
    t.km = calloc((size_t)n * nk + 1, sizeof(u128));
    t.args = calloc((size_t)n * na + 1, sizeof(u128));
    t.ai = calloc((size_t)n + 1, sizeof(int));
    t.cnt = calloc((size_t)n * 2 + 1, sizeof(u64));
    t.mtr = calloc((size_t)n + 1, sizeof(MCELL));
    if (!t.kv || !t.km || !t.args || !t.ai || !t.cnt || !t.mtr) { tbl_free(&t); return -2; }
    if (mtr) memcpy(t.mtr, mtr, sizeof(MCELL) * n);
    for (size_t i = 0; i < (size_t)n * nk; i++) { t.kv[i] = w2(kv, i); t.km[i] = w2(km, i); }
    for (size_t i = 0; i < (size_t)n * na; i++) t.args[i] = w2(args, i);
    memcpy(t.ai, ai, sizeof(int) * n);
    memcpy(t.cnt, cnt, sizeof(u64) * 2 * n);
    if (gsz) {  /* an indirect table: ng member rows for its group entries */
        t.gsz = calloc((size_t)n + 1, sizeof(int));
        t.goff = calloc((size_t)n + 1, sizeof(int));
        t.gai = calloc((size_t)ng + 1, sizeof(int));
        t.gargs = calloc((size_t)ng * na + 1, sizeof(u128));
        if (!t.gsz || !t.goff || !t.gai || !t.gargs) { tbl_free(&t); return -2; }
        int off = 0;
        for (int i = 0; i < n; i++) {
            t.gsz[i] = gsz[i];
            t.goff[i] = off;
            if (gsz[i] > 0) off += gsz[i];
        }
        if (off != ng) { tbl_free(&t); return -1; }
        memcpy(t.gai, gai, sizeof(int) * ng);
        for (size_t i = 0; i < (size_t)ng * na; i++) t.gargs[i] = w2(gargs, i);
    }
    if (!d->exact && tbl_terms(&t, d)) { tbl_free(&t); return -2; }
    if (d->exact && n > 0) {
        u64 size = 16;
        while (size < 2 * (u64)n + 2) size *= 2;
        t.hidx = malloc(size * sizeof(int));
        if (!t.hidx) { tbl_free(&t); return -2; }
        for (u64 i = 0; i < size; i++) t.hidx[i] = -1;
        t.hmask = size - 1;
        for (int e = 0; e < n; e++) {
            for (u64 h = key_hash(&t.kv[(size_t)e * nk], nk);; h++) {
                int *slot = &t.hidx[h & t.hmask];
                if (*slot < 0) { *slot = e; break; }
                if (!memcmp(&t.kv[(size_t)*slot * nk], &t.kv[(size_t)e * nk], nk * sizeof(u128))) break;
            }
        }
    }
    pthread_mutex_lock(&sw->mu);
    TBL old = sw->tbl[tid];
    sw->tbl[tid] = t;
    pthread_mutex_unlock(&sw->mu);
    tbl_free(&old);
    return 0;
}

int ss_tbl_default(SW *sw, int tid, int ai, const u64 *args) {
    if (tid < 0 || tid >= SS_NTABLES) return -1;
    int na = SS_TD[tid].nargs ? SS_TD[tid].nargs : 1;
    pthread_mutex_lock(&sw->mu);
    sw->def_ai[tid] = ai;
    for (int i = 0; i < na; i++) sw->def_args[tid][i] = w2(args, i);
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

/* direct counters of the loaded rows (2 words per row) */
int ss_tbl_counters(SW *sw, int tid, u64 *out, int n) {
    if (tid < 0 || tid >= SS_NTABLES) return -1;
    pthread_mutex_lock(&sw->mu);
    TBL *t = &sw->tbl[tid];
    int m = n < t->n ? n : t->n;
    memcpy(out, t->cnt, sizeof(u64) * 2 * m);
    pthread_mutex_unlock(&sw->mu);
    return m;
}

/* direct meter cells of the loaded rows */
int ss_tbl_meters(SW *sw, int tid, MCELL *out, int n) {
    if (tid < 0 || tid >= SS_NTABLES) return -1;
    pthread_mutex_lock(&sw->mu);
    TBL *t = &sw->tbl[tid];
    int m = n < t->n ? n : t->n;
    memcpy(out, t->mtr, sizeof(MCELL) * m);
    pthread_mutex_unlock(&sw->mu);
    return m;
}

/* ---------------------------------------------------------------- meter time, custom CRCs */
static int64_t ss_now(PX *px) {
    SW *sw = px->sw;
    if (sw->clock_ext) return sw->now_us;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)(ts.tv_sec - sw->t0.tv_sec) * 1000000 + (ts.tv_nsec - sw->t0.tv_nsec) / 1000;
}

/* ext 1: meter time is now_us from here on (a test clock); ext 0: the monotonic clock */
void ss_set_now(SW *sw, int ext, int64_t now_us) {
    sw->clock_ext = ext;
    sw->now_us = now_us;
}

static const CRCC *ss_crcc(const struct PX_ *px, int calc) {
    return &px->sw->crcc[calc];
}

static u64 *ss_rng(const struct PX_ *px) { return &px->sw->rng; }

void ss_rng_seed(SW *sw, u64 state) {
    pthread_mutex_lock(&sw->mu);
    sw->rng = state;
    pthread_mutex_unlock(&sw->mu);
}

static void crcc_default(CRCC *c, int width) {
    if (width == 16) crcc_config(c, 16, 0x8005, 0, 0, 1, 1);
    else crcc_config(c, 32, 0x04C11DB7u, 0xFFFFFFFFu, 0xFFFFFFFFu, 1, 1);
}

/* the parameters of custom CRC calculation `calc` (its width must be SS_CRCW[calc]) */
int ss_crc_set(SW *sw, int calc, int width, u64 poly, u64 init, u64 xorv, int refin, int refout) {
    if (calc < 0 || calc >= SS_NCRC || SS_CRCW[calc] != width) return -1;
    CRCC c;
    crcc_config(&c, width, poly, init, xorv, refin, refout);
    pthread_mutex_lock(&sw->mu);
    sw->crcc[calc] = c;
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

/* ---------------------------------------------------------------- switch object */
SW *ss_new(void) {
    SW *sw = calloc(1, sizeof(SW));
    if (!sw) return NULL;
    pthread_mutex_init(&sw->mu, NULL);
    sw->st = calloc(1, sizeof(ST));
    sw->mc = calloc(65536, sizeof(GRP *));
    for (int i = 0; i < SS_NTABLES; i++) {
        int na = SS_TD[i].nargs ? SS_TD[i].nargs : 1;
        sw->def_args[i] = calloc(na, sizeof(u128));
    }
    if (!sw->st || !sw->mc) { free(sw->st); free(sw->mc); free(sw); return NULL; }
    for (int i = 0; i < SS_NCRC; i++) crcc_default(&sw->crcc[i], SS_CRCW[i]);
    clock_gettime(CLOCK_MONOTONIC, &sw->t0);
    sw->rng = 0x9E3779B97F4A7C15ull;
    return sw;
}

static void grp_free(GRP *g) { if (g) { free(g->port); free(g->rid); free(g); } }

void ss_free(SW *sw) {
    if (!sw) return;
    for (int i = 0; i < SS_NTABLES; i++) { tbl_free(&sw->tbl[i]); free(sw->def_args[i]); }
    for (int i = 0; i < SS_NVS; i++) { free(sw->vs[i].v); free(sw->vs[i].m); }
    for (int i = 0; i < 65536; i++) grp_free(sw->mc[i]);
    for (int i = 0; i < sw->nsess; i++) { free(sw->sess[i].port); free(sw->sess[i].rid); }
    outl_release(&sw->pin);
    while (sw->ifree) { ITEM *it = sw->ifree; sw->ifree = it->next; free(it->data); free(it); }
    free(sw->ob.buf); free(sw->sess); free(sw->mc); free(sw->dq); free(sw->st);
    pthread_mutex_destroy(&sw->mu);
    free(sw);
}

static GRP *grp_new(int n, const int *ports, const int *rids) {
    GRP *g = calloc(1, sizeof(GRP));
    if (!g) return NULL;
    g->n = n;
    g->port = malloc(sizeof(int) * (n + 1));
    g->rid = malloc(sizeof(int) * (n + 1));
    if (!g->port || !g->rid) { grp_free(g); return NULL; }
    memcpy(g->port, ports, sizeof(int) * n);
    memcpy(g->rid, rids, sizeof(int) * n);
    return g;
}

int ss_mc_set(SW *sw, int gid, int n, const int *ports, const int *rids) {
    if (gid <= 0 || gid >= 65536) return -1;
    GRP *g = n >= 0 ? grp_new(n, ports, rids) : NULL;
    if (n >= 0 && !g) return -2;
    pthread_mutex_lock(&sw->mu);
    GRP *old = sw->mc[gid];
    sw->mc[gid] = g;
    pthread_mutex_unlock(&sw->mu);
    grp_free(old);
    return 0;
}

int ss_sess_set(SW *sw, uint32_t id, int n, const int *ports, const int *rids, u64 trunc) {
    pthread_mutex_lock(&sw->mu);
    int i;
    for (i = 0; i < sw->nsess && sw->sess[i].id != id; i++);
    if (n < 0) {  /* delete */
        if (i < sw->nsess) {
            free(sw->sess[i].port); free(sw->sess[i].rid);
            sw->sess[i] = sw->sess[--sw->nsess];
        }
        pthread_mutex_unlock(&sw->mu);
        return 0;
    }
    if (i == sw->nsess) {
        SESS *s = realloc(sw->sess, sizeof(SESS) * (sw->nsess + 1));
        if (!s) { pthread_mutex_unlock(&sw->mu); return -2; }
        sw->sess = s;
        memset(&sw->sess[sw->nsess++], 0, sizeof(SESS));
    } else {
        free(sw->sess[i].port); free(sw->sess[i].rid);
    }
    SESS *s = &sw->sess[i];
    s->id = id; s->n = n; s->trunc = trunc;
    s->port = malloc(sizeof(int) * (n + 1));
    s->rid = malloc(sizeof(int) * (n + 1));
    if (s->port) memcpy(s->port, ports, sizeof(int) * n);
    if (s->rid) memcpy(s->rid, rids, sizeof(int) * n);
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

/* ---------------------------------------------------------------- stateful externs */
/* a register cell's value as lo,hi words; cells are esz bytes (cgen.reg_cell_t) */
static void reg_get(const void *cells, int esz, u64 idx, u64 *lohi) {
    u128 v;
    switch (esz) {
    case 1: v = ((const uint8_t *)cells)[idx]; break;
    case 2: v = ((const uint16_t *)cells)[idx]; break;
    case 4: v = ((const uint32_t *)cells)[idx]; break;
    case 8: v = ((const u64 *)cells)[idx]; break;
    default: v = ((const u128 *)cells)[idx]; break;
    }
    lohi[0] = (u64)v;
    lohi[1] = (u64)(v >> 64);
}

static void reg_set(void *cells, int esz, u64 idx, const u64 *lohi) {
    switch (esz) {
    case 1: ((uint8_t *)cells)[idx] = (uint8_t)lohi[0]; break;
    case 2: ((uint16_t *)cells)[idx] = (uint16_t)lohi[0]; break;
    case 4: ((uint32_t *)cells)[idx] = (uint32_t)lohi[0]; break;
    case 8: ((u64 *)cells)[idx] = lohi[0]; break;
    default: ((u128 *)cells)[idx] = U128(lohi[1], lohi[0]); break;
    }
}

int ss_reg_access(SW *sw, int rid, u64 idx, u64 *lohi, int write) {
    u64 size; int esz;
    void *cells = ss_reg_cells(sw->st, rid, &size, &esz);
    if (!cells || idx >= size) return -1;
    pthread_mutex_lock(&sw->mu);
    if (write) reg_set(cells, esz, idx, lohi);
    else reg_get(cells, esz, idx, lohi);
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

int ss_reg_reset(SW *sw, int rid) {
    u64 size; int esz;
    void *cells = ss_reg_cells(sw->st, rid, &size, &esz);
    if (!cells) return -1;
    pthread_mutex_lock(&sw->mu);
    memset(cells, 0, size * esz);
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

int ss_ctr_access(SW *sw, int cid, u64 idx, u64 *pb, int write) {
    u64 size;
    u64 *cells = ss_ctr_cells(sw->st, cid, &size);
    if (!cells || idx >= size) return -1;
    pthread_mutex_lock(&sw->mu);
    if (write) { cells[2 * idx] = pb[0]; cells[2 * idx + 1] = pb[1]; }
    else { pb[0] = cells[2 * idx]; pb[1] = cells[2 * idx + 1]; }
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

int ss_meter_access(SW *sw, int mid, u64 idx, MCELL *cell, int write) {
    u64 size;
    MCELL *cells = ss_meter_cells(sw->st, mid, &size);
    if (!cells || idx >= size) return -1;
    pthread_mutex_lock(&sw->mu);
    if (write) cells[idx] = *cell; else *cell = cells[idx];
    pthread_mutex_unlock(&sw->mu);
    return 0;
}

static void ss_digest_push(PX *px, int id, const u128 *vals, int n) {
    SW *sw = px->sw;
    if (n > 64) n = 64;
    if (sw->dq_n >= 65536) { sw->stats[6]++; return; }  /* nobody drains them: bounded, counted */
    if (sw->dq_n == sw->dq_cap) {
        int cap = sw->dq_cap ? sw->dq_cap * 2 : 64;
        DIG *q = realloc(sw->dq, sizeof(DIG) * cap);
        if (!q) return;
        sw->dq = q;
        sw->dq_cap = cap;
    }
    DIG *d = &sw->dq[sw->dq_n++];
    d->id = id;
    d->n = n;
    memcpy(d->v, vals, sizeof(u128) * n);
}

/* take the oldest digest: returns its field count (values as lo,hi pairs), -1 when none */
int ss_digest_pop(SW *sw, int *id, u64 *vals) {
    pthread_mutex_lock(&sw->mu);
    int n = -1;
    if (sw->dq_n > 0) {
        DIG *d = &sw->dq[0];
        *id = d->id;
        n = d->n;
        for (int i = 0; i < n; i++) { vals[2 * i] = (u64)d->v[i]; vals[2 * i + 1] = (u64)(d->v[i] >> 64); }
        memmove(sw->dq, sw->dq + 1, sizeof(DIG) * (--sw->dq_n));
    }
    pthread_mutex_unlock(&sw->mu);
    return n;
}

/* ---------------------------------------------------------------- parser value sets */
static int ss_vs_match(PX *px, int id, const u128 *keys, int nk) {
    VSET *s = &px->sw->vs[id];
    if (s->nf != nk) return 0;
    for (int i = 0; i < s->n; i++) {
        int ok = 1;
        for (int j = 0; j < nk && ok; j++) ok = (keys[j] & s->m[i * nk + j]) == s->v[i * nk + j];
        if (ok) return 1;
    }
    return 0;
}

int ss_vs_load(SW *sw, int id, int n, int nf, const u64 *v, const u64 *m) {
    if (id < 0 || id >= SS_NVS) return -1;
    u128 *nv = calloc((size_t)n * nf + 1, sizeof(u128)), *nm = calloc((size_t)n * nf + 1, sizeof(u128));
    if (!nv || !nm) { free(nv); free(nm); return -2; }
    for (size_t i = 0; i < (size_t)n * nf; i++) { nv[i] = w2(v, i); nm[i] = w2(m, i); }
    pthread_mutex_lock(&sw->mu);
    VSET old = sw->vs[id];
    sw->vs[id] = (VSET){n, nf, nv, nm};
    pthread_mutex_unlock(&sw->mu);
    free(old.v);
    free(old.m);
    return 0;
}
