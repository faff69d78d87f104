/* Receive coalescing for the native delivery engine's socket loops (native_delivery.c):
 * how long the loop sleeps before draining the socket, and the time per answer it measures.
 * hostagent/native_delivery.py states the same rule in Python (linger_reference,
 * sample_reference); tests/hostagent/test_coalescing.py holds these functions to it.
 *
 * On a paced link the answers trickle in one every few tens of microseconds, and a loop that
 * wakes for each of them pays a ppoll, a recvmmsg and a sendmmsg (plus two context switches)
 * per one or two packets.  While many items are in flight the loop gains nothing by waking
 * that early: it sleeps until about a quarter of them can have been answered (at most
 * HDE_LINGER_ITEMS), then drains them in one recvmmsg and refills the window in one sendmmsg.
 * The time per answer is measured from the completions (falling fast, rising slowly: an
 * estimate too long lets the pipe run dry and then measures its own idle time); a quarter
 * leaves three quarters of the items in the pipe, and the last answers of an exchange (fewer
 * than 8 in flight) are taken as they come.  The sleep never passes the next deadline nor a
 * quarter of the smoothed RTT.  Only when the socket is read changes: the engine makes the same
 * decisions from the same answers and clock readings (delivery.py stays the reference), and
 * both transports (DHC chunks, ring steps) use it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include "native_delivery.h"

#define HDE_LINGER_ITEMS 16
#define HDE_LINGER_MIN 20e-6 /* below this a sleep costs more than the wake-ups it saves */
/* Answers closer together than this already come several per wake-up (the loop's own round of
 * recvmmsg + sendmmsg takes about as long), so a sleep would only let the pipe run dry: on an
 * unpaced loopback lingering cut one agent's frames/s by a third (docs/e2e.md). */
#define HDE_LINGER_GAP_MIN 10e-6

double hde_linger_for(const hde_sock *s, const hde_engine *e, const hde_out *o, double wait) {
    if (!s->coalesce)
        return 0.0;
    int64_t batch = (o->sent - o->n_done) / 4;
    if (batch > HDE_LINGER_ITEMS)
        batch = HDE_LINGER_ITEMS;
    if (batch < 2 || s->gap < HDE_LINGER_GAP_MIN)
        return 0.0;
    double t = (double)batch * s->gap;
    if (e->has_srtt && t > e->srtt / 4)
        t = e->srtt / 4;
    if (t > wait)
        t = wait;
    return t >= HDE_LINGER_MIN ? t : 0.0;
}

/* After a receive: one time-per-answer sample from the completions since the last one (the
 * first completion of an exchange only sets the mark: before it the pipe was filling), taken
 * in with weight 1/2 below the estimate and 1/8 above it. */
void hde_linger_sample(hde_sock *s, int64_t n_done, double now) {
    if (n_done <= s->mark_done)
        return;
    if (s->mark_t > 0) {
        double g = (now - s->mark_t) / (double)(n_done - s->mark_done);
        s->gap = s->gap <= 0 ? g : s->gap + (g - s->gap) * (g < s->gap ? 0.5 : 0.125);
    }
    s->mark_t = now;
    s->mark_done = n_done;
}

void hde_sleep(double t) {
    struct timespec ts = {.tv_sec = (time_t)t};
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

