"""Build and load the native module of a program: typed IR -> C -> ``cc -O2 -shared -fPIC`` ->
cffi (ABI mode).  Modules are cached by the hash of their C source and compiler flags in
``$SOFTSWITCH_CACHE`` (default ``~/.cache/softswitch``); a finished module is renamed into
place atomically, so several switches starting at once never load a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cffi import FFI

from ..api import P4CompileError
from ..cachedir import cache_dir
from ..ir import Unsupported
from ..ir import nodes as ir
from . import subset
from .cgen import CGen

_HERE = Path(__file__).parent
_PARTS = ("rt_head.h", None, "rt_tail.c", "rt_flow.c", "rt_loop.c")
CDEF = """
typedef struct SW SW;
typedef struct OUTL OUTL;
typedef struct { double rate[2]; uint64_t burst[2], tokens[2], last[2]; int configured; } MCELL;
SW *ss_new(void);
void ss_free(SW *sw);
int ss_tbl_load(SW *sw, int tid, int n, const uint64_t *kv, const uint64_t *km, const int *ai,
                const uint64_t *args, const uint64_t *cnt, const MCELL *mtr, const int *gsz, int ng,
                const int *gai, const uint64_t *gargs);
int ss_tbl_meters(SW *sw, int tid, MCELL *out, int n);
int ss_meter_access(SW *sw, int mid, uint64_t idx, MCELL *cell, int write);
void ss_set_now(SW *sw, int ext, int64_t now_us);
void ss_rng_seed(SW *sw, uint64_t state);
int ss_crc_set(SW *sw, int calc, int width, uint64_t poly, uint64_t init, uint64_t xorv,
               int refin, int refout);
int ss_tbl_default(SW *sw, int tid, int ai, const uint64_t *args);
int ss_tbl_counters(SW *sw, int tid, uint64_t *out, int n);
int ss_mc_set(SW *sw, int gid, int n, const int *ports, const int *rids);
int ss_sess_set(SW *sw, uint32_t id, int n, const int *ports, const int *rids, uint64_t trunc);
int ss_reg_access(SW *sw, int rid, uint64_t idx, uint64_t *lohi, int write);
int ss_reg_reset(SW *sw, int rid);
int ss_ctr_access(SW *sw, int cid, uint64_t idx, uint64_t *pb, int write);
int ss_digest_pop(SW *sw, int *id, uint64_t *vals);
OUTL *ss_process(SW *sw, int port, const uint8_t *d, size_t len);
int ss_outl_n(OUTL *o);
const uint8_t *ss_outl_get(OUTL *o, int i, int *port, size_t *len);
void ss_outl_free(OUTL *o);
int ss_loop(SW *sw, int n, const int *fds, const int *ports, int wakefd, int evfd, int cpu_port);
int ss_pktin_pop(SW *sw, uint8_t *buf, size_t cap, size_t *len);
void ss_stats(SW *sw, uint64_t *out);
int ss_vs_load(SW *sw, int id, int n, int nf, const uint64_t *v, const uint64_t *m);
double ss_run_many(SW *sw, const int *ports, const uint8_t *frames, size_t stride, const size_t *lens, int n,
                   int64_t *outs);
"""
CFLAGS = ["-O2", "-shared", "-fPIC", "-std=gnu11", "-Wno-unused-function", "-Wno-unused-variable",
          "-Wno-unused-label", "-pthread"]
SANITIZE = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined"]


class NativeBuildError(P4CompileError):
    """The program cannot be built by the native backend (the construct is named)."""


@dataclass
class NativeModule:
    ffi: FFI
    lib: object
    ir: ir.Program
    gen: CGen
    path: Path


_FFI = FFI()
_FFI.cdef(CDEF)
_LOADED: dict[str, object] = {}


def compiler() -> str | None:
    """The C compiler: ``$CC`` or ``cc`` on PATH (None when there is none)."""
    cc = os.environ.get("CC") or "cc"
    return shutil.which(cc)


def sanitize() -> bool:
    return os.environ.get("SOFTSWITCH_SANITIZE", "") == "1"


def c_source(compiled) -> tuple[str, ir.Program, CGen]:
    """The C source of ``compiled`` (a ``compiler.CompiledProgram``), its IR and generator."""
    irp = compiled.ir
    try:
        subset.check(irp)
        gen = CGen(irp)
        generated = gen.generate()
    except Unsupported as err:
        raise NativeBuildError(f"native backend: {err} is not supported", compiled.filename) from None
    parts = [generated if p is None else (_HERE / p).read_text() for p in _PARTS]
    return "\n".join(parts), irp, gen


def build(compiled) -> NativeModule:
    """The native module of ``compiled`` (a ``compiler.CompiledProgram``), compiled once per
    distinct C source (cached on disk) and loaded once per process."""
    filename = compiled.filename
    src, irp, gen = c_source(compiled)
    cc = compiler()
    if cc is None:
        raise NativeBuildError("native backend: no C compiler (cc) on PATH", filename)
    flags = CFLAGS + (SANITIZE if sanitize() else [])
    key = hashlib.sha256((src + "\0" + " ".join(flags)).encode()).hexdigest()[:32]
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    so = d / f"ss_{key}.so"
    if not so.exists():
        _compile(cc, flags, src, so, filename)
    lib = _LOADED.get(str(so))
    if lib is None:
        lib = _FFI.dlopen(str(so))
        _LOADED[str(so)] = lib
    return NativeModule(_FFI, lib, irp, gen, so)


def _compile(cc: str, flags: list[str], src: str, so: Path, filename: str) -> None:
    with tempfile.TemporaryDirectory(dir=so.parent, prefix=".build-") as tmp:
        c = Path(tmp) / "prog.c"
        c.write_text(src)
        out = Path(tmp) / "prog.so"
        r = subprocess.run([cc, *flags, "-o", str(out), str(c)], capture_output=True, text=True)
        if r.returncode != 0:
            first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:300])
            keep = so.with_suffix(".failed.c")
            c.replace(keep)
            raise NativeBuildError(f"native backend: the C compiler rejected the generated code: {first} "
                                   f"(source kept in {keep})", filename)
        os.replace(out, so)  # atomic: concurrent builders of the same module write the same bytes
