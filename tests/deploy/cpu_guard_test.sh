#!/usr/bin/env bash
# A binary built for instructions its CPU lacks (-Dcpu=native or x86-64-v3,
# copied to an older machine) refuses to start and names them, instead of
# dying of SIGILL in some kernel, or in the middle of a step
# (common/cpu_guard.cc). The older machine is QEMU's user-mode emulator as a
# Nehalem (SSE4.2, no AVX), running the real binaries. Output is TAP.
#
#   TFD=build/daemon/tfd TFCTL=build/cli/tfctl CPU_TARGET=native VERSION=0.1.0 \
#     bash tests/deploy/cpu_guard_test.sh
set -u
: "${TFD:?}" "${TFCTL:?}" "${CPU_TARGET:?}" "${VERSION:?}"
here=$(dirname "${BASH_SOURCE[0]}")
source "$here/tap.sh"
source "$here/../../scripts/cluster-lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! qemu=$(command -v qemu-x86_64); then
  fail "qemu-x86_64 is installed (scripts/install-deps.sh installs qemu-user)"
  tap_done
fi
# Refused, a binary exits at once; one the guard let through would serve
# until this stops it.
nehalem=(timeout 20 "$qemu" -cpu Nehalem)

# Every target but portable needs AVX or more: x86-64-v3 and v4 by
# definition, native on any host that has AVX.
case $CPU_TARGET in
  portable) refused=false ;;
  x86-64-v3 | x86-64-v4) refused=true ;;
  native) if grep -qw avx /proc/cpuinfo; then refused=true; else refused=false; fi ;;
  *) fail "CPU_TARGET is one of meson's -Dcpu choices, got '$CPU_TARGET'"; tap_done ;;
esac

# run NAME COMMAND...: its exit status, stdout and stderr in $rc, $out, $err.
run() {
  "$@" >"$work/out" 2>"$work/err"
  rc=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
}

refusal() {
  local name=$1
  [[ $rc -eq 1 && -z $out && $(wc -l <"$work/err") -eq 1 ]] &&
    [[ $err =~ ^$name:\ error:\ FAILED_PRECONDITION:\ this\ binary\ was\ built\ for\ CPU\ instructions\ that\ this\ machine\ lacks:\ ([a-z0-9.\ ]+)\.\ Build\ it\ on\ this\ machine\ \(-Dcpu=native\),\ or\ for\ all\ the\ machines\ it\ runs\ on\ \(-Dcpu=x86-64-v3,\ or\ -Dcpu=portable\)\.$ ]] &&
    [[ " ${BASH_REMATCH[1]} " == *" avx "* ]]
}

run "$TFD" --version
expect "tfd runs on the machine it was built for" "0 tfd $VERSION" "$rc $out"

for bin in "$TFD" "$TFCTL"; do
  name=$(basename "$bin")
  run "${nehalem[@]}" "$bin" --version
  if $refused; then
    check "$name built with -Dcpu=$CPU_TARGET refuses a Nehalem, naming avx (exit $rc: $err)" refusal "$name"
  else
    expect "$name built with -Dcpu=$CPU_TARGET runs on a Nehalem" "0" "$rc"
  fi
done

# A task refused before main: no log line, no socket, exit 1 at once.
if $refused; then
  cluster_spec ps=1
  run "${nehalem[@]}" "$TFD" --cluster "$spec" --job ps --task 0
  check "a tfd task on a Nehalem stops before it logs or listens (exit $rc: $err)" refusal tfd
else
  skip "a tfd task on a Nehalem is refused" "a -Dcpu=$CPU_TARGET build runs there"
fi
tap_done
