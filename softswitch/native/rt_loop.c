/* softswitch native runtime, part 4: the port loop.  One thread polls every AF_PACKET socket,
 * receives batches with recvmmsg, runs them through the pipeline holding sw->mu once per batch
 * (so control-plane calls interleave between batches), and sends with sendmmsg.  802.1Q tags
 * the kernel moved into PACKET_AUXDATA are put back into the frame.  Frames for the CPU port
 * are queued for Python (packet-in), signalled on evfd, as are new digests. */
#define LB 64
#define LFRAME 16384
#define HEADROOM 8
#define PIN_MAX 4096

static size_t with_vlan(struct msghdr *mh, uint8_t **data, size_t len) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
        struct tpacket_auxdata aux;
        memcpy(&aux, CMSG_DATA(c), sizeof aux);
        if (!(aux.tp_status & TP_STATUS_VLAN_VALID) || len < 12) continue;
        unsigned tpid = (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) ? aux.tp_vlan_tpid : 0x8100;
        uint8_t *d = *data - 4;
        memmove(d, *data, 12);
        d[12] = tpid >> 8; d[13] = tpid & 0xFF;
        d[14] = aux.tp_vlan_tci >> 8; d[15] = aux.tp_vlan_tci & 0xFF;
        *data = d;
        return len + 4;
    }
    return len;
}

static void send_port(SW *sw, int fd, OUTP *v, int n) {
    struct mmsghdr mm[LB];
    struct iovec iov[LB];
    while (n > 0) {
        int k = n < LB ? n : LB;
        for (int i = 0; i < k; i++) {
            iov[i] = (struct iovec){v[i].data, v[i].len};
            memset(&mm[i], 0, sizeof mm[i]);
            mm[i].msg_hdr.msg_iov = &iov[i];
            mm[i].msg_hdr.msg_iovlen = 1;
        }
        int done = 0;
        while (done < k) {
            int s = sendmmsg(fd, mm + done, k - done, 0);
            if (s < 0) {
                if (errno == EINTR) continue;
                sw->stats[4] += k - done;
                break;
            }
            sw->stats[1] += s;
            done += s;
        }
        v += k;
        n -= k;
    }
}

static void dispatch(SW *sw, OUTL *out, int n, const int *fds, const int *ports, int cpu_port, int evfd) {
    int signal = 0;
    for (int j = 0; j < n; j++) {
        /* outputs in emission order per port: gather this port's frames */
        OUTP batch[LB];
        int m = 0;
        for (int i = 0; i < out->n; i++) {
            if (out->v[i].port != ports[j]) continue;
            batch[m++] = out->v[i];
            if (m == LB) { send_port(sw, fds[j], batch, m); m = 0; }
        }
        if (m) send_port(sw, fds[j], batch, m);
    }
    if (cpu_port >= 0) {
        pthread_mutex_lock(&sw->mu);
        for (int i = 0; i < out->n; i++) {
            if (out->v[i].port != cpu_port) continue;
            if (sw->pin.n >= PIN_MAX) { sw->stats[5]++; continue; }
            outl_add(&sw->pin, cpu_port, out->v[i].data, out->v[i].len);
            signal = 1;
        }
        pthread_mutex_unlock(&sw->mu);
    }
    if (signal && evfd >= 0) { u64 one = 1; ssize_t w = write(evfd, &one, 8); (void)w; }
    outl_clear(out);
}

/* run until wakefd becomes readable; fds[i] is the socket of switch port ports[i] */
int ss_loop(SW *sw, int n, const int *fds, const int *ports, int wakefd, int evfd, int cpu_port) {
    uint8_t *bufs = malloc((size_t)LB * (LFRAME + HEADROOM));
    struct mmsghdr *mm = calloc(LB, sizeof *mm);
    struct iovec *iov = calloc(LB, sizeof *iov);
    struct sockaddr_ll *addr = calloc(LB, sizeof *addr);
    char (*ctl)[CMSG_SPACE(sizeof(struct tpacket_auxdata)) + 64] = calloc(LB, sizeof *ctl);
    struct pollfd *pfd = calloc(n + 1, sizeof *pfd);
    OUTL out = {0};
    int rc = 0;
    if (!bufs || !mm || !iov || !addr || !ctl || !pfd) { rc = -1; goto done; }
    for (int i = 0; i < n; i++) pfd[i] = (struct pollfd){fds[i], POLLIN, 0};
    pfd[n] = (struct pollfd){wakefd, POLLIN, 0};
    for (;;) {
        if (poll(pfd, n + 1, -1) < 0) {
            if (errno == EINTR) continue;
            rc = -errno;
            break;
        }
        if (pfd[n].revents) break;
        for (int i = 0; i < n; i++) {
            if (!(pfd[i].revents & POLLIN)) continue;
            for (int k = 0; k < LB; k++) {
                iov[k] = (struct iovec){bufs + (size_t)k * (LFRAME + HEADROOM) + HEADROOM, LFRAME};
                memset(&mm[k], 0, sizeof mm[k]);
                mm[k].msg_hdr.msg_iov = &iov[k];
                mm[k].msg_hdr.msg_iovlen = 1;
                mm[k].msg_hdr.msg_name = &addr[k];
                mm[k].msg_hdr.msg_namelen = sizeof addr[k];
                mm[k].msg_hdr.msg_control = ctl[k];
                mm[k].msg_hdr.msg_controllen = sizeof ctl[k];
            }
            int got = recvmmsg(fds[i], mm, LB, MSG_DONTWAIT, NULL);
            if (got <= 0) continue;
            pthread_mutex_lock(&sw->mu);
            int dq_before = sw->dq_n;
            for (int k = 0; k < got; k++) {
                if (addr[k].sll_pkttype == PACKET_OUTGOING) continue;
                if (mm[k].msg_hdr.msg_flags & MSG_TRUNC) { sw->stats[3]++; continue; }
                uint8_t *d = iov[k].iov_base;
                size_t len = with_vlan(&mm[k].msg_hdr, &d, mm[k].msg_len);
                sw->stats[0]++;
                run_frame(sw, &out, ports[i], d, len);
            }
            int new_digests = sw->dq_n > dq_before;
            pthread_mutex_unlock(&sw->mu);
            dispatch(sw, &out, n, fds, ports, cpu_port, evfd);
            if (new_digests && evfd >= 0) { u64 one = 1; ssize_t w = write(evfd, &one, 8); (void)w; }
        }
    }
done:
    outl_release(&out);
    free(bufs); free(mm); free(iov); free(addr); free(ctl); free(pfd);
    return rc;
}

/* take the oldest frame sent to the CPU port: 1 = copied, 0 = none, -1 = buf too small */
int ss_pktin_pop(SW *sw, uint8_t *buf, size_t cap, size_t *len) {
    pthread_mutex_lock(&sw->mu);
    int rc = 0;
    if (sw->pin.n > 0) {
        OUTP p = sw->pin.v[0];
        *len = p.len;
        if (p.len > cap) rc = -1;
        else {
            memcpy(buf, p.data, p.len);
            memmove(sw->pin.v, sw->pin.v + 1, sizeof(OUTP) * (--sw->pin.n));
            sw->pin.v[sw->pin.n] = p;  /* its buffer becomes a spare slot's (outl_add reuses it) */
            rc = 1;
        }
    }
    pthread_mutex_unlock(&sw->mu);
    return rc;
}

void ss_stats(SW *sw, u64 *out) {
    pthread_mutex_lock(&sw->mu);
    memcpy(out, sw->stats, sizeof sw->stats);
    pthread_mutex_unlock(&sw->mu);
}
