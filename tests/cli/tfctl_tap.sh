# TAP for the shell tests of tests/cli that drive tfctl, which meson reads
# with protocol 'tap'. Sourced, not run; the test sets $out and $rc (a
# tfctl wrapper of its own) before each check:
#
#   source "$SRC/tests/cli/tfctl_tap.sh"
#   tfctl start ...                 # the test's wrapper: sets $out and $rc
#   check "start starts it" 0 "^started "
#   tap_done                        # the plan; exit 1 if anything failed
#
# A description must fit on one line: meson takes one line per result.
count=0
failures=0
out="" rc=0
pass() { count=$((count + 1)); echo "ok $count - $1"; }
# fail DESCRIPTION: says the last command's exit status and output.
fail() {
  count=$((count + 1)); failures=$((failures + 1))
  echo "not ok $count - $1"
  echo "#   exit status: $rc"
  echo "#   output: ${out//$'\n'/$'\n'#           }"
}
# skip DESCRIPTION REASON: reported as passed, with the reason meson shows.
skip() { count=$((count + 1)); echo "ok $count - $1 # SKIP $2"; }
# check NAME EXPECTED_RC PATTERN: the last command ended with EXPECTED_RC and
# its output matches the extended regex PATTERN.
check() {
  if [[ $rc -eq $2 ]] && grep -Eq "$3" <<<"$out"; then pass "$1"; else fail "$1"; fi
}
tap_done() {
  echo "1..$count"
  exit $((failures > 0))
}
