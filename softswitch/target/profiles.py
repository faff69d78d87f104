"""Action profiles and action selectors (v1model ``action_profile``/``action_selector``) at run time.

A table whose ``implementation`` is a profile holds no action data: each entry points at a
*member* (an action and its data) or, with a selector, at a *group* of members.  The model is
BMv2's ``ActionProfile`` (``src/bm_sim/action_profile.cpp``):

- every member and group gets a BMv2 handle when it is created, the smallest free one (BMv2's
  ``HandleMgr``); a group's members are kept in ascending handle order (``RandAccessUIntSet``);
- a packet hitting a group entry runs member ``get_nth(h % n)``, ``h`` being the selector's
  hash over the ``selector`` key fields cast to ``unsigned int`` (32 bits); fields of invalid
  headers are left out of the hashed bytes, as BMv2's ``BufBuilder`` skips them;
- an entry pointing at an empty group runs no action (``empty_action``; the entry still hits);
- a miss runs no action either: p4c's BMv2 back end emits no default entry for such tables
  ("Target does not support default_action ... (due to action profiles)");
- a member used by a group or an entry, or a group used by an entry, cannot be deleted.

Ids are the control plane's (P4Runtime ``member_id``/``group_id``); handles are internal and
decide only the order of a group's members.  A BMv2 group is a set, so a member weight ``w``
is what PI's P4Runtime server makes of it (``action_prof_mgr.cpp``): the member gets ``w - 1``
copies (same action data, each a BMv2 member with the smallest free handle, created when a
group first needs them, deleted newest first when no group does) and the group holds the first
``w`` of them.  A watched port (``watch``/``watch_port``) that is down deactivates the member's
copies in that group (PI's ``WatchPortEnforcer``); BMv2 then picks among the active ones, and a
group with none is empty.  A one-shot entry (P4Runtime ``action_profile_action_set``) gets hidden
members and a group, ids below 0, released with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..api import RuntimeAPIError
from ..check.implementation import ProfileInfo
from .externs import ALGORITHMS


class ProfileError(RuntimeAPIError):
    """A refused profile request; ``code`` is the P4Runtime status name it maps to."""

    def __init__(self, msg: str, code: str = "INVALID_ARGUMENT"):
        super().__init__(msg)
        self.code = code


@dataclass
class Member:
    action: str                 # P4Info name of the action
    params: dict[str, int]      # control-plane action data
    args: tuple                 # the data as the pipeline gets it
    handles: list[int]          # BMv2 member handles: its own, then the copies weights need (PI)

    @property
    def handle(self) -> int:
        return self.handles[0]


@dataclass(frozen=True)
class Watch:
    """A group member's watched port and the P4Runtime field it came in (read back the same)."""

    port: int
    kind: str = "watch_port"    # or "watch" (the deprecated int32 field)


@dataclass
class Group:
    members: list[int]          # member ids, as the control plane gave them
    handle: int
    max_size: int = 0
    weights: dict[int, int] = field(default_factory=dict)    # member id -> weight (absent: 1)
    watch: dict[int, Watch] = field(default_factory=dict)    # member id -> watched port


def selector_hash(algo: str, data: bytes) -> int:
    """BMv2's ``ActionProfile::choose_from_group`` hash: the algorithm's value as ``unsigned int``.
    A selector's ``crc16_custom``/``crc32_custom`` is a calculation of its own that no
    ``set_crc*_parameters`` names, so it keeps the defaults: ``crc16``/``crc32``."""
    if algo == "identity":  # BMv2's identity: the first (at most) 8 bytes, big-endian
        h = int.from_bytes(data[:8], "big")
    else:
        h = ALGORITHMS[algo.removesuffix("_custom")](data)
    return h & 0xFFFFFFFF


def _smallest_free(used: set[int]) -> int:
    h = 0
    while h in used:
        h += 1
    return h


class ActionProfile:
    """Members and groups of one profile, shared by every table whose implementation it is."""

    def __init__(self, info: ProfileInfo):
        self.info = info
        self.tables: list[Any] = []          # tables.Table runtimes using it
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self.refs: dict[tuple[str, int], int] = {}
        self.port_up: Callable[[int], bool] = lambda port: True  # the switch binds its port status

    def _free_handle(self) -> int:
        return _smallest_free({h for m in self.members.values() for h in m.handles})

    # ------------------------------------------------------------ members
    def _action(self, action: str, params: dict[str, int] | None) -> tuple[str, tuple]:
        """Check the action against every table of the profile; its full name and data."""
        if not self.tables:
            raise ProfileError(f"action profile {self.info.name} is used by no table")
        name, args = None, ()
        for t in self.tables:
            ai = t.action_index(action, False)
            name, args = t.info.actions[ai].name, t.action_args(ai, params)
        return name, args

    def add_member(self, mid: int, action: str, params: dict[str, int] | None) -> None:
        if mid in self.members:
            raise ProfileError(f"{self.info.name}: member {mid} already exists", "ALREADY_EXISTS")
        if len(self.members) >= self.info.size:
            raise ProfileError(f"{self.info.name} is full ({self.info.size} members)", "RESOURCE_EXHAUSTED")
        name, args = self._action(action, params)
        self.members[mid] = Member(name, dict(params or {}), args, [self._free_handle()])

    def modify_member(self, mid: int, action: str, params: dict[str, int] | None) -> None:
        m = self.member(mid)
        m.action, m.args = self._action(action, params)
        m.params = dict(params or {})

    def delete_member(self, mid: int) -> None:
        self.member(mid)
        if self.refs.get(("m", mid)) or any(mid in g.members for g in self.groups.values()):
            raise ProfileError(f"{self.info.name}: member {mid} is still used", "FAILED_PRECONDITION")
        del self.members[mid]

    def member(self, mid: int) -> Member:
        m = self.members.get(mid)
        if m is None:
            raise ProfileError(f"{self.info.name}: no member {mid}", "NOT_FOUND")
        return m

    # ------------------------------------------------------------ groups
    def _check_group(self, members: list[int], weights: list[int] | None, max_size: int) -> list[int]:
        if not self.info.with_selector:
            raise ProfileError(f"{self.info.name} is an action profile without selector: no groups")
        if weights is not None and len(weights) != len(members):
            raise ProfileError(f"{self.info.name}: {len(weights)} weights for {len(members)} members")
        for w in weights or []:
            if not isinstance(w, int) or w <= 0:
                raise ProfileError(f"{self.info.name}: member weight {w}: must be a positive integer")
        if len(set(members)) != len(members):
            raise ProfileError(f"{self.info.name}: a member is listed twice in a group (use weights)")
        for mid in members:
            self.member(mid)
        total = sum(weights) if weights else len(members)
        if max_size and total > max_size:
            raise ProfileError(f"{self.info.name}: group of {total} members (weights summed) exceeds "
                               f"its max_size {max_size}", "RESOURCE_EXHAUSTED")
        limit = self.info.max_group_size
        if limit and (max_size > limit or total > limit):
            raise ProfileError(f"{self.info.name}: a group holds at most {limit} members, weights "
                               "summed (@max_group_size)", "RESOURCE_EXHAUSTED")
        return list(members)

    def _set_members(self, g: Group, mids: list[int], weights: list[int] | None,
                     watch: list[Watch | None] | None) -> None:
        touched = set(g.members) | set(mids)
        g.members = mids
        g.weights = {m: w for m, w in zip(mids, weights or [], strict=False) if w != 1}
        g.watch = {m: w for m, w in zip(mids, watch or [], strict=False) if w is not None}
        self._sync_copies(touched)

    def _sync_copies(self, mids: set[int]) -> None:
        """PI's weighted members: copies a group needs are created (member-id order, smallest free
        handle), then the copies no group needs any more are deleted, newest first."""
        need = {m: max([1] + [g.weights.get(m, 1) for g in self.groups.values() if m in g.members])
                for m in sorted(mids) if m in self.members}
        for mid, n in need.items():
            while len(self.members[mid].handles) < n:
                self.members[mid].handles.append(self._free_handle())
        for mid, n in need.items():
            del self.members[mid].handles[n:]

    def create_group(self, gid: int, members: list[int], weights: list[int] | None = None,
                     max_size: int = 0, watch: list[Watch | None] | None = None) -> None:
        if gid in self.groups:
            raise ProfileError(f"{self.info.name}: group {gid} already exists", "ALREADY_EXISTS")
        mids = self._check_group(members, weights, max_size)
        handle = _smallest_free({g.handle for g in self.groups.values()})
        self.groups[gid] = g = Group([], handle, max_size)
        self._set_members(g, mids, weights, watch)

    def modify_group(self, gid: int, members: list[int], weights: list[int] | None = None,
                     max_size: int | None = None, watch: list[Watch | None] | None = None) -> None:
        g = self.group(gid)
        size = g.max_size if max_size is None else max_size
        mids = self._check_group(members, weights, size)
        g.max_size = size
        self._set_members(g, mids, weights, watch)

    def delete_group(self, gid: int) -> None:
        self.group(gid)
        if self.refs.get(("g", gid)):
            raise ProfileError(f"{self.info.name}: group {gid} is still used", "FAILED_PRECONDITION")
        self._sync_copies(set(self.groups.pop(gid).members))

    def group(self, gid: int) -> Group:
        g = self.groups.get(gid)
        if g is None:
            raise ProfileError(f"{self.info.name}: no group {gid}", "NOT_FOUND")
        return g

    def ordered(self, gid: int) -> list[Member]:
        """A group's active BMv2 members in BMv2's order (ascending handle): what ``h % n``
        indexes.  A member of weight ``w`` is there ``w`` times (its first ``w`` handles); one
        whose watched port is down is not there at all."""
        g = self.groups[gid]
        slots = []
        for mid in g.members:
            watch = g.watch.get(mid)
            if watch is not None and not self.port_up(watch.port):
                continue
            m = self.members[mid]
            slots += [(h, m) for h in m.handles[:g.weights.get(mid, 1)]]
        return [m for _h, m in sorted(slots, key=lambda s: s[0])]

    def watches(self, port: int) -> bool:
        """Does a group member watch ``port``?"""
        return any(w.port == port for g in self.groups.values() for w in g.watch.values())

    # ------------------------------------------------------------ one-shot action sets
    def one_shot(self, actions: list[tuple]) -> tuple[str, int]:
        """Hidden members and a group for a one-shot entry (P4Runtime ``action_profile_action_set``):
        ids below 0, left out of reads, released with the entry.  Each item is ``(action, params)``
        or ``(action, params, weight, watch)``; as PI, an action of weight ``w`` becomes ``w`` BMv2
        members made one after the other (the smallest free handles), in the set's order."""
        if not self.info.with_selector:
            raise ProfileError(f"{self.info.name} has no selector: one-shot action sets need one")
        if not actions:
            raise ProfileError(f"{self.info.name}: an empty one-shot action set")
        items = [tuple(a) + (1, None)[len(a) - 2:] for a in actions]
        for _a, _p, w, _watch in items:
            if not isinstance(w, int) or w <= 0:
                raise ProfileError(f"{self.info.name}: one-shot action weight {w}: must be positive")
        mids: list[int] = []
        try:
            for action, params, w, _watch in items:
                mids.append(min(list(self.members) + [0]) - 1)
                self.add_member(mids[-1], action, params)
                m = self.members[mids[-1]]
                while len(m.handles) < w:
                    m.handles.append(self._free_handle())
            gid = min(list(self.groups) + [0]) - 1
            self.create_group(gid, mids, [it[2] for it in items], 0, [it[3] for it in items])
        except (RuntimeAPIError, ValueError):
            for mid in mids:
                self.members.pop(mid, None)
            raise
        return ("g", gid)

    def release_one_shot(self, ref: tuple[str, int]) -> None:
        if ref[1] >= 0 or self.refs.get(ref):
            return
        for mid in self.groups.pop(ref[1]).members:
            del self.members[mid]

    def action_set(self, ref: tuple[str, int]) -> list[tuple[str, dict[str, int], int, Watch | None]]:
        """A one-shot entry's set back: (action, params, weight, watch) per action."""
        g = self.groups[ref[1]]
        return [(self.members[m].action, dict(self.members[m].params), g.weights.get(m, 1), g.watch.get(m))
                for m in g.members]

    # ------------------------------------------------------------ table entries
    def check_ref(self, ref: tuple[str, int]) -> None:
        kind, i = ref
        if kind == "m":
            self.member(i)
        else:
            if not self.info.with_selector:
                raise ProfileError(f"{self.info.name} has no selector: entries point at members only")
            self.group(i)

    def ref(self, ref: tuple[str, int], delta: int) -> None:
        self.refs[ref] = self.refs.get(ref, 0) + delta

    def resolve(self, ref: tuple[str, int], h: int) -> Member | None:
        """The member an entry runs (``None``: an empty group)."""
        kind, i = ref
        if kind == "m":
            return self.members[i]
        mbrs = self.ordered(i)
        return mbrs[h % len(mbrs)] if mbrs else None


__all__ = ["ActionProfile", "Group", "Member", "ProfileError", "Watch", "selector_hash"]
