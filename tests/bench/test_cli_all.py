"""``dhc-bench all`` (``make bench``): the shorter arguments it gives the long benchmarks parse,
and ``--long`` gives a benchmark its own defaults and its long arms.  Only benchmarks that import
without torch are loaded here (a few seconds); ``make bench`` itself parses every entry."""

from __future__ import annotations

import importlib

from bench import cli


def test_short_arguments_parse_and_long_restores_the_defaults() -> None:
    available = cli._available()
    assert set(cli.ALL_SHORT) <= set(available)
    for name in ("codec", "models"):
        argv = cli.ALL_SHORT[name]
        mod = importlib.import_module(available[name])
        short = vars(cli._all_args(name, mod, False, None))
        full = vars(cli._all_args(name, mod, True, None))
        changed = {k for k in short if short[k] != full[k] and k != "long"}
        assert changed, f"{name}: {argv} changes nothing"
    scale = importlib.import_module(available["scale"])
    assert cli._all_args("scale", scale, True, None).long is True
    assert cli._all_args("scale", scale, False, None).long is False
