"""``DhcIngress.forwarding`` (DhcForwarding): switch MAC, proxy ARP and /32 routes (base state)."""

from __future__ import annotations

from collections.abc import Iterator

from controller.controls.switch_plan import SwitchPlan
from controller.intent import DefaultAction, TableEntry, entry
from dhcwire.addresses import ip2int, mac2int
from dhcwire.p4names import A_ARP_REPLY, A_SET_NHOP, A_SWITCH_MAC, T_ARP, T_LPM, T_SWITCH


class Forwarding:
    tables = (T_ARP, T_LPM)
    default_tables = (T_SWITCH,)

    def defaults(self, plan: SwitchPlan) -> Iterator[DefaultAction]:
        yield DefaultAction(T_SWITCH, A_SWITCH_MAC, (("mac", mac2int(plan.mac)),))

    def entries(self, plan: SwitchPlan) -> Iterator[TableEntry]:
        for ip, mac in plan.arp:
            yield entry(T_ARP, {"target_addr": ip2int(ip)}, A_ARP_REPLY, {"mac": mac2int(mac)})
        for r in plan.routes:
            yield entry(T_LPM, {"dst_addr": (ip2int(r.ip), 32)}, A_SET_NHOP,
                        {"dmac": mac2int(r.next_mac), "port": r.port})

    def groups(self, plan: SwitchPlan) -> Iterator:
        return iter(())
