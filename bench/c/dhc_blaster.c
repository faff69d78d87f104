/* The C reference rate for dhc-bench agent-pps: how many DHC frames per second a minimal C
 * client moves through the reflector (bench/c/dhc_reflector.c) on the same path, with the same
 * frame size and window as the agent.  It keeps WINDOW frames in flight (one sendmmsg batch per
 * pass, one recvmmsg drain), counts answers and does nothing else: no matching, no timers, no
 * codec.  What a host engine reaches as a share of this rate is what its own work costs.
 *
 *   dhc_blaster DEST_IP PORT FRAMES FRAME_BYTES WINDOW
 * prints one JSON object: frames sent, answered and lost (no answer within 100 ms; that wait
 * is left out of the seconds), seconds, CPU seconds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define MAXLEN 2048

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s DEST_IP PORT FRAMES FRAME_BYTES WINDOW\n", argv[0]);
        return 2;
    }
    long total = atol(argv[3]), size = atol(argv[4]), window = atol(argv[5]);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1 || total < 1 || size < 1 ||
        size > MAXLEN || window < 1) {
        fprintf(stderr, "dhc_blaster: bad arguments\n");
        return 2;
    }
    int sz = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    static unsigned char out[MAXLEN], in[BATCH][MAXLEN];
    memset(out, 0, sizeof out);
    out[0] = (1 << 4) | 1; /* version 1, DATA: the reflector answers it */
    struct iovec siov[BATCH], riov[BATCH];
    struct mmsghdr smsg[BATCH], rmsg[BATCH];
    for (int i = 0; i < BATCH; i++) {
        siov[i] = (struct iovec){.iov_base = out, .iov_len = (size_t)size};
        smsg[i].msg_hdr = (struct msghdr){.msg_name = &dst, .msg_namelen = sizeof dst,
                                          .msg_iov = &siov[i], .msg_iovlen = 1};
    }
    long sent = 0, answered = 0, lost = 0;
    double stalled = 0;
    double t0 = now(), c0 = cpu();
    while (answered + lost < total) {
        while (sent < total && sent - answered - lost < window) {
            long room = window - (sent - answered - lost), left = total - sent;
            int m = (int)(room < left ? room : left);
            m = m < BATCH ? m : BATCH;
            int k = sendmmsg(fd, smsg, (unsigned)m, 0);
            if (k <= 0)
                break;
            sent += k;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) { /* answers lost: count them, leave the stall out */
            if (sent == answered + lost && sent == total)
                break;
            stalled += 0.1;
            lost = sent - answered;
            if (sent == total)
                break;
            continue;
        }
        for (;;) {
            for (int i = 0; i < BATCH; i++) {
                riov[i] = (struct iovec){.iov_base = in[i], .iov_len = MAXLEN};
                rmsg[i].msg_hdr = (struct msghdr){.msg_iov = &riov[i], .msg_iovlen = 1};
            }
            int r = recvmmsg(fd, rmsg, BATCH, MSG_DONTWAIT, NULL);
            if (r <= 0)
                break;
            answered += r;
            if (r < BATCH)
                break;
        }
    }
    double secs = now() - t0 - stalled, cpus = cpu() - c0;
    printf("{\"frames_sent\": %ld, \"frames_answered\": %ld, \"frames_lost\": %ld, "
           "\"seconds\": %.6f, \"cpu_seconds\": %.6f}\n", sent, answered, lost, secs, cpus);
    return 0;
}
