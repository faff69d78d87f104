#!/usr/bin/env bash
# Installs the project and its tools into the venv whose python is $1.  Idempotent.
set -euo pipefail
PY="$1"
PIP=("$PY" -m pip install -q --disable-pip-version-check)
"${PIP[@]}" -e '.[dev]'
# The DDP hook's extra: the CPU build of torch 2.13.0 (a local wheel on this project's machines).
"$PY" -c 'import torch' 2>/dev/null || "${PIP[@]}" 'torch==2.13.0'
# dhc-bench models builds BERT-base from transformers' BertConfig (random weights, no download).
"$PY" -c 'import transformers' 2>/dev/null || "${PIP[@]}" 'transformers>=4.40'
# p4runtime-shell pins protobuf<3.21, which conflicts with ortools: install it without deps.
"${PIP[@]}" --no-deps 'p4runtime-shell==0.0.6'

# The p4runtime wheel's generated modules fail under protobuf >= 4: regenerate them in place from
# the descriptors the wheel embeds (idempotent; rerun after any reinstall of p4runtime).
"$PY" "$(dirname "$0")/gen_p4runtime_stubs.py"
# The job service's gRPC modules, compiled from dhcwire/jobservice/jobservice.proto with
# grpcio-tools for the installed protobuf (also done on first import; docs/deploy.md).
"$PY" -c 'from dhcwire.jobservice import generate; generate()'

# Debian's Mininet is pure Python built for the system python3 (same minor version as the venv):
# expose only the `mininet` package to the venv through a shim directory and a .pth file.
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
VENV_DIR=$(cd "$(dirname "$PY")/.." && pwd)
if [ -d /usr/lib/python3/dist-packages/mininet ]; then
  mkdir -p "$VENV_DIR/mininet-shim"
  ln -sfn /usr/lib/python3/dist-packages/mininet "$VENV_DIR/mininet-shim/mininet"
  echo "$VENV_DIR/mininet-shim" > "$SITE/debian_mininet.pth"
fi

# Debian's SimGrid (python3-simgrid, 3.32) is one extension module built for the system python3
# (same minor version as the venv): expose only it, the same way, for `dhc-sim` (sim/).
SG=$(ls /usr/lib/python3/dist-packages/simgrid.cpython-*.so 2>/dev/null | head -n1 || true)
if [ -n "$SG" ]; then
  mkdir -p "$VENV_DIR/simgrid-shim"
  ln -sfn "$SG" "$VENV_DIR/simgrid-shim/$(basename "$SG")"
  echo "$VENV_DIR/simgrid-shim" > "$SITE/debian_simgrid.pth"
fi
