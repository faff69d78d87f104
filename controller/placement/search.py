"""Tabu local search for the relaxed class assignment (an upper bound to start CP-SAT from).

One class per job, loads on kept links; the target T starts one below the current peak.  Each
step takes a random link above T and moves one of the jobs on it to the class that lowers the
total excess Σ max(0, load - T) the most (classes just left are tabu for a few steps); when no
link is above T the answer is kept and T drops by one.  Stops at ``floor`` (a proven lower bound:
nothing below it exists), at the deadline, or after ``patience`` fruitless steps.  Pure numpy
over the same rows CP-SAT gets.
"""

from __future__ import annotations

import time

import numpy as np


def descend(job_of_class: np.ndarray, starts: np.ndarray, var: np.ndarray, link: np.ndarray,
            coeff: np.ndarray, n_links: int, pick: np.ndarray, floor: int, deadline: float,
            frozen: np.ndarray, seed: int = 0, patience: int = 3000) -> tuple[np.ndarray, int]:
    """Best assignment found and its peak.  ``starts[j]:starts[j+1]`` are job j's classes; the
    rows (var = class, link, coeff) give each class's loads; ``frozen`` jobs never move.  Gives up
    after ``patience`` steps without reaching the next target."""
    n_cls = len(job_of_class)
    order = np.argsort(var, kind="stable")
    var, link, coeff = var[order], link[order], coeff[order]
    cptr = np.searchsorted(var, np.arange(n_cls + 1))
    lorder = np.argsort(link, kind="stable")
    inv_ptr = np.searchsorted(link[lorder], np.arange(n_links + 1))
    inv_cls = var[lorder]
    pick = pick.copy()
    load = np.zeros(n_links, np.int64)
    for c in pick:
        np.add.at(load, link[cptr[c]:cptr[c + 1]], coeff[cptr[c]:cptr[c + 1]])
    picked = np.zeros(n_cls, np.bool_)
    picked[pick] = True
    best, peak = pick.copy(), int(load.max(initial=0))
    target = peak - 1
    tabu = np.zeros(n_cls, np.int64)
    rng = np.random.default_rng(seed)
    step = last = 0
    while target >= floor and time.perf_counter() < deadline and step - last < patience:
        over = np.flatnonzero(load > target)
        if not len(over):
            best, peak = pick.copy(), int(load.max(initial=0))
            target, last = peak - 1, step
            continue
        step += 1
        hot = over[rng.integers(len(over))]
        users = inv_cls[inv_ptr[hot]:inv_ptr[hot + 1]]
        move = None
        for old in users[picked[users]]:
            j = job_of_class[old]
            if frozen[j] or starts[j + 1] - starts[j] < 2:
                continue
            seg = slice(cptr[old], cptr[old + 1])
            before = load[link[seg]]
            gain = (np.maximum(before - target, 0) - np.maximum(before - coeff[seg] - target, 0)).sum()
            load[link[seg]] -= coeff[seg]
            span = slice(cptr[starts[j]], cptr[starts[j + 1]])
            cur = load[link[span]]
            inc = np.maximum(cur + coeff[span] - target, 0) - np.maximum(cur - target, 0)
            sums = np.bincount(var[span] - starts[j], weights=inc, minlength=starts[j + 1] - starts[j])
            load[link[seg]] += coeff[seg]
            cand = np.arange(starts[j], starts[j + 1])
            delta = sums - gain + rng.random(len(cand)) * 0.5
            delta[(cand == old) | (tabu[cand] > step)] = np.inf
            k = int(np.argmin(delta))
            if np.isfinite(delta[k]) and (move is None or delta[k] < move[0]):
                move = (delta[k], j, old, int(cand[k]))
        if move is None:
            continue
        _, j, old, new = move
        load[link[cptr[old]:cptr[old + 1]]] -= coeff[cptr[old]:cptr[old + 1]]
        load[link[cptr[new]:cptr[new + 1]]] += coeff[cptr[new]:cptr[new + 1]]
        picked[old], picked[new] = False, True
        pick[j] = new
        tabu[old] = step + 5 + int(rng.integers(10))
    return best, peak
