"""P4Runtime ``ActionProfileMember`` / ``ActionProfileGroup`` entities <-> the Switch's profile API.

Codes as the P4Runtime specification gives them: an existing id on INSERT is ALREADY_EXISTS, a
missing one on MODIFY/DELETE (or named by a group or a table entry) NOT_FOUND, deleting a member
a group or entry still uses (or a group an entry uses) FAILED_PRECONDITION, a member action that
is not an action of the profile's tables INVALID_ARGUMENT, a weight below 1 INVALID_ARGUMENT
(as PI).  Weights and watched ports are what PI's server makes of them on BMv2: a member of
weight ``w`` is in the group ``w`` times (copies, ``profiles.py``), and one whose watched port is
down is inactive; ``watch`` (int32) and ``watch_port`` (bytes, at most 4) name the port, 0 or an
empty/longer value none, as PI reads them; reads give them back in the field they came in.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4.v1 import p4runtime_pb2

from p4rt import P4InfoIndex
from p4rt.context import P4InfoProfile

from .errors import invalid
from .translate import call_switch, decode_action, encode_action, put_watch, watch_of

Update = p4runtime_pb2.Update


def _profile(idx: P4InfoIndex, profile_id: int, what: str) -> P4InfoProfile:
    prof = idx.profile(profile_id)
    if not prof.table_ids:
        raise invalid(f"{what}: action profile {prof.name} belongs to no table")
    return prof


def write_member(switch, idx: P4InfoIndex, utype: int, m: p4runtime_pb2.ActionProfileMember) -> None:
    prof = _profile(idx, m.action_profile_id, "action profile member")
    what = f"action profile {prof.name} member {m.member_id}"
    if utype == Update.DELETE:
        call_switch(switch.act_prof_delete_member, prof.name, m.member_id)
        return
    if utype not in (Update.INSERT, Update.MODIFY):
        raise invalid(f"{what}: update type {utype} is not INSERT, MODIFY or DELETE")
    if not m.HasField("action"):
        raise invalid(f"{what}: no action given")
    as_entry = p4runtime_pb2.TableEntry(table_id=prof.table_ids[0])
    as_entry.action.action.CopyFrom(m.action)
    action, params = decode_action(idx, idx.table(prof.table_ids[0]), as_entry, what)
    fn = switch.act_prof_add_member if utype == Update.INSERT else switch.act_prof_modify_member
    call_switch(fn, prof.name, m.member_id, action, params)


def write_group(switch, idx: P4InfoIndex, utype: int, g: p4runtime_pb2.ActionProfileGroup) -> None:
    prof = _profile(idx, g.action_profile_id, "action profile group")
    what = f"action profile {prof.name} group {g.group_id}"
    if utype == Update.DELETE:
        call_switch(switch.act_prof_delete_group, prof.name, g.group_id)
        return
    if utype not in (Update.INSERT, Update.MODIFY):
        raise invalid(f"{what}: update type {utype} is not INSERT, MODIFY or DELETE")
    if not prof.with_selector:
        raise invalid(f"{what}: {prof.name} is an action profile without selector (no groups)")
    members = [mm.member_id for mm in g.members]
    weights = [mm.weight for mm in g.members]
    watch = [watch_of(mm) for mm in g.members]
    fn = switch.act_prof_create_group if utype == Update.INSERT else switch.act_prof_modify_group
    call_switch(fn, prof.name, g.group_id, members, weights, g.max_size, watch)


def _profiles(idx: P4InfoIndex, profile_id: int) -> list[P4InfoProfile]:
    if profile_id:
        return [idx.profile(profile_id)]
    return [idx.profiles[i] for i in sorted(idx.profiles)]


def read_members(switch, idx: P4InfoIndex, q: p4runtime_pb2.ActionProfileMember
                 ) -> Iterator[p4runtime_pb2.ActionProfileMember]:
    for prof in _profiles(idx, q.action_profile_id):
        for mid, (action, params) in call_switch(switch.act_prof_members, prof.name).items():
            if q.member_id and mid != q.member_id:
                continue
            m = p4runtime_pb2.ActionProfileMember(action_profile_id=prof.id, member_id=mid)
            m.action.CopyFrom(encode_action(idx, action, params).action)
            yield m


def read_groups(switch, idx: P4InfoIndex, q: p4runtime_pb2.ActionProfileGroup
                ) -> Iterator[p4runtime_pb2.ActionProfileGroup]:
    for prof in _profiles(idx, q.action_profile_id):
        if not prof.with_selector:
            continue
        for gid, members in call_switch(switch.act_prof_group_members, prof.name).items():
            if q.group_id and gid != q.group_id:
                continue
            g = p4runtime_pb2.ActionProfileGroup(action_profile_id=prof.id, group_id=gid)
            for mid, weight, watch in members:
                put_watch(g.members.add(member_id=mid, weight=weight), watch)
            yield g
