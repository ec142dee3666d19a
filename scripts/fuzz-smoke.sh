#!/usr/bin/env bash
# The fuzz lane: builds every libFuzzer target with clang 14 (ASan and UBSan
# on) in build-fuzz/, runs each for a few seconds from its seed corpus, and
# fails when one crashes, leaks, hangs or trips a sanitizer. The tree is
# built with -Dtests=false, so this is also the check that it compiles with
# clang.
#
#   ./scripts/fuzz-smoke.sh               # FUZZ_SECONDS=10 per target
#   FUZZ_SECONDS=60 ./scripts/fuzz-smoke.sh
#
# A target NAME_fuzz starts from tests/fuzz/corpus/NAME_fuzz/ when there is
# one, else from tests/fuzz/corpus/. New inputs it finds go to a scratch
# directory, not into the tree; a crashing input is kept in
# build-fuzz/artifacts/ and named in the output. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-10}
jobs=${TFD_JOBS:-2}

# clang itself and the sanitizer and libFuzzer runtimes; only this lane needs them.
./scripts/install-deps.sh clang-14 libclang-rt-14-dev || exit 1

export CC=clang-14 CXX=clang++-14
options=(-Dfuzz=true -Dtests=false -Dcuda=disabled -Dwerror=true)
if [[ -f build-fuzz/build.ninja ]]; then
  meson setup --reconfigure build-fuzz "${options[@]}" || exit 1
else
  meson setup build-fuzz "${options[@]}" || exit 1
fi
ninja -C build-fuzz -j "$jobs" || { echo "0 passed, 1 failed"; exit 1; }

mapfile -t targets < <(find build-fuzz/tests/fuzz -maxdepth 1 -type f -name '*_fuzz' -perm -u+x | sort)
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz-smoke: no fuzz targets were built" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p build-fuzz/artifacts
passed=0 failed=0
for target in "${targets[@]}"; do
  name=$(basename "$target")
  seeds=tests/fuzz/corpus/$name
  [[ -d "$seeds" ]] || seeds=tests/fuzz/corpus
  mkdir -p "$scratch/$name"
  echo "fuzz-smoke: $name for ${seconds} s from $seeds"
  # The first corpus directory receives new inputs; the seeds stay as they are.
  if "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="build-fuzz/artifacts/$name-" -print_final_stats=1 \
       "$scratch/$name" "$seeds" > "$scratch/$name.log" 2>&1; then
    passed=$((passed + 1))
    grep -E '^stat::number_of_executed_units|^#[0-9]+[[:space:]]+DONE' "$scratch/$name.log" | sed "s/^/  /"
  else
    failed=$((failed + 1))
    tail -n 40 "$scratch/$name.log"
    echo "fuzz-smoke: $name FAILED; the input is in build-fuzz/artifacts/$name-*" >&2
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
