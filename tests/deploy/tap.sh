# TAP for the shell tests of tests/deploy, which meson reads with
# protocol 'tap'. Sourced, not run:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
#   check "the unit is there" test -f "$UNIT"
#   expect "the port" 2222 "$port"
#   tap_done                      # the plan; exit 1 if anything failed
#
# A description must fit on one line: meson takes one line per result.
count=0
failures=0
pass() { count=$((count + 1)); echo "ok $count - $1"; }
fail() { count=$((count + 1)); failures=$((failures + 1)); echo "not ok $count - $1"; }
# skip DESCRIPTION REASON: reported as passed, with the reason meson shows.
skip() { count=$((count + 1)); echo "ok $count - $1 # SKIP $2"; }
# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
# expect DESCRIPTION WANT GOT: passes when GOT is WANT, and says both if not.
expect() {
  if [[ "$3" == "$2" ]]; then pass "$1"; else fail "$1: want '$2', got '$3'"; fi
}
tap_done() {
  echo "1..$count"
  exit $((failures > 0))
}
