#!/usr/bin/env bash
# deploy/container: the Containerfile's final stage is debian:12-slim with
# exactly the packages of the shared libraries tfd and tfctl link (ldd of
# the built binaries, dpkg -S), no -dev package, an unprivileged user with
# the uid deploy/k8s runs as; build.sh skips (77, with a message) where no
# container tool works and otherwise runs `TOOL build` on a context without
# build directories (a stand-in tool records what it was asked). A real
# build takes a full compile (~15 min on 2 cores): it runs only with
# TFD_CONTAINER_BUILD=1 and a working podman or docker, and is reported as
# skipped otherwise. Output is TAP, for meson.
#
#   SRC_ROOT=. TFD=build/daemon/tfd TFCTL=build/cli/tfctl VERSION=0.1.0 \
#     bash tests/deploy/container_test.sh
set -u

SRC=$(realpath "${SRC_ROOT:?set SRC_ROOT to the source tree}")
: "${TFD:?}" "${TFCTL:?}" "${VERSION:?}"
FILE=$SRC/deploy/container/Containerfile
BUILD_SH=$SRC/deploy/container/build.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

# The final stage: from its FROM line to the end, continuation lines joined.
final=$(awk '/^FROM /{stage=$0; body=""} {body=body $0 "\n"} END{printf "%s", body}' "$FILE" |
        sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
expect "the final stage is debian:12-slim" "FROM debian:12-slim" "$(grep -m1 '^FROM' <<<"$final")"
expect "the first stage builds on debian:12" "FROM debian:12 AS build" "$(grep -m1 '^FROM' "$FILE")"
install_line=$(grep -E 'apt-get install' <<<"$final")
if [[ $install_line == *--no-install-recommends* && $final == *'rm -rf /var/lib/apt/lists/*'* ]]; then
  pass "the final stage installs without recommends and drops apt's lists"
else
  fail "the final stage installs without recommends and drops apt's lists"
fi
mapfile -t listed < <(sed -E 's/.*apt-get install//; s/&&.*//' <<<"$install_line" | tr ' ' '\n' |
                      grep -E '^[a-z0-9][a-z0-9.+-]+$' | sort -u)
dev=$(printf '%s\n' "${listed[@]}" | grep -E -- '-dev$' || true)
expect "no -dev package in the final stage" "" "$dev"

# What the binaries need: the package of each library ldd resolves.
if command -v dpkg >/dev/null && command -v ldd >/dev/null; then
  needed=$(for b in "$TFD" "$TFCTL"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u |
    while read -r lib; do
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null
    done | cut -d: -f1 | sort -u)
  # In debian:12-slim already (apt needs them).
  base="libc6 libgcc-s1 libstdc++6"
  want=$(for p in $needed; do [[ " $base " == *" $p "* ]] || echo "$p"; done | sort -u | tr '\n' ' ')
  expect "the final stage installs exactly the packages of tfd's and tfctl's libraries" \
    "$want" "$(printf '%s\n' "${listed[@]}" | tr '\n' ' ')"
else
  skip "the final stage installs exactly the packages of tfd's and tfctl's libraries" "no dpkg or ldd here"
fi
expect "it copies the installed binaries" "COPY --from=build /staging/usr/bin/ /usr/bin/" \
  "$(grep -m1 '^COPY --from=build /staging/usr/bin/' <<<"$final")"
uid=$(sed -nE 's/^USER ([0-9]+):[0-9]+$/\1/p' <<<"$final")
k8s_uid=$(grep -h 'runAsUser:' "$SRC"/deploy/k8s/*.yaml | awk '{print $2}' | sort -u | tr '\n' ' ')
expect "it runs as the unprivileged uid deploy/k8s's pods use" "$uid " "$k8s_uid"
[[ $uid -gt 0 && $final == *"useradd --system --uid $uid"* ]] &&
  pass "the image creates that user (uid $uid)" || fail "the image creates that user (uid '$uid')"

# build.sh with no working tool: skip, exit 77, a message saying so.
mkdir -p "$work/broken"
printf '#!/bin/sh\necho "Cannot connect to the Docker daemon" >&2\nexit 1\n' >"$work/broken/docker"
chmod +x "$work/broken/docker"
out=$(PATH=$work/broken:/usr/bin:/bin TFD_CONTAINER_TOOL="podman docker" bash "$BUILD_SH" 2>&1)
rc=$?
if [[ $rc -eq 77 && $out == *"skipped: no container tool can build here"* ]]; then
  pass "build.sh skips (exit 77) with a message when docker cannot reach its daemon and podman is absent"
else
  fail "build.sh skips with a message (exit $rc: $out)"
fi

# build.sh with a working (stand-in) tool: what it runs, and its context.
mkdir -p "$work/fake"
cat >"$work/fake/podman" <<FAKE
#!/usr/bin/env bash
[[ \$1 == info ]] && exit 0
echo "\$@" >"$work/podman.args"
context=\${@: -1}
(cd "\$context" && find . -type f | sort) >"$work/context.files"
FAKE
chmod +x "$work/fake/podman"
out=$(PATH=$work/fake:$PATH TFD_CONTAINER_TOOL=podman bash "$BUILD_SH" 2>&1)
rc=$?
args=$(cat "$work/podman.args" 2>/dev/null)
if [[ $rc -eq 0 && $args == "build -f "*"/deploy/container/Containerfile -t tfd:$VERSION "* ]]; then
  pass "build.sh runs 'podman build -f .../Containerfile -t tfd:$VERSION CONTEXT'"
else
  fail "build.sh runs podman build (exit $rc, args '$args', output '$out')"
fi
out=$(PATH=$work/fake:$PATH TFD_CONTAINER_TOOL=podman TFD_CPU=portable bash "$BUILD_SH" 2>&1)
rc=$?
args=$(cat "$work/podman.args" 2>/dev/null)
if [[ $rc -eq 0 && $args == "build -f "*" -t tfd:$VERSION --build-arg TFD_CPU=portable "* ]] &&
   grep -q '^ARG TFD_CPU=x86-64-v3$' "$FILE" && grep -q -- '-Dcpu="$TFD_CPU"' "$FILE"; then
  pass "TFD_CPU=portable reaches the image's -Dcpu as a build argument (default x86-64-v3)"
else
  fail "TFD_CPU=portable reaches the image's -Dcpu (exit $rc, args '$args', output '$out')"
fi
files=$(cat "$work/context.files" 2>/dev/null)
if grep -qx './meson.build' <<<"$files" && grep -qx './scripts/install-deps.sh' <<<"$files" &&
   grep -qx './deploy/container/Containerfile' <<<"$files" && ! grep -q '^\./build' <<<"$files" &&
   ! grep -q '^\./\.git/' <<<"$files"; then
  pass "the context holds the sources ($(wc -l <<<"$files") files), no build directory, no .git"
else
  fail "the context holds the sources, no build directory, no .git ($(head -c 300 <<<"$files"))"
fi

# A real build, when asked for and possible.
if [[ ${TFD_CONTAINER_BUILD:-} != 1 ]]; then
  skip "the image builds" "a full compile in the image (~15 min on 2 cores): TFD_CONTAINER_BUILD=1 to run it"
else
  out=$(bash "$BUILD_SH" "tfd:test-$$" 2>&1)
  rc=$?
  if [[ $rc -eq 77 ]]; then
    skip "the image builds" "$(tail -n1 <<<"$out")"
  elif [[ $rc -eq 0 ]]; then
    pass "the image builds (tfd:test-$$)"
  else
    fail "the image builds (exit $rc)"
    tail -n 30 <<<"$out" | sed 's/^/# /'
  fi
fi

tap_done
