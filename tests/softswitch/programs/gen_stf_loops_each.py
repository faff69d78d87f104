"""Writes loops_each.stf: expected packets of loops_each.p4 from a plain-Python model
(run: python tests/softswitch/programs/gen_stf_loops_each.py > tests/softswitch/programs/loops_each.stf)."""


def model(count: int, m: int, elems: list[int]) -> bytes:
    items = [1, m, (3 * m) & 0xFF]  # evaluated once, before the loop
    total, mm = 0, m
    for i in items:
        total = (total + i) & 0xFF
        mm = (mm + 100) & 0xFF
        if i == 0:
            break
    hits = len(elems)
    last = elems[-1] if elems else 0
    return bytes([count, total, mm, hits, last] + elems)


CASES = [(0, 5, []), (2, 7, [0x11, 0x22]), (3, 0, [1, 2, 3]), (1, 90, [0x42])]

if __name__ == "__main__":
    print("# expected values computed in plain Python (gen_stf_loops_each.py, a model of loops_each.p4)")
    for count, m, elems in CASES:
        inp = bytes([count, 0, m, 0, 0] + elems) + b"\x99"
        print(f"# count={count} m={m} elements={elems}")
        print("packet 0 " + inp.hex())
        print("expect 1 " + (model(count, m, elems) + b"\x99").hex() + " $")
