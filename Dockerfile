# DHC on real BMv2: p4c and simple_switch_grpc from the public p4lang image, plus Debian's Mininet.
# Build and run with `make docker-run` (needs a Docker engine; not available on the dev machines).
FROM p4lang/p4c:latest

ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends mininet iputils-ping iproute2 nftables make \
        python3 python3-venv python3-pip git \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /dhc
COPY . /dhc
# the topology the image is built for (docker-compose.yml passes the same TOPO to `make run`)
ARG TOPO=topologies/leafspine.yaml
ENV TOPO=${TOPO}
# the project's own setup (venv, Python packages, P4Runtime stubs, Mininet exposed to the venv),
# then `make p4`: p4c builds dhc.p4 with the topology's defines at BMv2's K (controller/targets.py)
# into build/bmv2/, the cache `make run TARGET=bmv2` reads (keyed by source, defines, p4c version)
RUN make setup PYTHON=python3 && make p4 TOPO=${TOPO}

# Mininet needs a privileged container (namespaces, veth); see docker-compose.yml
CMD ["make", "run", "TARGET=bmv2"]
