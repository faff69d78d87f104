"""Whether the native delivery engine builds here: the native-engine test modules skip when not."""

from __future__ import annotations

import pytest

from hostagent import native_delivery as nd

try:
    nd.lib()
    HAVE_NATIVE = True
except (OSError, nd.fastio.HostIOError):
    HAVE_NATIVE = False

#: ``pytestmark`` of a module that needs the C engine
requires_native = pytest.mark.skipif(not HAVE_NATIVE, reason="the native engine does not build here")
