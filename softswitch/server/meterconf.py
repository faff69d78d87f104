"""P4Runtime ``MeterConfig`` <-> ``softswitch.api.MeterConfig``, checked before the switch is
touched (BMv2's PI: cir/pir in units per second, bursts in units; unset = unconfigured)."""

from __future__ import annotations

import grpc
from p4.v1 import p4runtime_pb2

from ..api import MeterConfig
from ..target.meters import check_config
from .errors import P4RuntimeError, invalid


def refuse_counter_data(msg, what: str) -> None:
    """Per-colour meter counters (``MeterCounterData``) do not exist in BMv2; refuse them."""
    if msg.HasField("counter_data"):
        raise P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED,
                             f"{what}: meter counter data is not supported by this target")


def config_from_proto(msg, what: str) -> MeterConfig | None:
    """The ``config`` (or a table entry's ``meter_config``) field of ``msg``: None when unset."""
    name = "meter_config" if isinstance(msg, p4runtime_pb2.TableEntry) else "config"
    if not msg.HasField(name):
        return None
    c = getattr(msg, name)
    if c.eburst:
        raise invalid(f"{what}: eburst is for single-rate meters; v1model meters are two-rate")
    cfg = MeterConfig(c.cir, c.cburst, c.pir, c.pburst)
    try:
        check_config(cfg, what)
    except ValueError as err:
        raise invalid(str(err)) from None
    return cfg


def config_to_proto(cfg: MeterConfig) -> p4runtime_pb2.MeterConfig:
    return p4runtime_pb2.MeterConfig(cir=cfg.cir, cburst=cfg.cburst, pir=cfg.pir, pburst=cfg.pburst)
