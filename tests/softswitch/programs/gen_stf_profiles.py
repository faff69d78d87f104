"""Write action_selector.stf: expected packets from BMv2's rules, computed independently of the
softswitch (its own CRC-16/ARC, handle allocation and member order).  Run after editing."""

from __future__ import annotations

from pathlib import Path

from gen_stf import crc16_arc as crc16  # BMv2's HashAlgorithm.crc16

HERE = Path(__file__).parent
HEADER = """\
# Action profiles and selectors (action_selector.p4).  p4c's runner has no commands for
# them: these are the softswitch's extension (see softswitch/stf_syntax.py).  Expected
# members follow BMv2: crc16 over the selector fields of valid headers, h % n over the
# group's members in ascending BMv2 handle order (the smallest free handle at creation)."""


class Model:
    """The selector `sel` as BMv2 keeps it, and the STF lines written so far."""

    def __init__(self) -> None:
        self.lines = HEADER.splitlines()
        self.members: dict[int, list[int]] = {}   # id -> [handle, port, v]
        self.group10: list[int] = []

    def cmd(self, text: str) -> None:
        self.lines.append("#!softswitch " + text)

    def create(self, mid: int, port: int, v: int) -> None:
        used = {m[0] for m in self.members.values()}
        handle = min(set(range(len(used) + 1)) - used)
        self.members[mid] = [handle, port, v]
        self.cmd(f"act_prof_create_member sel {mid} set(port:{port}, v:0x{v:02x})")

    def delete(self, mid: int) -> None:
        del self.members[mid]
        self.cmd(f"act_prof_delete_member sel {mid}")

    def expect(self, kind: int, flags: int, f1: int, f2: int, o: int) -> tuple[int, bytes]:
        port, res, mark = 0, 0, 0
        if kind == 3:  # idsel: identity over f2 (its 4 bytes), 3 members
            port, res = [(6, 0x66), (7, 0x77), (8, 0x88)][f2 % 3]
            mark = 1
        else:
            opt = o.to_bytes(2, "big") if flags & 1 else b""   # hdr.opt hashed only when valid
            sel = f1.to_bytes(2, "big") + f2.to_bytes(4, "big") + opt + bytes([flags])
            if kind == 1:
                order = sorted(self.group10, key=lambda m: self.members[m][0])
                _h, port, res = self.members[order[crc16(sel) % len(order)]]
                mark = 0x81   # lb hit, then ap1's member 1 adds 1
            elif kind == 2:
                mark = 0x80   # an empty group: a hit that runs nothing
            elif kind == 4:
                port, res, mark = 5, 0x55, 0x80
            if flags & 0x0F == 2:
                mark = (mark + 0x10) & 0xFF
        return port, bytes([kind, flags]) + f1.to_bytes(2, "big") + f2.to_bytes(4, "big") + bytes(
            [res, mark]) + (o.to_bytes(2, "big") if flags & 1 else b"")

    def send(self, kind: int, flags: int, f1: int, f2: int, o: int = 0) -> None:
        sent = bytes([kind, flags]) + f1.to_bytes(2, "big") + f2.to_bytes(4, "big") + b"\x00\x00"
        sent += o.to_bytes(2, "big") if flags & 1 else b""
        port, out = self.expect(kind, flags, f1, f2, o)
        self.lines += [f"packet 0 {sent.hex()}", f"expect {port} {out.hex()} $"]


def main() -> None:
    m = Model()
    for mid, port in ((1, 1), (2, 2), (3, 3)):
        m.create(mid, port, 0x11 * port)
    m.delete(2)
    m.create(4, 4, 0x44)              # takes the handle member 2 freed
    m.group10 = [3, 1, 4]
    for line in ("act_prof_create_group sel 10 3 1 4", "add lb kind:0x01 group(10)",
                 "act_prof_create_group sel 11", "add lb kind:0x02 group(11)"):
        m.cmd(line)
    m.create(5, 5, 0x55)
    for line in ("add lb kind:0x04 member(5)",
                 "act_prof_create_member shared 1 mark(v:1)", "act_prof_create_member shared 2 mark(v:0x10)",
                 "add ap1 kind:0x01 member(1)", "add ap2 10 flags:0x*2 member(2)",
                 "act_prof_create_member id_sel 1 set(port:6, v:0x66)",
                 "act_prof_create_member id_sel 2 set(port:7, v:0x77)",
                 "act_prof_create_member id_sel 3 set(port:8, v:0x88)",
                 "act_prof_create_group id_sel 1 1 2 3", "add idsel kind:0x03 group(1)"):
        m.cmd(line)
    for i in range(8):
        m.send(1, 0, 0x1000 + 37 * i, 0xA0000000 + 977 * i)
    m.send(1, 1, 0x1234, 0x55667788, 0x0000)
    m.send(1, 1, 0x1234, 0x55667788, 0xFFFF)
    for kind in (1, 2, 4, 9):
        m.send(kind, 2 if kind != 2 else 0, 0x0001, 0x00000002)
    for i in range(4):
        m.send(3, 0, 0, 0x01000000 * i + i)
    m.cmd("act_prof_remove_member_from_group sel 4 10")
    m.group10.remove(4)
    m.members[1][1:] = [8, 0x88]
    m.cmd("act_prof_modify_member sel 1 set(port:8, v:0x88)")
    for i in range(6):
        m.send(1, 0, 0x2000 + 91 * i, 0x0B000000 + 31 * i)
    m.cmd("act_prof_add_member_to_group sel 4 10")
    m.group10.append(4)
    for i in range(4):
        m.send(1, 0, 0x3000 + 11 * i, 0x0C000000 + 7 * i)
    (HERE / "action_selector.stf").write_text("\n".join(m.lines) + "\n")


if __name__ == "__main__":
    main()
