/* softswitch native runtime, part 3: the v1model packet flow, as softswitch/pipeline.py
 * (BMv2 simple_switch): ingress pass -> I2E clone, resubmit, multicast, drop, unicast;
 * egress pass -> E2E clone, drop, deparse, truncate, recirculate or transmit.
 * Per frame nothing is allocated once the pools are warm: items come from SW.ifree with their
 * buffers, output frames keep their buffers in OUTL's spare slots, the deparse buffer is SW.ob. */

/* room for len bytes in *buf (capacity *cap), keeping the buffer when it is big enough */
static int buf_fit(uint8_t **buf, size_t *cap, size_t len) {
    if (len <= *cap && *buf) return 0;
    size_t c = len > 64 ? len : 64;
    uint8_t *b = realloc(*buf, c);
    if (!b) return -1;
    *buf = b;
    *cap = c;
    return 0;
}

static int outl_add(OUTL *o, int port, const uint8_t *d, size_t len) {
    if (o->n == o->cap) {
        int cap = o->cap ? o->cap * 2 : 8;
        OUTP *v = realloc(o->v, sizeof(OUTP) * cap);
        if (!v) return -1;
        memset(v + o->cap, 0, sizeof(OUTP) * (cap - o->cap));
        o->v = v;
        o->cap = cap;
    }
    OUTP *p = &o->v[o->n];
    if (buf_fit(&p->data, &p->bcap, len)) return -1;
    memcpy(p->data, d, len);
    p->port = port;
    p->len = len;
    o->n++;
    return 0;
}

/* forget the frames, keep their buffers for the next ones */
static void outl_clear(OUTL *o) { o->n = 0; }

/* an item holding a copy of d (from the pool when it has one) */
static ITEM *item_get(SW *sw, int ingress, const uint8_t *d, size_t len) {
    ITEM *it = sw->ifree;
    if (it) sw->ifree = it->next;
    else if (!(it = malloc(sizeof(ITEM)))) return NULL;
    else { it->data = NULL; it->dcap = 0; }
    if (buf_fit(&it->data, &it->dcap, len)) { free(it->data); free(it); return NULL; }
    memcpy(it->data, d, len);
    it->next = NULL;
    it->len = len;
    it->ingress = ingress;
    it->port = it->itype = it->depth = 0;
    it->trunc = 0;
    it->pres_fl = SS_NO_FL;
    return it;
}

static void item_put(SW *sw, ITEM *it) {
    it->next = sw->ifree;
    sw->ifree = it;
}

/* a copy of e's packet state (hdr, meta, std) with e's payload */
static ITEM *item_dup(SW *sw, const ITEM *e) {
    ITEM *it = item_get(sw, 0, e->data, e->len);
    if (!it) return NULL;
    it->hdr = e->hdr; it->meta = e->meta; it->std = e->std;
    return it;
}

static void push(RUN *r, ITEM *it) {
    if (!it) return;
    it->next = NULL;
    if (r->tail) r->tail->next = it; else r->head = it;
    r->tail = it;
}

static void px_init(PX *px, SW *sw) {
    memset(px, 0, sizeof *px);
    px->sw = sw;
    px->st = sw->st;
    px->resubmit_fl = px->recirc_fl = px->clone_fl = SS_NO_FL;
    px->dm_color = -1;
}

static void do_parse(PX *px, const uint8_t *d, size_t len, int port, int itype, int fl, const meta_t *pres,
                     hdr_t *hdr, meta_t *meta, std_t *std) {
    memset(hdr, 0, sizeof *hdr);
    memset(meta, 0, sizeof *meta);
    memset(std, 0, sizeof *std);
    std->f_ingress_port = port;
    std->f_packet_length = (itype == NORMAL || itype == RECIRC) ? len : 0;
    std->f_instance_type = itype;
    if (fl != SS_NO_FL) ss_preserve(fl, meta, pres);
    PKT pk = {d, len * 8, 0};
    int err = ss_parse(px, &pk, hdr, meta, std);
    if (err >= 0) std->f_parser_error = err;
    px->reject = 0;  /* an index out of range in the parser is its error, not a drop */
    px->payload = d + (pk.pos >> 3);
    px->payload_len = len - (pk.pos >> 3);
}

static void do_clone(RUN *r, PX *px, const uint8_t *d, size_t len, int port, const meta_t *meta, int itype,
                     int depth) {
    SW *sw = r->sw;
    SESS *s = NULL;
    for (int i = 0; i < sw->nsess; i++) if (sw->sess[i].id == px->clone_session) s = &sw->sess[i];
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        PX cx;
        px_init(&cx, sw);
        ITEM *it = item_get(sw, 0, (const uint8_t *)"", 0);
        if (!it) return;
        do_parse(&cx, d, len, port, itype, px->clone_fl, meta, &it->hdr, &it->meta, &it->std);
        if (buf_fit(&it->data, &it->dcap, cx.payload_len)) { item_put(sw, it); return; }
        memcpy(it->data, cx.payload, cx.payload_len);
        it->len = cx.payload_len;
        it->std.f_egress_port = s->port[i];
        it->std.f_egress_rid = s->rid[i];
        it->std.f_instance_type = itype;
        it->std.f_egress_spec = s->port[i];
        it->depth = depth + 1;
        it->trunc = s->trunc;
        push(r, it);
    }
}

/* the ingress pass of `in`; the packet state is parsed straight into the item that goes on
 * to egress (e), which goes back to the pool when nothing does */
static void ingress_pass(RUN *r, ITEM *in) {
    SW *sw = r->sw;
    PX px;
    px_init(&px, sw);
    px.cur_len = in->len;
    ITEM *e = item_get(sw, 0, (const uint8_t *)"", 0);
    if (!e) return;
    hdr_t *hdr = &e->hdr; meta_t *meta = &e->meta; std_t *std = &e->std;
    do_parse(&px, in->data, in->len, in->port, in->itype, in->pres_fl, &in->pres, hdr, meta, std);
    ss_verify(&px, hdr, meta);
    px.exit = 0;
    std->f_checksum_error = px.checksum_error;
    px.std = std;
    ss_ingress(&px, hdr, meta, std);
    px.exit = 0;
    if (px.reject) goto unused;  /* StackOutOfBounds in ingress: dropped (pipeline.py) */
    if (px.clone_set && px.clone_type == 0)
        do_clone(r, &px, in->data, in->len, in->port, meta, INGRESS_CLONE, in->depth);
    u64 trunc = px.truncate_set ? px.truncate : 0;
    if (px.resubmit_fl != SS_NO_FL) {
        ITEM *it = item_get(sw, 1, in->data, in->len);
        if (!it) goto unused;
        it->port = in->port; it->itype = RESUBMIT; it->depth = in->depth + 1;
        it->pres_fl = px.resubmit_fl; it->pres = *meta;
        push(r, it);
        goto unused;
    }
    if (std->f_egress_spec == DROP_PORT && std->f_mcast_grp == 0) goto unused;
    if (buf_fit(&e->data, &e->dcap, px.payload_len)) goto unused;
    memcpy(e->data, px.payload, px.payload_len);
    e->len = px.payload_len;
    e->depth = in->depth;
    e->trunc = trunc;
    if (std->f_mcast_grp != 0) {
        GRP *g = sw->mc[std->f_mcast_grp & 0xFFFF];
        if (!g || g->n == 0) goto unused;
        std_t s0 = *std;
        for (int i = 0; i < g->n; i++) {
            ITEM *it = i == 0 ? e : item_dup(sw, e);  /* e's hdr/meta are not changed below */
            if (!it) return;
            it->std = s0;
            it->std.f_egress_port = g->port[i];
            it->std.f_egress_rid = g->rid[i];
            it->std.f_instance_type = REPLICATION;
            it->depth = in->depth;
            it->trunc = trunc;
            push(r, it);
        }
        return;
    }
    std->f_egress_port = std->f_egress_spec;
    push(r, e);
    return;
unused:
    item_put(sw, e);
}

static int deparse(PX *px, ITEM *e, OBUF *ob) {
    ss_compute(px, &e->hdr, &e->meta);
    px->exit = 0;
    ss_deparse(px, ob, &e->hdr);
    if (ob_reserve(ob, e->len)) return -1;
    memcpy(ob->buf + ob->len, e->data, e->len);
    ob->len += e->len;
    return 0;
}

static void egress_pass(RUN *r, ITEM *e) {
    PX px;
    px_init(&px, r->sw);
    px.payload = e->data;
    px.payload_len = e->len;
    px.cur_len = e->std.f_packet_length;
    px.std = &e->std;
    ss_egress(&px, &e->hdr, &e->meta, &e->std);
    px.exit = 0;
    if (px.reject) return;
    OBUF *ob = &r->sw->ob;  /* one egress pass at a time (the caller holds sw->mu) */
    ob->len = 0;
    int have = 0;
    if (px.clone_set && px.clone_type == 1) {
        if (deparse(&px, e, ob)) return;
        have = 1;
        do_clone(r, &px, ob->buf, ob->len, e->std.f_ingress_port, &e->meta, EGRESS_CLONE, e->depth);
    }
    if (e->std.f_egress_spec == DROP_PORT) return;
    if (!have && deparse(&px, e, ob)) return;
    size_t len = ob->len;
    if (px.truncate_set && px.truncate < len) len = px.truncate;
    if (e->trunc && e->trunc < len) len = e->trunc;
    const uint8_t *data = ob->buf ? ob->buf : (const uint8_t *)"";
    if (px.recirc_fl != SS_NO_FL) {
        ITEM *it = item_get(r->sw, 1, data, len);
        if (!it) return;
        it->port = e->std.f_ingress_port; it->itype = RECIRC; it->depth = e->depth + 1;
        it->pres_fl = px.recirc_fl; it->pres = e->meta;
        push(r, it);
        return;
    }
    outl_add(r->out, (int)e->std.f_egress_port, data, len);
}

/* run one frame through the pipeline (caller holds sw->mu); outputs are appended to out */
static void run_frame(SW *sw, OUTL *out, int port, const uint8_t *d, size_t len) {
    RUN r = {sw, out, NULL, NULL};
    ITEM *first = item_get(sw, 1, d, len);
    if (!first) return;
    first->port = port;
    first->itype = NORMAL;
    push(&r, first);
    int passes = 0;
    while (r.head) {
        ITEM *it = r.head;
        r.head = it->next;
        if (!r.head) r.tail = NULL;
        if (++passes > MAX_PASSES) {
            sw->stats[2]++;
            item_put(sw, it);
            continue;
        }
        if (it->ingress) ingress_pass(&r, it); else egress_pass(&r, it);
        item_put(sw, it);
    }
}

/* ---------------------------------------------------------------- process() API */
OUTL *ss_process(SW *sw, int port, const uint8_t *d, size_t len) {
    OUTL *o = calloc(1, sizeof(OUTL));
    if (!o) return NULL;
    pthread_mutex_lock(&sw->mu);
    run_frame(sw, o, port, d, len);
    pthread_mutex_unlock(&sw->mu);
    return o;
}

int ss_outl_n(OUTL *o) { return o->n; }
const uint8_t *ss_outl_get(OUTL *o, int i, int *port, size_t *len) {
    *port = o->v[i].port;
    *len = o->v[i].len;
    return o->v[i].data;
}
void ss_outl_free(OUTL *o) { outl_release(o); free(o); }

/* Pipeline only, no I/O: run n frames (stride apart, lens[i] bytes, from ports[i]) in order;
 * outs[0] = frames emitted.  Returns the elapsed seconds (the benchmark's in-process row). */
double ss_run_many(SW *sw, const int *ports, const uint8_t *frames, size_t stride, const size_t *lens, int n,
                   int64_t *outs) {
    OUTL o = {0};
    struct timespec a, b;
    int64_t total = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&sw->mu);
        run_frame(sw, &o, ports[i], frames + (size_t)i * stride, lens[i]);
        pthread_mutex_unlock(&sw->mu);
        total += o.n;
        outl_clear(&o);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    outl_release(&o);
    outs[0] = total;
    return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}
