#!/usr/bin/env bash
# tfd@.service as meson renders it, checked by systemd's own tools:
# `systemd-analyze verify` finds nothing to say about an instance of it
# (unknown keys, bad values, a missing ExecStart binary all make it talk),
# and `systemd-analyze security --offline` rates it at most 2.0 — alone and
# with the GPU/RDMA drop-in (deploy/systemd/devices.conf). A broken copy of
# the unit and one without its hardening must be caught, so each check is
# shown able to fail. Output is TAP, for meson.
#
#   SRC_ROOT=. UNIT=build/deploy/tfd@.service BINDIR=/usr/local/bin \
#     UNITDIR=/usr/local/lib/systemd/system bash tests/deploy/systemd_analyze_test.sh
set -u

SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
UNIT=${UNIT:?set UNIT to the rendered tfd@.service}
BINDIR=${BINDIR:?set BINDIR to the bindir the unit was rendered with}
UNITDIR=${UNITDIR:?set UNITDIR to the unit directory the unit installs to}
readonly THRESHOLD=20   # tenths: 2.0

if ! command -v systemd-analyze >/dev/null; then
  # Debian's systemd package has it; scripts/install-deps.sh installs it.
  echo "1..0 # SKIP systemd-analyze is not installed (scripts/install-deps.sh installs the systemd package)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
show() { sed 's/^/# /' "$1"; }

# A root for verify: the unit where meson installs it, an executable at its
# ExecStart path, and the host's own units (sysinit.target and the others
# every service depends on), since verify loads those too.
root=$work/root
mkdir -p "$root$UNITDIR" "$root$BINDIR" "$root/usr/lib/systemd"
cp "$UNIT" "$root$UNITDIR/tfd@.service"
cp "$SRC/deploy/systemd/tfd-instance" "$root$BINDIR/tfd-instance"
chmod +x "$root$BINDIR/tfd-instance"
host_units=/usr/lib/systemd/system
[[ -d $host_units ]] || host_units=/lib/systemd/system
cp -r "$host_units" "$root/usr/lib/systemd/"

# verify NAME: systemd-analyze verify of instance NAME under $root; its
# output in $work/verify.out. Success is exit 0 and not a word said.
verify() {
  systemd-analyze verify --root="$root" --man=no --generators=no \
    "$root$UNITDIR/$1" >"$work/verify.out" 2>&1
  local rc=$?
  [[ $rc -eq 0 && ! -s "$work/verify.out" ]]
}

if verify tfd@ps-0.service; then
  pass "systemd-analyze verify: tfd@ps-0.service is clean"
else
  fail "systemd-analyze verify: tfd@ps-0.service is clean"
  show "$work/verify.out"
fi
if verify tfd@param-server-12.service; then
  pass "systemd-analyze verify: tfd@param-server-12.service is clean"
else
  fail "systemd-analyze verify: tfd@param-server-12.service is clean"
  show "$work/verify.out"
fi

# The same check on a copy with a misspelt value and an unknown key.
sed -e 's/^Type=notify$/Type=notfy/' -e 's/^NoNewPrivileges=yes$/NoNewPrivilege=yes/' \
  "$UNIT" >"$root$UNITDIR/broken@.service"
if ! verify broken@ps-0.service && grep -q 'notfy' "$work/verify.out" &&
   grep -q 'NoNewPrivilege' "$work/verify.out"; then
  pass "systemd-analyze verify reports a broken copy of the unit"
else
  fail "systemd-analyze verify reports a broken copy of the unit"
  show "$work/verify.out"
fi
rm "$root$UNITDIR/broken@.service"

# security LABEL FILE...: the overall exposure of the unit made of FILEs
# (later lines win, as a drop-in's do) must be at most THRESHOLD.
exposure() { sed -nE 's/.*Overall exposure level for [^:]*: ([0-9.]+).*/\1/p' "$work/security.out"; }
security() {
  local unit=$work/unit/tfd@.service
  mkdir -p "$work/unit"
  cat "$@" >"$unit"
  systemd-analyze security --offline=yes --threshold="$THRESHOLD" --no-pager "$unit" \
    >"$work/security.out" 2>&1
}

if security "$UNIT"; then
  pass "systemd-analyze security: tfd@.service rates $(exposure) (at most 2.0)"
else
  fail "systemd-analyze security: tfd@.service rates $(exposure), more than 2.0"
  show "$work/security.out"
fi
if security "$UNIT" "$SRC/deploy/systemd/devices.conf"; then
  pass "systemd-analyze security: with devices.conf (GPUs, RDMA) it rates $(exposure)"
else
  fail "systemd-analyze security: with devices.conf it rates $(exposure), more than 2.0"
  show "$work/security.out"
fi
# Without its hardening (the [Service] lines after "# Hardening") the unit
# must not pass: the threshold is really applied.
sed '/^# Hardening/,/^\[Install\]/{/^\[Install\]/!d}' "$UNIT" >"$work/bare.service"
if ! security "$work/bare.service"; then
  pass "systemd-analyze security fails the unit without its hardening ($(exposure))"
else
  fail "systemd-analyze security fails the unit without its hardening (got $(exposure))"
fi

tap_done
