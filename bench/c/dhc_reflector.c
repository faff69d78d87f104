/* A one-worker "switch" for measuring a DHC agent alone: every DHC DATA datagram that arrives
 * on the bound address goes straight back to its sender as a RESULT (for a job of one worker
 * the aggregate of a chunk is the chunk itself).  Batched with recvmmsg/sendmmsg so the agent,
 * not this program, is the bottleneck.  Runs until SIGTERM/SIGINT; prints datagrams echoed.
 *
 *   dhc_reflector BIND_IP PORT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 64
#define MAXLEN 2048
#define DHC_DATA 1
#define DHC_RESULT 2

static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s BIND_IP PORT\n", argv[0]);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    if (fd < 0 || inet_pton(AF_INET, argv[1], &me.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&me, sizeof me) != 0) {
        perror("dhc_reflector: bind");
        return 1;
    }
    int bufsz = 8 << 20; /* as the agents' sockets (hostagent/sockets.py): a window of 256
                            frames in flight must not overflow the reflector's queue */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof bufsz);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof bufsz);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    static unsigned char buf[BATCH][MAXLEN];
    struct sockaddr_in from[BATCH];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    unsigned long long echoed = 0;
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        for (int i = 0; i < BATCH; i++) {
            iov[i] = (struct iovec){.iov_base = buf[i], .iov_len = MAXLEN};
            msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i], .msg_namelen = sizeof from[i],
                                              .msg_iov = &iov[i], .msg_iovlen = 1};
        }
        int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
        if (n <= 0)
            continue; /* EINTR on a signal: the loop condition decides */
        int out = 0;
        for (int i = 0; i < n; i++) {
            unsigned len = msgs[i].msg_len;
            if (len < 1 || (buf[i][0] & 0x0F) != DHC_DATA)
                continue; /* not a DATA datagram: dropped */
            buf[i][0] = (unsigned char)((buf[i][0] & 0xF0) | DHC_RESULT);
            iov[i].iov_len = len;
            msgs[out] = msgs[i];
            out++;
        }
        for (int sent = 0; sent < out;) {
            int k = sendmmsg(fd, msgs + sent, (unsigned)(out - sent), 0);
            if (k <= 0)
                break;
            sent += k;
            echoed += (unsigned long long)k;
        }
    }
    printf("%llu\n", echoed);
    return 0;
}
