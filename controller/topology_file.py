"""Topology files (YAML or JSON): one schema, validated with errors that name file, path, problem.

Schema (every list element is a mapping; unknown keys are errors)::

    name: leafspine                         # optional, defaults to the file stem
    switches:
      - {name: s1, ip: 10.0.100.1, mac: "02:00:00:00:01:01",
         programmable: true, register_slots: 4096, deploy_cost: 1,   # optional, defaults shown
         grpc_port: 50051, device_id: 1}                              # optional
    hosts:
      - {name: h1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
    links:
      - {a: h1, a_port: 0, b: s1, b_port: 1, bandwidth_gbps: 10}     # bandwidth optional (10)
    jobs:                                                             # optional
      - {id: 1, workers: [h1, h2], bytes_per_iteration: 4000000, window: 64, lanes: 32}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from controller.errors import Problem, TopologyError
from controller.topology import (
    DEFAULT_REGISTER_SLOTS,
    DEFAULT_WINDOW,
    RESERVED_PORTS,
    Host,
    Job,
    Link,
    Switch,
    Topology,
)
from dhcwire import limits
from dhcwire.lanes import DEFAULT_LANES

_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
_TOP_KEYS = {"name", "switches", "hosts", "links", "jobs"}


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _Checker:
    """Collects problems while reading typed fields out of plain dicts."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def mapping(self, value: Any, path: str, required: set[str], optional: set[str]) -> dict | None:
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, got {type(value).__name__}")
            return None
        for key in sorted(required - set(value)):
            self.fail(path, f"missing required key {key!r}")
        for key in sorted(set(value) - required - optional, key=str):
            self.fail(f"{path}.{key}", f"unknown key (allowed: {', '.join(sorted(required | optional))})")
        return value

    def integer(self, m: dict, key: str, path: str, lo: int, hi: int | None, default: Any = None) -> Any:
        if key not in m:
            return default
        v = m[key]
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(f"{path}.{key}", f"expected an integer, got {v!r}")
            return default
        if v < lo or (hi is not None and v > hi):
            self.fail(f"{path}.{key}", f"{v} out of range {lo}..{hi if hi is not None else 'inf'}")
            return default
        return v

    def number(self, m: dict, key: str, path: str, default: float) -> float:
        if key not in m:
            return default
        v = m[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            self.fail(f"{path}.{key}", f"expected a positive number, got {v!r}")
            return default
        return float(v)

    def boolean(self, m: dict, key: str, path: str, default: bool) -> bool:
        if key not in m:
            return default
        if not isinstance(m[key], bool):
            self.fail(f"{path}.{key}", f"expected true or false, got {m[key]!r}")
            return default
        return m[key]

    def name(self, m: dict, key: str, path: str) -> str | None:
        v = m.get(key)
        if v is None:
            return None
        if not isinstance(v, str) or not _NAME.match(v):
            self.fail(f"{path}.{key}", f"bad name {v!r} (letter, then letters/digits/_/-, max 32)")
            return None
        return v

    def checked(self, m: dict, key: str, path: str, check: Callable[[Any], Any], default: Any = None) -> Any:
        """``m[key]`` through one of the shared checks of ``dhcwire.limits`` (default if absent)."""
        if key not in m:
            return default
        try:
            return check(m[key])
        except ValueError as err:
            self.fail(f"{path}.{key}", str(err))
            return None

    def ip(self, m: dict, path: str) -> str | None:
        return self.checked(m, "ip", path, limits.node_ip)

    def mac(self, m: dict, path: str) -> str | None:
        v = m.get("mac")
        if v is None:
            return None
        if not isinstance(v, str) or not _MAC.match(v):
            self.fail(f"{path}.mac", f"not a MAC address (aa:bb:cc:dd:ee:ff): {v!r}")
            return None
        if int(v.split(":")[0], 16) & 1:
            self.fail(f"{path}.mac", f"{v} is a multicast address")
        return v.lower()

    def seq(self, doc: dict, key: str, required: bool) -> list:
        if key not in doc:
            if required:
                self.fail("", f"missing required key {key!r}")
            return []
        v = doc[key]
        if not isinstance(v, list):
            self.fail(key, f"expected a list, got {type(v).__name__}")
            return []
        return v


def _parse_nodes(c: _Checker, doc: dict) -> tuple[dict[str, Switch], dict[str, Host]]:
    switches: dict[str, Switch] = {}
    hosts: dict[str, Host] = {}
    owner_of_ip: dict[str, str] = {}
    owner_of_mac: dict[str, str] = {}

    def claim(path: str, name: str, ip: str | None, mac: str | None) -> bool:
        ok = True
        if name in switches or name in hosts:
            c.fail(f"{path}.name", f"duplicate node name {name!r}")
            ok = False
        for value, owners, what in ((ip, owner_of_ip, "ip"), (mac, owner_of_mac, "mac")):
            if value is not None and value in owners:
                c.fail(f"{path}.{what}", f"{value} already used by {owners[value]}")
                ok = False
            elif value is not None:
                owners[value] = name
        return ok

    sw_opt = {"programmable", "register_slots", "deploy_cost", "grpc_port", "device_id"}
    for i, raw in enumerate(c.seq(doc, "switches", True)):
        path = f"switches[{i}]"
        m = c.mapping(raw, path, {"name", "ip", "mac"}, sw_opt)
        if m is None:
            continue
        name, ip, mac = c.name(m, "name", path), c.ip(m, path), c.mac(m, path)
        sw = Switch(
            name=name or "", ip=ip or "", mac=mac or "",
            programmable=c.boolean(m, "programmable", path, True),
            register_slots=c.integer(m, "register_slots", path, 0, None, DEFAULT_REGISTER_SLOTS),
            deploy_cost=c.integer(m, "deploy_cost", path, 0, None, 1),
            grpc_port=c.integer(m, "grpc_port", path, 1, 65535),
            device_id=c.integer(m, "device_id", path, 0, (1 << 64) - 1),
        )
        if name and claim(path, name, ip, mac):
            switches[name] = sw
    for i, raw in enumerate(c.seq(doc, "hosts", True)):
        path = f"hosts[{i}]"
        m = c.mapping(raw, path, {"name", "ip", "mac"}, set())
        if m is None:
            continue
        name, ip, mac = c.name(m, "name", path), c.ip(m, path), c.mac(m, path)
        if name and claim(path, name, ip, mac):
            hosts[name] = Host(name, ip or "", mac or "")
    for path_key, attr in (("grpc_port", "grpc_port"), ("device_id", "device_id")):
        seen: dict[int, str] = {}
        for sw in switches.values():
            v = getattr(sw, attr)
            if v is not None and v in seen:
                c.fail(f"switches[{list(switches).index(sw.name)}].{path_key}",
                       f"{v} already used by {seen[v]}")
            elif v is not None:
                seen[v] = sw.name
    return switches, hosts


def _parse_links(c: _Checker, doc: dict, switches: dict, hosts: dict) -> list[Link]:
    links: list[Link] = []
    used_ports: dict[tuple[str, int], str] = {}
    for i, raw in enumerate(c.seq(doc, "links", True)):
        path = f"links[{i}]"
        m = c.mapping(raw, path, {"a", "a_port", "b", "b_port"}, {"bandwidth_gbps"})
        if m is None:
            continue
        ends = []
        for end in ("a", "b"):
            node = m.get(end)
            if node is not None and node not in switches and node not in hosts:
                c.fail(f"{path}.{end}", f"unknown node {node!r}")
                node = None
            lo = 1 if node in switches else 0
            port = c.integer(m, f"{end}_port", path, lo, 511)
            if node in switches and port in RESERVED_PORTS:
                c.fail(f"{path}.{end}_port", f"port {port} is reserved ({RESERVED_PORTS[port]})")
                port = None
            if node is not None and port is not None:
                if (node, port) in used_ports:
                    c.fail(
                        f"{path}.{end}_port",
                        f"port {port} of {node} already used by {used_ports[(node, port)]}",
                    )
                used_ports[(node, port)] = path
            ends.append((node, port))
        (a, ap), (b, bp) = ends
        bw = c.number(m, "bandwidth_gbps", path, 10.0)
        if a is not None and a == b:
            c.fail(path, f"link from {a} to itself")
        elif a in hosts and b in hosts:
            c.fail(path, f"hosts {a} and {b} linked directly; hosts attach to switches")
        elif None not in (a, ap, b, bp):
            links.append(Link(a, ap, b, bp, bw))
    degree = {h: 0 for h in hosts}
    for link in links:
        for end in (link.a, link.b):
            if end in degree:
                degree[end] += 1
    for h, d in degree.items():
        if d != 1:
            c.fail(f"hosts[{list(hosts).index(h)}]", f"host {h} has {d} links; a host needs exactly one")
    return links


def _parse_jobs(c: _Checker, doc: dict, hosts: dict, switches: dict) -> list[Job]:
    jobs: list[Job] = []
    ids: set[int] = set()
    for i, raw in enumerate(c.seq(doc, "jobs", False)):
        path = f"jobs[{i}]"
        m = c.mapping(raw, path, {"id", "workers", "bytes_per_iteration"}, {"window", "lanes"})
        if m is None:
            continue
        jid = c.checked(m, "id", path, limits.job_id)
        if jid is not None and jid in ids:
            c.fail(f"{path}.id", f"duplicate job id {jid}")
        ids.add(jid)
        workers = m.get("workers")
        ok = True
        if not isinstance(workers, list) or not workers:
            c.fail(f"{path}.workers", "expected a non-empty list of host names")
            workers, ok = [], False
        for w_i, w in enumerate(workers):
            if not isinstance(w, str):
                c.fail(f"{path}.workers[{w_i}]", f"expected a host name, got {w!r}")
                ok = False
            elif w not in hosts:
                what = (
                    f"{w!r} is a switch, not a host"
                    if isinstance(w, str) and w in switches
                    else f"unknown host {w!r}"
                )
                c.fail(f"{path}.workers[{w_i}]", what)
                ok = False
            elif workers.index(w) != w_i:
                c.fail(f"{path}.workers[{w_i}]", f"host {w} listed twice")
                ok = False
        size = c.integer(m, "bytes_per_iteration", path, 1, None)
        window = c.checked(m, "window", path, limits.window, DEFAULT_WINDOW)
        lanes = c.checked(m, "lanes", path, limits.lanes, DEFAULT_LANES)
        if ok and None not in (jid, size, window, lanes):
            jobs.append(Job(jid, tuple(workers), size, window, lanes))
    return jobs


def _check_connected(c: _Checker, topo: Topology) -> None:
    if not topo.switches:
        return
    start = next(iter(topo.switches))
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node in topo.hosts:
            continue
        for _, nb in topo.adjacency[node]:
            if nb not in seen:
                seen.add(nb)
                todo.append(nb)
    missing = [n for n in (*topo.switches, *topo.hosts) if n not in seen]
    if missing:
        c.fail("links", f"network is not connected: {', '.join(missing[:8])}"
               + (" ..." if len(missing) > 8 else "") + f" unreachable from {start}")


def from_dict(doc: Any, source: str = "<dict>", default_name: str = "topology") -> Topology:
    """Validate a parsed document and build the ``Topology``; raise ``TopologyError`` listing every
    problem found."""
    c = _Checker()
    if not isinstance(doc, dict):
        raise TopologyError(
            source, [Problem("", f"expected a mapping at top level, got {type(doc).__name__}")]
        )
    for key in sorted(set(doc) - _TOP_KEYS, key=str):
        c.fail(str(key), f"unknown top-level key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    name = doc.get("name", default_name)
    if not isinstance(name, str) or not name:
        c.fail("name", f"expected a non-empty string, got {name!r}")
        name = default_name
    switches, hosts = _parse_nodes(c, doc)
    if not switches and "switches" in doc:
        c.fail("switches", "at least one switch is required")
    links = _parse_links(c, doc, switches, hosts)
    jobs = _parse_jobs(c, doc, hosts, switches)
    if c.problems:
        raise TopologyError(source, c.problems)
    topo = Topology(name, hosts, switches, tuple(links), tuple(jobs))
    _check_connected(c, topo)
    if c.problems:
        raise TopologyError(source, c.problems)
    return topo


def load(path: str | Path) -> Topology:
    """Read and validate a topology file (``.json`` is JSON, anything else YAML)."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise TopologyError(source, [Problem("", f"cannot read file: {exc.strerror or exc}")]) from exc
    except UnicodeDecodeError as exc:
        raise TopologyError(source, [Problem("", f"not a topology file: not UTF-8 text (byte "
                                             f"{exc.start} is {exc.object[exc.start]:#04x})")]) from None
    try:
        doc = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_UniqueKeyLoader)
    except json.JSONDecodeError as exc:
        raise TopologyError(
            source, [Problem(f"line {exc.lineno} column {exc.colno}", f"JSON syntax: {exc.msg}")]
        ) from exc
    except RecursionError:
        raise TopologyError(source, [Problem("", "not a topology file: nested too deeply")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        what = getattr(exc, "problem", None) or str(exc)
        raise TopologyError(source, [Problem(where, f"YAML syntax: {what}")]) from exc
    return from_dict(doc, source, default_name=path.stem)


def to_dict(topo: Topology) -> dict:
    """The document ``from_dict`` reads back into an equal topology (defaults written out)."""
    def switch(s: Switch) -> dict:
        d: dict[str, Any] = {"name": s.name, "ip": s.ip, "mac": s.mac, "programmable": s.programmable,
                             "register_slots": s.register_slots, "deploy_cost": s.deploy_cost}
        if s.grpc_port is not None:
            d["grpc_port"] = s.grpc_port
        if s.device_id is not None:
            d["device_id"] = s.device_id
        return d

    def num(x: float) -> float | int:
        return int(x) if float(x).is_integer() else x

    return {
        "name": topo.name,
        "switches": [switch(s) for s in topo.switches.values()],
        "hosts": [{"name": h.name, "ip": h.ip, "mac": h.mac} for h in topo.hosts.values()],
        "links": [{"a": ln.a, "a_port": ln.a_port, "b": ln.b, "b_port": ln.b_port,
                   "bandwidth_gbps": num(ln.bandwidth_gbps)} for ln in topo.links],
        "jobs": [{"id": j.id, "workers": list(j.workers), "bytes_per_iteration": j.bytes_per_iteration,
                  "window": j.window, "lanes": j.lanes} for j in topo.jobs],
    }


class _FlowDumper(yaml.SafeDumper):
    """Block style at the top, one flow-style mapping per element: compact, diff-friendly files."""


def _represent_dict(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    flow = not any(isinstance(v, list) and v and isinstance(v[0], dict) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data,
                                     flow_style=not (data and isinstance(data[0], dict)))


_FlowDumper.add_representer(dict, _represent_dict)
_FlowDumper.add_representer(list, _represent_list)


def dump_yaml(topo: Topology, header: str = "") -> str:
    """YAML text for ``topo`` (``header`` lines become comments at the top)."""
    body = yaml.dump(to_dict(topo), Dumper=_FlowDumper, sort_keys=False, width=120)
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comments + body
