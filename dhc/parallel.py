"""Two-way splitting of the codec's whole-tensor passes over a small shared thread pool.

Only the passes that touch every element of a large tensor are split (the encoder's ``x != 0``
scan, the decoder's zero-fill and scatter of the result), plus the compiled passes over every
element of a large union (hashing, check sums; ``dhc/native.py``): numpy releases the GIL
inside large ufunc, packbits, fill and fancy-index calls, and the kernels are ``nogil``, so two
halves run on two cores.  Everything else (the peeling) stays single-threaded.  Results do
not depend on the split (each half writes disjoint output).

A half the pool thread has not started by the time the caller's half is done is taken back and
run by the caller, so on a loaded machine the split costs no more than one thread.  The pool is
created once, on first use.  ``set_threads(1)`` turns splitting off (benchmarks use
it to report single-threaded figures).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")

#: tensors below this many elements are never split: a hand-off costs tens of microseconds
MIN_SPLIT = 1 << 20
#: compiled per-union-element passes (hashing, check sums) cost a few ns per element: split
#: from this many elements on
MIN_SPLIT_UNION = 1 << 17

_threads = 2 if (os.cpu_count() or 1) >= 2 else 1
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0          # a forked child must not use its parent's (thread-less) pool


def set_threads(n: int) -> None:
    """Use ``n`` (1 or 2) threads for the split passes."""
    global _threads
    if n not in (1, 2):
        raise ValueError(f"threads must be 1 or 2, got {n!r}")
    _threads = n


def threads() -> int:
    """Threads currently used for the split passes."""
    return _threads


def split_point(n: int, align: int, minimum: int = MIN_SPLIT) -> int | None:
    """Where to split ``n`` items in two (a multiple of ``align``), or None to run whole
    (one thread, or fewer than ``minimum`` items)."""
    if _threads < 2 or n < minimum:
        return None
    h = (n // 2) // align * align
    return h if 0 < h < n else None


def both(first: Callable[[], T], second: Callable[[], T]) -> tuple[T, T]:
    """Run ``second`` on the pool thread and ``first`` on the caller's; return both results.

    If the pool thread has not started ``second`` by the time ``first`` is done (the other
    core is busy with another process, and a woken thread can wait a whole scheduler slice),
    the caller takes ``second`` back and runs it itself: on a loaded machine the split then
    costs no more than one thread.  Waits for ``second`` even if ``first`` raises, so no half
    outlives the call."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != os.getpid():
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dhc-split")
        _pool_pid = os.getpid()
    fut = _pool.submit(second)
    try:
        a = first()
    except BaseException:
        if not fut.cancel():
            wait([fut])
        raise
    if fut.cancel():                 # not started: the pool thread never got a core
        return a, second()
    return a, fut.result()
