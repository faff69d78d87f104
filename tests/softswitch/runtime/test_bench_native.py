"""``bench.softswitch.softswitch_native``: every row measured on real veths with the C load generator, every
forwarded frame and every RESULT checked, native and python backends side by side."""

from __future__ import annotations

import argparse
import os

import pytest

from bench.softswitch import softswitch_native
from softswitch.native.build import compiler

pytestmark = [pytest.mark.root, pytest.mark.slow]

if os.geteuid() != 0 or compiler() is None:
    pytest.skip("needs root for network namespaces and a C compiler", allow_module_level=True)


def test_native_and_python_rows_all_checked() -> None:
    p = argparse.ArgumentParser()
    softswitch_native.add_arguments(p)
    r = softswitch_native.run(
        p.parse_args(
            [
                "--frames",
                "3000",
                "--chunks",
                "400",
                "--runs",
                "1",
                "--lanes",
                "8",
                "--dhc-window",
                "16",
                "--python-share",
                "0.5",
            ]
        )
    )
    b, d = r["basic_ipv4"], r["dhc"]
    for row in (b["c_forwarder"], b["native"], b["python"]):
        assert row["bad"] == 0 and row["frames_out_per_s"] > 0
    for name in ("native", "python"):
        row = d[name]
        assert row["stalled"] == 0 and row["wrong"] == 0
        assert row["correct"] == row["results_expected"] > 0
    assert b["native"]["fraction_of_limit"] > 0 and d["native"]["fraction_of_limit"] > 0
