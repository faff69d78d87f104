"""Write action_selector.stf: expected packets from BMv2's rules, computed independently of the
softswitch (its own CRC-16/ARC, handle allocation and member order).  Run after editing."""

from pathlib import Path

HERE = Path(__file__).parent


def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc

lines = []
def cmd(s): lines.append("#!softswitch " + s)
members = {}  # id -> (handle, port, v)
handles = set()
def mk(mid, port, v):
    h = 0
    while h in handles: h += 1
    handles.add(h); members[mid] = [h, port, v]
    cmd(f"act_prof_create_member sel {mid} set(port:{port}, v:0x{v:02x})")
def rm(mid):
    handles.discard(members.pop(mid)[0]); cmd(f"act_prof_delete_member sel {mid}")
lines.append("# Action profiles and selectors (action_selector.p4).  p4c's runner has no commands for")
lines.append("# them: these are the softswitch's extension (see softswitch/stf_syntax.py).  Expected")
lines.append("# members follow BMv2: crc16 over the selector fields of valid headers, h % n over the")
lines.append("# group's members in ascending BMv2 handle order (the smallest free handle at creation).")
mk(1, 1, 0x11); mk(2, 2, 0x22); mk(3, 3, 0x33); rm(2); mk(4, 4, 0x44)
groups = {10: [3, 1, 4]}
cmd("act_prof_create_group sel 10 3 1 4")
cmd("add lb kind:0x01 group(10)")
cmd("act_prof_create_group sel 11")
cmd("add lb kind:0x02 group(11)")
mk(5, 5, 0x55)
cmd("add lb kind:0x04 member(5)")
cmd("act_prof_create_member shared 1 mark(v:1)")
cmd("act_prof_create_member shared 2 mark(v:0x10)")
cmd("add ap1 kind:0x01 member(1)")
cmd("add ap2 10 flags:0x*2 member(2)")
cmd("act_prof_create_member id_sel 1 set(port:6, v:0x66)")
cmd("act_prof_create_member id_sel 2 set(port:7, v:0x77)")
cmd("act_prof_create_member id_sel 3 set(port:8, v:0x88)")
cmd("act_prof_create_group id_sel 1 1 2 3")
cmd("add idsel kind:0x03 group(1)")

def pkt(kind, flags, f1, f2, o=None):
    b = bytes([kind, flags]) + f1.to_bytes(2, "big") + f2.to_bytes(4, "big") + bytes([0, 0])
    if flags & 1:
        b += o.to_bytes(2, "big")
    return b

def expect(kind, flags, f1, f2, o=None):
    b = bytearray(pkt(kind, flags, f1, f2, o))
    port, res, mark = 0, 0, 0
    if kind == 3:
        idm = [(6, 0x66), (7, 0x77), (8, 0x88)]
        h = f2 & 0xFFFFFFFF   # identity: first 8 bytes of the 4-byte field
        port, res = idm[h % 3]; mark = 1
    else:
        sel = f1.to_bytes(2, "big") + f2.to_bytes(4, "big") + (o.to_bytes(2, "big") if flags & 1 else b"") + bytes([flags])
        if kind == 1:
            mbrs = sorted(groups[10], key=lambda m: members[m][0])
            m = mbrs[crc16(sel) % len(mbrs)]
            port, res = members[m][1], members[m][2]; mark |= 0x80
        elif kind == 2:
            mark |= 0x80
        elif kind == 4:
            port, res = 5, 0x55; mark |= 0x80
        if kind == 1:
            mark = (mark + 1) & 0xFF
        if flags & 0x0F == 2:
            mark = (mark + 0x10) & 0xFF
    b[8], b[9] = res, mark
    return port, bytes(b)

def send(*a):
    p = pkt(*a)
    port, e = expect(*a)
    lines.append(f"packet 0 {p.hex()}")
    lines.append(f"expect {port} {e.hex()} $")

for i in range(8):
    send(1, 0, 0x1000 + 37 * i, 0xA0000000 + 977 * i)
send(1, 1, 0x1234, 0x55667788, 0x0000)
send(1, 1, 0x1234, 0x55667788, 0xFFFF)
send(1, 2, 0x0001, 0x00000002)
send(2, 0, 0x0001, 0x00000002)
send(4, 2, 0x0001, 0x00000002)
send(9, 2, 0x0001, 0x00000002)
for i in range(4):
    send(3, 0, 0, 0x01000000 * i + i)
cmd("act_prof_remove_member_from_group sel 4 10")
groups[10].remove(4)
members[1][1:] = [8, 0x88]
cmd("act_prof_modify_member sel 1 set(port:8, v:0x88)")
for i in range(6):
    send(1, 0, 0x2000 + 91 * i, 0x0B000000 + 31 * i)
cmd("act_prof_add_member_to_group sel 4 10")
groups[10].append(4)
for i in range(4):
    send(1, 0, 0x3000 + 11 * i, 0x0C000000 + 7 * i)
(HERE / "action_selector.stf").write_text("\n".join(lines) + "\n")
