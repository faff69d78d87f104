/* Batched UDP I/O for the host transports (hostagent/fastio.py loads it with cffi).
 *
 * hio_send: rows of a prebuilt frame array go out with sendmmsg, up to BATCH per system call.
 * hio_recv: every datagram waiting on a non-blocking socket comes in with recvmmsg into rows
 * of a preallocated buffer, with its length and source address.
 * The per-datagram Python path of the transports (sendto / recvfrom) is the reference: these
 * functions put the same bytes on the wire and hand back the same bytes, only in batches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define BATCH 64

/* Send rows idx[0..n) of ``frames`` (``stride`` bytes apart; row r is lens[r] bytes long, or
 * ``stride`` when lens is NULL) to ip:port (both in network order).  A datagram the kernel
 * refuses is skipped and counted as lost: errs[k] is the errno of the k-th refusal (up to
 * ``errcap`` are recorded).  Returns how many were refused. */
int hio_send(int fd, const uint8_t *frames, size_t stride, const uint32_t *lens,
             const int64_t *idx, int n, uint32_t ip, uint16_t port, int *errs, int errcap) {
    struct sockaddr_in dst;
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    int refused = 0, done = 0;
    memset(&dst, 0, sizeof dst);
    dst.sin_family = AF_INET;
    dst.sin_addr.s_addr = ip;
    dst.sin_port = port;
    while (done < n) {
        int m = n - done < BATCH ? n - done : BATCH;
        memset(msgs, 0, sizeof(struct mmsghdr) * (size_t)m);
        for (int k = 0; k < m; k++) {
            int64_t r = idx[done + k];
            iov[k].iov_base = (void *)(frames + (size_t)r * stride);
            iov[k].iov_len = lens ? lens[r] : stride;
            msgs[k].msg_hdr.msg_iov = &iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
            msgs[k].msg_hdr.msg_name = &dst;
            msgs[k].msg_hdr.msg_namelen = sizeof dst;
        }
        int sent = sendmmsg(fd, msgs, (unsigned)m, 0);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            /* the first datagram of the batch was refused: it is lost, go on after it */
            if (refused < errcap)
                errs[refused] = errno;
            refused++;
            sent = 1;
        }
        done += sent;
    }
    return refused;
}

/* Receive without waiting up to ``cap`` datagrams into rows of ``buf`` (``stride`` bytes each).
 * lens[k] is the datagram's full length (larger than ``stride`` when it was cut short), ips[k]
 * and ports[k] its source in network order.  Returns the count, 0 when nothing waits, or
 * -errno. */
int hio_recv(int fd, uint8_t *buf, size_t stride, int cap, uint32_t *lens, uint32_t *ips,
             uint16_t *ports) {
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_in src[BATCH];
    int got = 0;
    while (got < cap) {
        int m = cap - got < BATCH ? cap - got : BATCH;
        memset(msgs, 0, sizeof(struct mmsghdr) * (size_t)m);
        for (int k = 0; k < m; k++) {
            iov[k].iov_base = buf + (size_t)(got + k) * stride;
            iov[k].iov_len = stride;
            msgs[k].msg_hdr.msg_iov = &iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
            msgs[k].msg_hdr.msg_name = &src[k];
            msgs[k].msg_hdr.msg_namelen = sizeof src[k];
        }
        int r = recvmmsg(fd, msgs, (unsigned)m, MSG_DONTWAIT | MSG_TRUNC, NULL);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return got ? got : -errno;
        }
        for (int k = 0; k < r; k++) {
            lens[got + k] = msgs[k].msg_len;
            ips[got + k] = src[k].sin_addr.s_addr;
            ports[got + k] = src[k].sin_port;
        }
        got += r;
        if (r < m)
            break;
    }
    return got;
}
