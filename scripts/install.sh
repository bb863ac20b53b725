#!/usr/bin/env bash
# Installs tskube on this machine: compiles the CLI into /opt/tskube (with its
# runtime npm dependencies, the .proto files and OpenAPI schemas it loads), puts a `tskube`
# command at /usr/local/bin/tskube, and installs the systemd units and default
# configs under /etc/tskube (existing configs are kept), then runs `tskube install`, which gives Debian's
# containerd tskube's config (CNI dirs, SystemdCgroup, the offline pause image, the registry). Run from a
# checkout after `npm ci`, as root:  bash scripts/install.sh [--prefix=/opt/tskube] [--bin=/usr/local/bin]
# [--units=/etc/systemd/system] [--etc=/etc/tskube] [tskube install flags: --role=control-plane|worker,
# --node-ip=IP, --registry-mirror=HOST:5000 (workers), --cgroup-driver=..., --containerd-config=FILE, ...]
set -euo pipefail
if [ "$(id -u)" != 0 ]; then echo "install: run as root" >&2; exit 1; fi
PREFIX=/opt/tskube
BIN=/usr/local/bin
UNITS=/etc/systemd/system
ETC=/etc/tskube
NODE_ARGS=()
ROLE=control-plane
for a in "$@"; do
  case "$a" in
    --prefix=*) PREFIX="${a#*=}" ;;
    --etc=*) ETC="${a#*=}" ;;
    --bin=*) BIN="${a#*=}" ;;
    --units=*) UNITS="${a#*=}" ;;
    --role=*) ROLE="${a#*=}"; NODE_ARGS+=("$a") ;;
    --node-ip=*|--registry-mirror=*|--cgroup-driver=*|--cluster-cidr=*|--containerd-config=*|--cni-conf-dir=*|--data-dir=*) NODE_ARGS+=("$a") ;;
    *) echo "install: unknown argument $a" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
# What the units run: Debian's packages (scripts/install-deps.sh installs these and more).
missing=()
for c in containerd runc iptables nft ip docker-registry skopeo busybox node; do command -v "$c" >/dev/null || missing+=("$c"); done
[ -x /usr/lib/cni/bridge ] || missing+=("/usr/lib/cni/bridge")
if [ ${#missing[@]} -gt 0 ]; then
  echo "install: missing ${missing[*]}; install them with: apt-get install -y containerd runc containernetworking-plugins iptables nftables iproute2 docker-registry skopeo busybox-static (and Node.js >= 20.18, see README)" >&2
  exit 1
fi
echo "install: compiling to $PREFIX/dist"
rm -rf "$PREFIX/dist"
mkdir -p "$PREFIX"
# The same build as `npm ci` makes in the checkout: compiled modules plus the schemas they load at run time.
node scripts/build.mjs "$PREFIX/dist"
cp package.json package-lock.json "$PREFIX/"
REGISTRY_URL="$(npm config get registry)"
if [ "$(npm config get offline)" = true ]; then
  echo "install: runtime dependencies (npm ci --omit=dev) from the npm cache only (offline)"
else
  echo "install: runtime dependencies (npm ci --omit=dev) from $REGISTRY_URL (or the npm cache); giving up after about 2 minutes without an answer"
fi
# No scripts: the build is already there (prepare needs the dev dependencies), and no dependency needs its own.
if ! (cd "$PREFIX" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error --fetch-timeout=30000 --fetch-retries=2 --fetch-retry-maxtimeout=20000); then
  echo "install: npm ci failed: the npm registry $REGISTRY_URL could not be reached or lacks a package, and the npm cache does not have it; fix the network or the registry (npm config set registry …), or fill the cache on a connected machine" >&2
  exit 1
fi
mkdir -p "$BIN"
# glibc's mmap threshold fixed at its initial 128 KiB unless the user sets it (docs/kubelet-config.md, "The process's
# memory"): grown by glibc after a large free, it put later large buffers in the heap, which freed memory then pinned.
cat > "$BIN/tskube" <<SH
#!/bin/sh
MALLOC_MMAP_THRESHOLD_="\${MALLOC_MMAP_THRESHOLD_:-131072}" exec /usr/bin/env node "$PREFIX/dist/cli/tskube.js" "\$@"
SH
chmod 0755 "$BIN/tskube"
if [ "$ROLE" = kubeadm ]; then
  # kubeadm runs `kubelet` (its preflight asks `kubelet --version`) and manages a unit of that name.
  cat > "$BIN/kubelet" <<SH
#!/bin/sh
MALLOC_MMAP_THRESHOLD_="\${MALLOC_MMAP_THRESHOLD_:-131072}" exec /usr/bin/env node "$PREFIX/dist/cli/tskube.js" agent "\$@"
SH
  chmod 0755 "$BIN/kubelet"
fi
echo "install: units to $UNITS, configs to $ETC"
mkdir -p "$UNITS" "$ETC"
for u in systemd/tskube-*.service; do
  sed -e "s#/usr/local/bin/tskube#$BIN/tskube#g" -e "s#/etc/tskube#$ETC#g" "$u" > "$UNITS/$(basename "$u")"
done
if [ "$ROLE" = kubeadm ]; then sed -e "s#/usr/local/bin/kubelet#$BIN/kubelet#g" systemd/kubeadm/kubelet.service > "$UNITS/kubelet.service"; fi
for c in systemd/etc/*; do
  [ -e "$ETC/$(basename "$c")" ] || sed "s#/etc/tskube#$ETC#g" "$c" > "$ETC/$(basename "$c")"
done
# Debian's docker-registry package enables its own unit on :5000, where tskube-registry listens: mask it (the
# registry tskube runs has its own configs and storage).
if [ -d /run/systemd/system ]; then systemctl stop docker-registry.service 2>/dev/null || true; fi
ln -sf /dev/null "$UNITS/docker-registry.service"
if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
"$BIN/tskube" install --etc="$ETC" "${NODE_ARGS[@]}"
echo "install: done. $BIN/tskube --help"

