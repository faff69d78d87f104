# DHC: one Makefile flow (after p4lang/tutorials): setup, build, run, stop, test, bench, clean.
SHELL      := /bin/bash
PYTHON     ?= python3
VENV       := .venv
PY         := $(VENV)/bin/python
PIP        := $(PY) -m pip
STAMP      := $(VENV)/.setup-stamp
APT_STAMP  := $(VENV)/.apt-stamp
APT_PKGS   := mininet iputils-ping iproute2 nftables tcpdump docker-compose gcc python3-simgrid
TOPO       ?= topologies/leafspine.yaml
MODE       ?= sketch
TARGET     ?= auto
BW         ?=
P4C        ?= p4c
BUILD      := build

.PHONY: setup test test-shared-netns test-rest run stop bench train lint p4 clean help docker-run

help:
	@echo "make run   - the whole story on the default topology ($(TOPO))"
	@echo "make test  - every test (unit, packet, gRPC, Mininet end-to-end)"
	@echo "make bench - benchmarks (JSON to bench/out/; LONG=1 adds the long arms)"
	@echo "make train - DDP training in Mininet, four ways, on $(or $(BW),100mbit) links (bench/out/train*)"
	@echo "make p4    - build p4src/ for BMv2 with p4c (the topology's defines, BMv2's K), when p4c is on PATH"
	@echo "make docker-run - the same story on real BMv2 (needs a Docker engine)"
	@echo "make lint | stop | clean"

setup: $(STAMP) $(APT_STAMP)

# Debian packages the network tests and `make run` need; installed only when root and missing.
$(APT_STAMP): Makefile
	@mkdir -p $(VENV)
	@missing=$$(for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "apt: installing $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "warning: missing Debian packages (need root): $$missing"; fi; \
	fi
	@touch $@

$(STAMP): pyproject.toml scripts/setup_python.sh $(APT_STAMP)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@bash scripts/setup_python.sh $(PY)
	@touch $@

# Two halves at once (tests/conftest.py): the tests that build interfaces in this machine's own
# network namespace (marked `root` and not `own_netns`: Mininet, fixed veth names) one after
# another, and all the others on two xdist workers, whole modules per worker.  Each half has its
# own pytest temporary folder; their outputs interleave.
test: setup
	@$(MAKE) --no-print-directory -j2 test-shared-netns test-rest

test-shared-netns:
	@d=$$(mktemp -d /tmp/dhc-test-XXXXXX); \
	$(PY) -m pytest -q -m "root and not own_netns" --basetemp=$$d/t; rc=$$?; rm -rf $$d; exit $$rc

test-rest:
	@d=$$(mktemp -d /tmp/dhc-test-XXXXXX); \
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not root or own_netns" --basetemp=$$d/t; rc=$$?; \
	rm -rf $$d; exit $$rc

run: setup
	$(PY) -m topologies.run_story --topo $(TOPO) --mode $(MODE) --target $(TARGET) $(if $(BW),--bw $(BW))

# ends only what runs of this checkout started, as recorded under .run/ (topologies/runreg.py)
stop:
	-$(PY) -m topologies.cleanup

# Under 30 minutes on this 2-core machine (docs/scale.md, "make bench"): dhc-bench all gives the benchmarks
# that take many minutes shorter runs (bench/cli.py ALL_SHORT; wall times in bench/out/all_timing.json).
# LONG=1 runs every benchmark with its own defaults and adds the long arms: placement's
# side-by-side with the exact models (~450 s), dhc-bench scale's 512-1,024-worker sweeps,
# dhc-bench models' BERT-base/VGG19/ResNet-50, the 200-step trainings.
bench: setup
	@mkdir -p bench/out
	$(VENV)/bin/dhc-bench all --json --out bench/out $(if $(LONG),--long)
	$(VENV)/bin/dhc-bench e2e --json --topo topologies/leafspine.yaml --bw 100mbit --repeat 1 \
	  > bench/out/e2e_leafspine.json
	$(PY) -m bench.codec.plots --dir bench/out
	$(PY) -m bench.scale.scale_plots --dir bench/out
	$(VENV)/bin/dhc-sim validate --json > bench/out/sim_validate.json

train: setup
	@mkdir -p bench/out
	$(VENV)/bin/dhc-bench train --json --bw $(or $(BW),100mbit) --out bench/out --plot-dir bench/out

lint: setup
	$(VENV)/bin/ruff check .

# p4src/dhc.p4 for BMv2 with the topology's defines at BMv2's K (controller/bmv2_build.py; cached
# under build/bmv2/ by source content + defines + p4c version; `make run TARGET=bmv2` does the same)
p4: setup
	@if command -v $(P4C) >/dev/null; then \
	  $(PY) -m controller.bmv2_build --topo $(TOPO) --p4c $(P4C); \
	else echo "p4c not on PATH: skipping (the softswitch compiles p4src/ at load time)"; fi

docker-run:
	TOPO=$(TOPO) docker-compose up --build --abort-on-container-exit

clean:
	rm -rf $(VENV) $(BUILD) .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
