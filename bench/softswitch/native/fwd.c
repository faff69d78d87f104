/* The machine's limit for a user-space switch on these ports: a minimal C forwarder.  Port A <-> B
 * over AF_PACKET with recvmmsg/sendmmsg batches; per frame 32 register read-add-writes (as a
 * 32-lane aggregation does), the destination MAC rewritten and the IPv4 TTL decremented.
 * usage: fwd IFNAME_A IFNAME_B DST_MAC_HEX */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#define B 64
#define FR 2048
static uint32_t regs[32][4096];
static volatile sig_atomic_t stop;
static void on_term(int s) { (void)s; stop = 1; }

static int open_port(const char *ifname) {
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
                            .sll_ifindex = (int)if_nametoindex(ifname)};
    if (fd < 0 || !a.sll_ifindex || bind(fd, (struct sockaddr *)&a, sizeof a)) { perror(ifname); exit(1); }
    int one = 1; /* do not receive our own transmissions (Linux >= 4.20; skipped below otherwise) */
    (void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    return fd;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: fwd IF_A IF_B DST_MAC_HEX\n"); return 2; }
    int fd[2] = {open_port(argv[1]), open_port(argv[2])};
    uint8_t mac[6];
    for (int i = 0; i < 6; i++) sscanf(argv[3] + 2 * i, "%2hhx", &mac[i]);
    signal(SIGTERM, on_term);
    static uint8_t buf[B][FR];
    struct mmsghdr mm[B], out[B];
    struct iovec iov[B], oiov[B];
    struct sockaddr_ll addr[B];
    struct pollfd p[2] = {{fd[0], POLLIN, 0}, {fd[1], POLLIN, 0}};
    while (!stop) {
        if (poll(p, 2, 200) <= 0) continue;
        for (int s = 0; s < 2; s++) {
            if (!(p[s].revents & POLLIN)) continue;
            for (int k = 0; k < B; k++) {
                iov[k] = (struct iovec){buf[k], FR};
                memset(&mm[k], 0, sizeof mm[k]);
                mm[k].msg_hdr.msg_iov = &iov[k];
                mm[k].msg_hdr.msg_iovlen = 1;
                mm[k].msg_hdr.msg_name = &addr[k];
                mm[k].msg_hdr.msg_namelen = sizeof addr[k];
            }
            int n = recvmmsg(fd[s], mm, B, MSG_DONTWAIT, NULL), m = 0;
            for (int k = 0; k < n; k++) {
                if (addr[k].sll_pkttype == PACKET_OUTGOING || mm[k].msg_len < 34) continue;
                uint8_t *f = buf[k];
                uint32_t idx = (f[30] << 8 | f[31]) & 4095;
                for (int l = 0; l < 32; l++) regs[l][idx] += f[(42 + l) % mm[k].msg_len];
                memcpy(f, mac, 6);
                f[22]--;
                oiov[m] = (struct iovec){f, mm[k].msg_len};
                memset(&out[m], 0, sizeof out[m]);
                out[m].msg_hdr.msg_iov = &oiov[m];
                out[m].msg_hdr.msg_iovlen = 1;
                m++;
            }
            for (int done = 0; done < m;) {
                int r = sendmmsg(fd[1 - s], out + done, m - done, 0);
                if (r <= 0) { if (errno == EINTR) continue; break; }
                done += r;
            }
        }
    }
    return 0;
}
