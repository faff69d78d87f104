"""How the P4Runtime server refuses a request: one exception, turned into a gRPC status or a
``p4.v1.Error`` by the service."""

from __future__ import annotations

import grpc


class P4RuntimeError(Exception):
    """A request refused with a gRPC canonical code and a reason (becomes a p4.v1.Error)."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> P4RuntimeError:
    """INVALID_ARGUMENT with ``message``."""
    return P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT, message)
