#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera builds and tests with, only when one
# is missing, so repeated `make` runs cost nothing.
#   scripts/install-deps.sh          build and test packages (gnuplot-nox draws
#                                    experiment reports, chromium checks them;
#                                    iproute2's ip and tc build `--netns` runs,
#                                    iptables and libnetfilter-queue shape
#                                    them where the kernel has no netem)
#   scripts/install-deps.sh --fuzz   also clang and its libFuzzer runtime
#                                    (`make fuzz`)
#   scripts/install-deps.sh --bench  also what `make bench` drives the peers
#                                    with: etcd (the KV peer), wrk, bc, and
#                                    libcurl + gcc for the anchors' s3bench
#                                    (Ceph RGW installs itself: rgw/up.sh)
set -euo pipefail

packages=(
  cmake g++ make pkg-config ccache
  librocksdb-dev libboost-dev libboost-system-dev
  libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  libssl-dev libpugixml-dev libjemalloc-dev libisal-dev nlohmann-json3-dev
  curl s3cmd rclone openssl
  iproute2 iptables libnetfilter-queue-dev
  gnuplot-nox chromium
)
case "${1:-}" in
  "") ;;
  --bench) packages+=(etcd-server etcd-client wrk bc gcc libcurl4-openssl-dev) ;;
  --fuzz) packages+=(clang libclang-rt-14-dev) ;;
  *) echo "usage: $0 [--bench | --fuzz]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
