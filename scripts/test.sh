#!/usr/bin/env bash
# The one test command: installs dependencies, builds with warnings as errors
# in build-ci/, runs every test, and closes with "N passed, N failed".
#   ./scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh || exit 1

# Two cores: build and test with at most two jobs.
jobs=${TFD_JOBS:-2}
if [[ -f build-ci/build.ninja ]]; then
  meson setup --reconfigure build-ci -Dwerror=true || exit 1
else
  meson setup build-ci -Dwerror=true || exit 1
fi
ninja -C build-ci -j "$jobs" || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
meson test -C build-ci --no-rebuild --print-errorlogs --num-processes "$jobs" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# meson's summary: "Ok:  N", "Fail:  N", and the like.
count() { awk -v key="$1:" 'index($0, key) == 1 { n = $NF } END { print n + 0 }' "$log"; }
passed=$(( $(count Ok) + $(count 'Expected Fail') ))
failed=$(( $(count Fail) + $(count 'Unexpected Pass') + $(count Timeout) ))
# CI shows only the tail of this output: name each failed check there, one line
# each, before the closing line (the whole log is in build-ci/meson-logs/).
if [[ $status -ne 0 || $failed -ne 0 ]]; then
  echo "failed checks (build-ci/meson-logs/testlog.txt):"
  awk '/^test: / { name = $NF } /^not ok/ { print name ": " substr($0, 1, 400); if (++n == 40) exit }' \
    build-ci/meson-logs/testlog.txt
fi
echo "$passed passed, $failed failed"
if [[ $status -ne 0 || $failed -ne 0 || $passed -eq 0 ]]; then exit 1; fi
