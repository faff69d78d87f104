"""What the two code generators over the IR (python in ``softswitch/pygen``, C in
``softswitch/native``) share: identifiers for IR names and an indented statement writer."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod


class Identifiers:
    """IR names (dotted, with punctuation) mapped once each to a unique identifier, so two names
    that differ only in punctuation never collide in the generated source."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def cid(self, name: str) -> str:
        if name not in self.ids:
            c = re.sub(r"[^A-Za-z0-9_]", "_", name)
            while c in self.ids.values():
                c += "_"
            self.ids[name] = c
        return self.ids[name]


class StmtWriter(ABC):
    """Writes the statements of one function body at an indentation level into ``out``; routes
    the four v1model checksum externs to the backend's ``_checksum(s, payload)``."""

    def __init__(self, gen, out: list[str], level: int):
        self.g = gen
        self.x = gen.x
        self.o = out
        self.level = level

    def emit(self, s: str) -> None:
        self.o.append("    " * self.level + s)

    @abstractmethod
    def _checksum(self, s, payload: bool) -> None:
        """A checksum extern call ``s`` (verify or update), over the packet's payload too if asked."""

    def _x_verify_checksum(self, s) -> None:
        self._checksum(s, False)

    def _x_update_checksum(self, s) -> None:
        self._checksum(s, False)

    def _x_verify_checksum_with_payload(self, s) -> None:
        self._checksum(s, True)

    def _x_update_checksum_with_payload(self, s) -> None:
        self._checksum(s, True)
