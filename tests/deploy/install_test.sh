#!/usr/bin/env bash
# `meson install --destdir` puts every file where the rendered unit and the
# docs say it is: tfd, tfctl and tfd-instance (executable) in bindir, the
# unit with this install's paths, the environment file, the Slurm script
# and its per-task launcher, tfctl's bash
# completion, the docs and the LICENSE (the text of meson.build's
# `license:`). The installed binaries run. A second install keeps an edited
# environment file. Output is TAP, for meson.
#
#   BUILD_ROOT=build SRC_ROOT=. BINDIR=/usr/local/bin ... bash tests/deploy/install_test.sh
set -u

BUILD=${BUILD_ROOT:?set BUILD_ROOT to the meson build directory}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
: "${BINDIR:?}" "${SYSCONFDIR:?}" "${DATADIR:?}" "${UNITDIR:?}" "${DOCDIR:?}" "${VERSION:?}" "${LICENSE_ID:?}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/dest
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

# Always with --destdir: as root, a bare `meson install` would write to /usr/local.
# A dry run first: it must write nothing, install-config.sh included (which
# meson >= 1.1 runs under --dry-run with MESON_INSTALL_DRY_RUN set).
if meson install -C "$BUILD" --no-rebuild --quiet --dry-run --destdir "$dest" >"$work/dry.log" 2>&1; then
  check "meson install --dry-run writes nothing" test ! -e "$dest"
else
  fail "meson install --dry-run succeeds"
  sed 's/^/# /' "$work/dry.log"
fi
out=$(MESON_INSTALL_DRY_RUN=1 DESTDIR="$dest" sh "$SRC/deploy/systemd/install-config.sh" \
        "$SRC/deploy/systemd/tfd.env" "$SYSCONFDIR/tfd" 2>&1)
rc=$?
want="Would install $SRC/deploy/systemd/tfd.env to $dest$SYSCONFDIR/tfd/tfd.env unless it exists"
if [[ $rc -eq 0 && ! -e $dest && $out == "$want" ]]; then
  pass "install-config.sh in a dry run says what it would do and writes nothing"
else
  fail "install-config.sh in a dry run says what it would do and writes nothing (exit $rc, said '$out')"
fi
if meson install -C "$BUILD" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1; then
  pass "meson install --destdir succeeds"
else
  fail "meson install --destdir succeeds"
  sed 's/^/# /' "$work/install.log"
fi

for f in "$BINDIR/tfd" "$BINDIR/tfctl" "$BINDIR/tfd-instance" "$BINDIR/tfd-slurm-task" \
         "$DOCDIR/slurm/tfd.sbatch"; do
  check "$f is installed and executable" test -f "$dest$f" -a -x "$dest$f"
done
unit=$dest$UNITDIR/tfd@.service
env_file=$dest$SYSCONFDIR/tfd/tfd.env
for f in "$UNITDIR/tfd@.service" "$SYSCONFDIR/tfd/tfd.env" \
         "$DATADIR/bash-completion/completions/tfctl" "$DATADIR/bash-completion/completions/tfd" \
         "$DOCDIR/LICENSE" "$DOCDIR/README.md" "$DOCDIR/operations.md" "$DOCDIR/cli.md" \
         "$DOCDIR/architecture.md" "$DOCDIR/systemd/devices.conf" \
         "$MANDIR/man1/tfd.1" "$MANDIR/man1/tfctl.1"; do
  check "$f is installed" test -f "$dest$f" -a -s "$dest$f"
done
# The man pages hold what --help says: tfd's flags, every tfctl command's options.
check "tfd.1 describes --listen" grep -qF '\-\-listen' "$dest$MANDIR/man1/tfd.1"
check "tfd.1 describes --checkpoint-dir" grep -qF '\-\-checkpoint\-dir' "$dest$MANDIR/man1/tfd.1"
check "tfctl.1 has a COMMANDS section with train's --checkpoint-secs" \
  bash -c "grep -q '^.SH COMMANDS' '$dest$MANDIR/man1/tfctl.1' && grep -q 'checkpoint-secs' '$dest$MANDIR/man1/tfctl.1'"
check "tfctl.1 names every command of tfctl --help" bash -c '
  for c in $("$1" --help | sed -n "s/^  tfctl \([a-z]*\) .*/\1/p"); do
    grep -q "^.SS $c\$" "$2" || { echo "# no $c"; exit 1; }
  done' _ "$dest$BINDIR/tfctl" "$dest$MANDIR/man1/tfctl.1"

# Everything meson says it installs is there (a new install rule included).
mapfile -t listed < <(meson introspect "$BUILD" --installed |
  python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin).values()))')
missing=()
for f in "${listed[@]}"; do [[ -e "$dest$f" ]] || missing+=("$f"); done
check "all ${#listed[@]} paths of meson introspect --installed exist${missing:+ (missing: ${missing[*]})}" \
  test ${#missing[@]} -eq 0 -a ${#listed[@]} -gt 0

# The unit names this install's paths, with nothing left unrendered.
check "the unit has no @PLACEHOLDER@ left" bash -c "! grep -qE '@[A-Z]+@' '$unit'"
check "the unit runs $BINDIR/tfd-instance" grep -qx "ExecStart=$BINDIR/tfd-instance %i" "$unit"
check "the unit reads $SYSCONFDIR/tfd/tfd.env" grep -qx "EnvironmentFile=$SYSCONFDIR/tfd/tfd.env" "$unit"
check "the unit loads the token from $SYSCONFDIR/tfd/token" \
  grep -qx "LoadCredential=token:$SYSCONFDIR/tfd/token" "$unit"

# The installed binaries run (their libraries are the system's).
out=$("$dest$BINDIR/tfctl" version 2>&1)
check "the installed tfctl runs: '$out'" test "$out" = "tfctl $VERSION"
check "the installed tfd runs (--help)" bash -c "'$dest$BINDIR/tfd' --help | grep -q '^usage: tfd'"
out=$("$dest$BINDIR/tfd" --version 2>&1)
check "tfd --version is meson.build's: '$out'" test "$out" = "tfd $VERSION"
check "the installed completion loads and registers tfctl" \
  bash -c "source '$dest$DATADIR/bash-completion/completions/tfctl' && complete -p tfctl | grep -q _tfctl"
check "the installed completion for tfd loads and registers tfd" \
  bash -c "source '$dest$DATADIR/bash-completion/completions/tfd' && complete -p tfd | grep -q _tfd"

# LICENSE: the licence meson.build declares.
check "meson.build's license is Apache-2.0 (got '$LICENSE_ID')" test "$LICENSE_ID" = "Apache-2.0"
check "LICENSE is the Apache License, Version 2.0" \
  bash -c "grep -q '^ *Apache License\$' '$SRC/LICENSE' && grep -q '^ *Version 2.0, January 2004\$' '$SRC/LICENSE' && grep -q 'END OF TERMS AND CONDITIONS' '$SRC/LICENSE'"
if [[ -f /usr/share/common-licenses/Apache-2.0 ]]; then
  check "LICENSE is word for word Debian's copy of the Apache-2.0 text" \
    cmp -s "$SRC/LICENSE" /usr/share/common-licenses/Apache-2.0
fi

# A first install writes the example; a reinstall keeps the site's settings.
check "tfd.env is deploy/systemd/tfd.env" cmp -s "$env_file" "$SRC/deploy/systemd/tfd.env"
echo 'TFD_LOG_LEVEL=debug  # edited' >>"$env_file"
meson install -C "$BUILD" --no-rebuild --quiet --destdir "$dest" >"$work/install2.log" 2>&1
check "a second install keeps an edited tfd.env" grep -q '^TFD_LOG_LEVEL=debug  # edited$' "$env_file"

tap_done
