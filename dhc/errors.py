"""Codec exceptions.  Every failure of the codec is one of these, never a silent estimate."""

from __future__ import annotations


class CodecError(Exception):
    """Base class of every error the codec raises."""


class InputError(CodecError, ValueError):
    """The caller's input is unusable: NaN/Inf, wrong dtype, shapes or parameters that differ
    across workers, a bad parameter value."""


class OverflowRisk(InputError):
    """The configuration could let a 32-bit lane sum overflow (e.g. too many workers, or a value
    too large for the float32 result)."""


class DecodeError(CodecError):
    """An aggregate is inconsistent with what the workers sent (a lane changed in flight, a
    worker that did not follow the protocol): decoding refuses to return a result."""


class MismatchError(InputError, DecodeError):
    """The SCALE fingerprint lanes show that workers disagree on shape, dtype, worker count or
    codec parameters (or that a fingerprint lane was changed in flight)."""


class ProtocolError(CodecError):
    """The round protocol was driven wrongly (feed after done, wrong number or length of
    aggregated segments, mismatched rounds across workers)."""
