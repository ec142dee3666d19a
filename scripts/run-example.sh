#!/usr/bin/env bash
# The main command: installs dependencies, builds tfd in build/ (release) and
# evaluates examples/graphs/hello.txt — y = a x b + bias — with tfctl.
#   ./scripts/run-example.sh
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
[[ -f build/build.ninja ]] || meson setup build --buildtype=release
ninja -C build -j "${TFD_JOBS:-2}" cli/tfctl

echo "\$ tfctl run examples/graphs/hello.txt --fetch product --fetch y"
./build/cli/tfctl run examples/graphs/hello.txt --fetch product --fetch y
