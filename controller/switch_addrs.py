"""Where each switch's P4Runtime server is: from the topology, overridden by ``--switch-addr-map``.

Defaults: a switch with ``grpc_port`` in the topology is at ``127.0.0.1:<grpc_port>`` with its
``device_id`` (0 if absent).  The map is either inline, ``s1=127.0.0.1:50051,s2=10.0.0.9:9559@2``
(``@N`` = device id), or a JSON/YAML file mapping a switch name to ``"host:port"``,
``"host:port@N"`` or ``{addr: "host:port", device_id: N}``.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from controller.deploy.errors import PlanError
from controller.p4rt_client import SwitchAddress
from controller.topology import Topology


def _parse_one(name: str, spec: object, where: str) -> SwitchAddress:
    device_id = 0
    if isinstance(spec, dict):
        unknown = set(spec) - {"addr", "device_id"}
        if unknown or "addr" not in spec:
            raise PlanError(f"{where}: {name}: expected {{addr: HOST:PORT, device_id: N}}, got {spec!r}")
        addr, device_id = spec["addr"], spec.get("device_id", 0)
    elif isinstance(spec, str):
        addr, _, dev = spec.partition("@")
        if dev:
            if not dev.isascii() or not dev.isdigit():
                raise PlanError(f"{where}: {name}: device id {dev!r} is not a number")
            device_id = int(dev)
    else:
        raise PlanError(f"{where}: {name}: expected HOST:PORT[@DEVICE], got {spec!r}")
    host, sep, port = str(addr).rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise PlanError(f"{where}: {name}: {addr!r} is not HOST:PORT")
    if isinstance(device_id, bool) or not isinstance(device_id, int) or not 0 <= device_id < 1 << 64:
        raise PlanError(f"{where}: {name}: device id {device_id!r} must be an integer in 0..2^64-1")
    return SwitchAddress(name, str(addr), device_id)


def parse_addr_map(text: str) -> dict[str, SwitchAddress]:
    """Inline ``name=host:port[@dev],...`` or the path of a JSON/YAML file."""
    path = Path(text)
    if "=" not in text and path.suffix.lower() in (".json", ".yaml", ".yml"):
        try:
            raw = path.read_bytes().decode("utf-8")
        except OSError as err:
            raise PlanError(f"switch address map {text}: cannot read: {err.strerror}") from None
        except UnicodeDecodeError as err:
            raise PlanError(f"switch address map {text}: not UTF-8 text (byte {err.start})") from None
        try:
            doc = json.loads(raw) if path.suffix.lower() == ".json" else yaml.safe_load(raw)
        except (json.JSONDecodeError, yaml.YAMLError) as err:
            raise PlanError(
                f"switch address map {text}: not valid {path.suffix[1:].upper()}: {err}"
            ) from None
        except RecursionError:
            raise PlanError(f"switch address map {text}: nested too deeply") from None
        if not isinstance(doc, dict):
            raise PlanError(f"switch address map {text}: expected a mapping of switch name to address")
        return {str(n): _parse_one(str(n), v, text) for n, v in doc.items()}
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, sep, spec = item.partition("=")
        if not sep or not name:
            raise PlanError(f"--switch-addr-map: {item!r} is not NAME=HOST:PORT[@DEVICE]")
        out[name] = _parse_one(name, spec, "--switch-addr-map")
    return out


def switch_addresses(topo: Topology, override: str | None = None) -> dict[str, SwitchAddress]:
    """Addresses of the switches that have one (topology defaults, then the override map)."""
    out = {n: SwitchAddress(n, f"127.0.0.1:{s.grpc_port}", s.device_id or 0)
           for n, s in topo.switches.items() if s.grpc_port is not None}
    if override:
        extra = parse_addr_map(override)
        unknown = sorted(set(extra) - set(topo.switches))
        if unknown:
            raise PlanError(
                f"--switch-addr-map names switches not in topology {topo.name}: {', '.join(unknown)}"
            )
        out.update(extra)
    return out
