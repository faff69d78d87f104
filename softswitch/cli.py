"""``softswitch`` command line, mirroring ``simple_switch_grpc`` so launchers can swap targets.

    softswitch [--device-id N] -i 1@veth1 -i 2@veth2 ... [--no-p4 | PROGRAM.p4]
               [--log-level L] [--pcap [DIR]] -- --grpc-server-addr HOST:PORT --cpu-port C
    softswitch stf PROGRAM.p4 TEST.stf ...      (the STF test runner)

Options after ``--`` are the target-specific ones, as with simple_switch_grpc.
The program is P4_16 source (BMv2 takes p4c's JSON there); with ``--no-p4`` the
controller pushes it with SetForwardingPipelineConfig, the device config being
the preprocessed P4 source text (see ``softswitch.server.device``).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from .api import P4CompileError
from .target.crc import parse_params

_LOG_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
               "warn": logging.WARNING, "warning": logging.WARNING, "error": logging.ERROR,
               "off": logging.CRITICAL + 10}


def _main_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="softswitch",
        description="P4_16 v1model software switch with P4Runtime",
        epilog="Target options follow '--': --grpc-server-addr HOST:PORT --cpu-port C",
    )
    p.add_argument("program", nargs="?", help="P4_16 source of the program to run")
    p.add_argument("--no-p4", action="store_true", help="start without a program; wait for P4Runtime")
    p.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFNAME",
                   help="attach a network interface as a switch port (repeatable)")
    p.add_argument("--device-id", type=int, default=0, help="P4Runtime device id (default 0)")
    p.add_argument("-L", "--log-level", default="info", choices=sorted(_LOG_LEVELS),
                   help="logging level (default info)")
    p.add_argument("--log-console", action="store_true", help="log to stderr (always on; for compatibility)")
    p.add_argument("--log-file", type=Path, help="also write the log to this file")
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="write <ifname>_in.pcap / <ifname>_out.pcap per port into DIR (default .)")
    p.add_argument("--thrift-port", type=int, default=None,
                   help="accepted for simple_switch compatibility; this target has no Thrift server")
    p.add_argument("--p4-define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="preprocessor definition for PROGRAM (softswitch only)")
    p.add_argument("--p4-include", action="append", default=[], metavar="DIR",
                   help="include directory for PROGRAM (softswitch only)")
    p.add_argument("--backend", choices=("native", "python", "auto"), default=None,
                   help="packet pipeline: native (P4 compiled to C, the default when a C compiler is "
                        "present) or python (softswitch only)")
    for w in (16, 32):
        p.add_argument(f"--crc{w}-parameters", nargs="+", action="append", default=None,
                       metavar="[CALC] POLY INIT XOR REFLECT_DATA REFLECT_REMAINDER",
                       help=f"parameters of a HashAlgorithm.crc{w}_custom calculation, as BMv2's "
                            f"set_crc{w}_parameters: CALC is its BMv2 name (calc, calc_0, ... as p4c "
                            "names hash/checksum call sites); without CALC, every such calculation "
                            "(softswitch only); may be repeated")
    return p


def _target_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="softswitch ... --", description="target-specific options")
    p.add_argument("--grpc-server-addr", default="0.0.0.0:9559", metavar="HOST:PORT",
                   help="P4Runtime server address (default 0.0.0.0:9559)")
    p.add_argument("--cpu-port", type=int, default=0,
                   help="port number of the CPU port for packet-in/out (0: none, the default)")
    return p


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, argparse.Namespace]:
    """Split at ``--`` and parse both halves strictly (unknown flags are errors)."""
    if "--" in argv:
        cut = argv.index("--")
        main_argv, target_argv = argv[:cut], argv[cut + 1:]
    else:
        main_argv, target_argv = argv, []
    mp = _main_parser()
    args = mp.parse_args(main_argv)
    targs = _target_parser().parse_args(target_argv)
    if args.program and args.no_p4:
        mp.error("give either PROGRAM or --no-p4, not both")
    if not args.program and not args.no_p4:
        mp.error("a PROGRAM.p4 or --no-p4 is required")
    if targs.cpu_port < 0:
        mp.error(f"--cpu-port {targs.cpu_port}: must be >= 0")
    args.crc_params = []
    for w in (16, 32):
        for words in getattr(args, f"crc{w}_parameters") or []:
            calc = words[0] if len(words) == 6 else None
            try:
                args.crc_params.append((calc, parse_params(w, words[1:] if calc else words)))
            except ValueError as err:
                mp.error(f"--crc{w}-parameters: {err}")
    return args, targs


def _defines(specs: list[str]) -> dict[str, str]:
    out = {}
    for s in specs:
        name, _, value = s.partition("=")
        if not name.isidentifier():
            raise SystemExit(f"softswitch: --p4-define '{s}': '{name}' is not a macro name")
        out[name] = value
    return out


def _setup_logging(args: argparse.Namespace) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    logging.basicConfig(level=_LOG_LEVELS[args.log_level], handlers=handlers, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _install_program(args: argparse.Namespace, device, cpu_port: int | None) -> bool:
    """Compile ``--program`` and install it on the device; False (reported) when it cannot."""
    from . import backend
    from .frontend.parser import preprocess

    defines = _defines(args.p4_define)
    try:
        switch = backend.load(args.program, defines=defines, include_dirs=args.p4_include, cpu_port=cpu_port)
        text = preprocess(args.program, defines, args.p4_include)
    except P4CompileError as err:
        print(f"softswitch: {err}", file=sys.stderr)
        return False
    except OSError as err:
        print(f"softswitch: cannot read {args.program}: {err.strerror}", file=sys.stderr)
        return False
    device.install_program(switch, text.encode("utf-8"))
    return True


def _log_started(log: logging.Logger, args: argparse.Namespace, targs: argparse.Namespace, device,
                 mapping: dict, bound: int) -> None:
    from . import backend

    sw = device.pipeline.switch if device.pipeline is not None else None
    log.info(
        "device %d: ports %s, cpu port %s, P4Runtime on %s (port %d), program %s, backend %s",
        args.device_id,
        {n: i for n, i in sorted(mapping.items())} or "none",
        device.cpu_port,
        targs.grpc_server_addr,
        bound,
        args.program or "none (--no-p4)",
        getattr(sw, "backend", "python") if sw is not None
        else f"{backend.default()} (when a program arrives)",
    )


def run_switch(args: argparse.Namespace, targs: argparse.Namespace) -> int:
    from . import backend
    from .native.loop import serve_ports
    from .server import Device, serve
    from .server.linkstatus import LinkWatcher
    from .target.ports import PortSet, parse_port_map

    log = logging.getLogger("softswitch")
    try:
        mapping = parse_port_map(args.interface)
    except ValueError as err:
        raise SystemExit(f"softswitch: {err}") from None
    cpu_port = targs.cpu_port or None
    if cpu_port is not None and cpu_port in mapping:
        raise SystemExit(f"softswitch: --cpu-port {cpu_port} is also a data port ({mapping[cpu_port]})")
    if args.thrift_port is not None:
        log.info("--thrift-port %d ignored: this target has no Thrift server", args.thrift_port)
    device = Device(device_id=args.device_id, cpu_port=cpu_port)
    device.crc_params = list(getattr(args, "crc_params", []))
    if args.backend:
        backend.set_default(args.backend)
    if args.program and not _install_program(args, device, cpu_port):
        return 1
    ports = PortSet(mapping, Path(args.pcap) if args.pcap else None)
    try:
        ports.open()
    except OSError as err:
        print(f"softswitch: {err.strerror}", file=sys.stderr)
        return 1
    try:
        server, bound = serve(device, targs.grpc_server_addr)
    except (OSError, RuntimeError) as err:
        ports.close()
        print(
            f"softswitch: cannot start the P4Runtime server on {targs.grpc_server_addr}: {err}",
            file=sys.stderr,
        )
        return 1
    device.emit = ports.send
    links = LinkWatcher(mapping, device.port_set_status)
    links.start()

    def _stop(signum, frame):  # noqa: ARG001 - signal handler signature
        log.info("signal %d: shutting down", signum)
        ports.stop()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    _log_started(log, args, targs, device, mapping, bound)
    try:
        serve_ports(ports, device)
    finally:
        links.stop()
        server.stop(grace=0.5).wait(2)
        ports.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "stf":
        from . import stf  # another module's CLI; imported only when asked for

        return stf.main(argv[1:])
    args, targs = parse_args(argv)
    _setup_logging(args)
    return run_switch(args, targs)


if __name__ == "__main__":
    sys.exit(main())
