#!/bin/sh
# install-config.sh SOURCE DIR: meson's install script for tfd.env. Puts
# SOURCE in DIR (under $DESTDIR) only when no file of that name is there:
# the environment file holds the site's cluster spec, and a reinstall must
# not put the example back over it. (Like a distribution's conffiles; meson
# has no such notion, so `meson uninstall` also leaves it.)
set -eu
source=$1
dir=${DESTDIR:-}$2
target=$dir/$(basename "$source")
# meson install --dry-run: say what would happen, touch nothing.
if [ -n "${MESON_INSTALL_DRY_RUN:-}" ]; then
  echo "Would install $source to $target unless it exists"
  exit 0
fi
mkdir -p "$dir"
if [ -e "$target" ]; then
  echo "Keeping $target (edited settings are not replaced; the example is $source)"
else
  cp "$source" "$target"
  chmod 0644 "$target"
  echo "Installing $source to $target"
fi
