"""Writes loops.stf: expected packets of loops.p4 from a plain-Python model of its loops
(run: python tests/softswitch/programs/gen_stf_loops.py > tests/softswitch/programs/loops.stf)."""


def model(n: int, lo: int, hi: int, x: int, tail: int) -> bytes:
    s1 = sum(i for i in range(min(n, 12)) if i != 7)
    if tail == 0x77:  # the entry runs NoAction: s1 keeps its input (0 here)
        s1 = 0
    cnt = max(0, hi - lo + 1)
    last = hi if lo <= hi else 0
    fb = next((b for b in range(8) if (n >> b) & 1), 8)
    nest = 2 * 3  # (i, j) = (0, 3), (1, 2), three inner iterations each
    calls = 0
    while True:
        x = (x + 1) & 0xFF
        if not x < 5:
            break
        calls += 1
    out_tail = tail if n == 99 else 0xEE
    return (bytes([n, lo, hi]) + s1.to_bytes(2, "big") + cnt.to_bytes(2, "big")
            + bytes([last, fb, nest, calls, x, out_tail]))


CASES = [(5, 1, 3, 0, 0), (20, 0, 255, 0, 0), (0, 9, 2, 7, 0), (99, 250, 255, 3, 1),
         (128, 255, 255, 200, 0), (13, 0, 0, 0x10, 0x77)]

if __name__ == "__main__":
    print("# expected values computed in plain Python (gen_stf_loops.py, a model of loops.p4)")
    print("add MyIngress.t hdr.h.tail:0x77 NoAction()")
    for n, lo, hi, x, tail in CASES:
        inp = bytes([n, lo, hi, 0, 0, 0, 0, 0, 0, 0, 0, x, tail])
        print(f"# n={n} lo={lo} hi={hi} x={x} tail={tail:#x}")
        print("packet 0 " + inp.hex())
        print("expect 1 " + model(n, lo, hi, x, tail).hex() + " $")
