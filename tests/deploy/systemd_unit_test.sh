#!/usr/bin/env bash
# tfd@.service as meson renders it (from deploy/systemd/tfd@.service.in):
# its ExecStart line, run as systemd would for an instance, starts tfd with
# the job and task the instance name stands for — split on the last '-' —
# and refuses names that are not JOB-INDEX with exit status 2. tfd is a
# fake beside tfd-instance that prints its arguments. Output is TAP, for
# meson.
#
#   SRC_ROOT=. UNIT=build/deploy/tfd@.service BINDIR=/usr/local/bin \
#     bash tests/deploy/systemd_unit_test.sh
set -u

SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
UNIT=${UNIT:?set UNIT to the rendered tfd@.service}
BINDIR=${BINDIR:?set BINDIR to the install bindir the unit was rendered with}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
if [[ $(grep -c '^ExecStart=' "$UNIT") -eq 1 && -n "$exec_start" ]]; then
  pass "the unit has one ExecStart line: $exec_start"
else
  fail "the unit has one ExecStart line"
fi

# systemd rewrites %% and every ${...} or $NAME in the line before running
# it; a line with no '$' and no '%' but %i means what it says.
rest=${exec_start//%i/}
if [[ "$rest" != *'$'* && "$rest" != *'%'* ]]; then
  pass "ExecStart has nothing systemd would expand but %i"
else
  fail "ExecStart has nothing systemd would expand but %i: $exec_start"
fi

if [[ "$exec_start" == "$BINDIR/tfd-instance %i" ]]; then
  pass "ExecStart runs the tfd-instance of this install's bindir"
else
  fail "ExecStart runs $BINDIR/tfd-instance %i (got: $exec_start)"
fi

# The installed layout: tfd-instance and tfd side by side; tfd a fake.
mkdir -p "$work/bin"
cp "$SRC/deploy/systemd/tfd-instance" "$work/bin/tfd-instance"
cat > "$work/bin/tfd" <<'FAKE'
#!/bin/sh
echo "$@"
FAKE
chmod +x "$work/bin/tfd-instance" "$work/bin/tfd"

# run INSTANCE: ExecStart with %i and the install prefix filled in, its
# words split by sh (systemd splits quotes the same way; its % and $
# rewrites are what the check above rules out).
run() {
  local line=${exec_start//%i/$1}
  line=${line//$BINDIR\//$work/bin/}
  out=$(env -i PATH=/usr/bin:/bin sh -c "$line" 2>"$work/err")
  rc=$?
  err=$(cat "$work/err")
}

for case in "worker-0|--job worker --task 0" "param-server-0|--job param-server --task 0" \
            "ps-12|--job ps --task 12" "my-long-job-name-3|--job my-long-job-name --task 3"; do
  instance=${case%%|*}
  want=${case#*|}
  run "$instance"
  if [[ $rc -eq 0 && "$out" == "$want" ]]; then
    pass "tfd@$instance runs tfd $want"
  else
    fail "tfd@$instance runs tfd $want (got '$out', exit $rc, stderr '$err')"
  fi
done

for instance in worker worker- -0 worker-x worker-1a ""; do
  run "$instance"
  if [[ $rc -eq 2 && -z "$out" && "$err" == *"must be JOB-INDEX"* ]]; then
    pass "tfd@'$instance' is refused with exit status 2"
  else
    fail "tfd@'$instance' is refused with exit status 2 (got '$out', exit $rc, stderr '$err')"
  fi
done

tap_done
