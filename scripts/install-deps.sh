#!/usr/bin/env bash
# Installs the Debian packages tskube needs on a node and for its e2e tests.
# Set-up command 1 of 2 (see README). Needs root.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then echo "install-deps: run as root" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  containerd runc containernetworking-plugins iptables nftables conntrack \
  docker-registry skopeo busybox-static iproute2 util-linux tar gzip ca-certificates openssl \
  curl tmux systemd
# Upstream's busybox for the e2e suite's busybox image is built from source (npm run upstream -- build).
apt-get install -y -qq --no-install-recommends make gcc libc6-dev bzip2
# Real clients the e2e tests drive besides kubectl: the official Python client (run with Debian's /usr/bin/python3).
apt-get install -y -qq --no-install-recommends python3-kubernetes
# DNS: dig for the e2e tests, dnsmasq (the binary only: dnsmasq-base starts no system service) as the tests' upstream
# resolver and the benchmark's floor, dnsperf for the benchmark.
apt-get install -y -qq --no-install-recommends bind9-dnsutils dnsmasq-base dnsperf
# The e2e tests drive the real kubectl. These machines ship v1.32; Debian's kubernetes-client is older but works.
command -v kubectl >/dev/null || apt-get install -y -qq --no-install-recommends kubernetes-client
# The e2e suite's nginx image is built from Debian's nginx: downloaded, not installed (installing starts a web server).
deb_dir="${TSKUBE_DEB_DIR:-/var/cache/tskube/debs}"
mkdir -p "$deb_dir"
rm -f "$deb_dir"/nginx_*.deb "$deb_dir"/nginx-common_*.deb
# Its libraries come from this machine's own packages; agnhost's image copies tools upstream's has (curl, dig, nc,
# getent, ip, bash, socat) from them too.
apt-get install -y -qq --no-install-recommends libc6 libcrypt1 libpcre2-8-0 libssl3 zlib1g \
  curl bind9-dnsutils iproute2 bash netcat-openbsd socat
(cd "$deb_dir" && apt-get download -qq -o APT::Sandbox::User=root nginx nginx-common)
echo "install-deps: done"
