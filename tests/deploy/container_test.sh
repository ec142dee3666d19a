#!/usr/bin/env bash
# deploy/container: the Containerfile's stages are on one Debian 12 point
# release, by digest when the build arguments give one; the final stage has
# exactly the packages of the shared libraries tfd and tfctl link (ldd of
# the built binaries, dpkg -S) or load (OpenBLAS), no -dev package, one C++
# runtime in each binary (never the shared one beside a linked-in copy), an unprivileged user with
# the uid deploy/k8s runs as, OCI labels, and a HEALTHCHECK whose command
# (tfctl health) passes against a real tfd configured as the image is and
# fails without one; build.sh skips (77, with a message) where no
# container tool works and otherwise runs `TOOL build` on a context without
# build directories (a stand-in tool records what it was asked). A real
# build takes a full compile (~15 min on 2 cores): it runs only with
# TFD_CONTAINER_BUILD=1 and a working podman or docker, and is reported as
# skipped otherwise. Output is TAP, for meson.
#
#   SRC_ROOT=. TFD=build/daemon/tfd TFCTL=build/cli/tfctl VERSION=0.1.0 LICENSE_ID=Apache-2.0 \
#     bash tests/deploy/container_test.sh
set -u

SRC=$(realpath "${SRC_ROOT:?set SRC_ROOT to the source tree}")
: "${TFD:?}" "${TFCTL:?}" "${VERSION:?}" "${LICENSE_ID:?}"
FILE=$SRC/deploy/container/Containerfile
BUILD_SH=$SRC/deploy/container/build.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

# The final stage: from its FROM line to the end, continuation lines joined.
final=$(awk '/^FROM /{stage=$0; body=""} {body=body $0 "\n"} END{printf "%s", body}' "$FILE" |
        sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
# Both stages on the same Debian 12 point release, each by digest when its
# build argument gives one (declared before the first FROM, where FROM sees
# it); bash expands ${X:+@}${X} as the Containerfile's parser does.
first_from=$(grep -m1 '^FROM' "$FILE")
final_from=$(grep -m1 '^FROM' <<<"$final")
release=$(sed -nE 's/^FROM debian:(12\.[0-9]+)\$\{DEBIAN_DIGEST:\+@\}\$\{DEBIAN_DIGEST\} AS build$/\1/p' <<<"$first_from")
if [[ -n $release &&
      $final_from == "FROM debian:$release-slim\${DEBIAN_SLIM_DIGEST:+@}\${DEBIAN_SLIM_DIGEST}" ]] &&
   grep -q '^ARG DEBIAN_DIGEST=""$' <(sed '/^FROM/q' "$FILE") &&
   grep -q '^ARG DEBIAN_SLIM_DIGEST=""$' <(sed '/^FROM/q' "$FILE"); then
  pass "the stages build on debian:$release and debian:$release-slim, by digest when given"
else
  fail "the stages build on one debian:12.N release with digest arguments ('$first_from', '$final_from')"
fi
render() {  # render FROM-LINE DIGEST-ARG VALUE: the image reference FROM names
  local DEBIAN_DIGEST="" DEBIAN_SLIM_DIGEST=""
  printf -v "$2" '%s' "$3"
  eval "echo \"${1#FROM }\"" | cut -d' ' -f1
}
expect "without a digest the final stage is the tag" "debian:$release-slim" \
  "$(render "$final_from" DEBIAN_SLIM_DIGEST "")"
expect "with one it is tag@digest" "debian:$release-slim@sha256:0123" \
  "$(render "$final_from" DEBIAN_SLIM_DIGEST sha256:0123)"
expect "and so is the first stage" "debian:$release@sha256:4567" \
  "$(render "$first_from" DEBIAN_DIGEST sha256:4567)"
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
  # With the OpenBLAS that tfd loads by its first product (not linked, so
  # not in ldd's list): the one in tfd's run path, and what it links.
  blas_dir=$(readelf -d "$TFD" 2>/dev/null | sed -nE 's/.*RUNPATH.*\[(.*openblas-serial)\].*/\1/p')
  blas=${blas_dir:+$blas_dir/libopenblas.so.0}
  needed=$({ for b in "$TFD" "$TFCTL"; do ldd "$b"; done
             if [[ -n $blas && -e $blas ]]; then echo "blas => $blas"; ldd "$blas"; fi; } |
    awk '/=> \//{print $3}' | sort -u |
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
# A binary with the C++ runtime linked in (-Dstatic_deps) must not load the
# shared one as well through a library left shared: two runtimes in one
# process disagree on exceptions, allocation and iostreams.
if command -v readelf >/dev/null && command -v ldd >/dev/null; then
  for b in "$TFD" "$TFCTL"; do
    name=$(basename "$b")
    if readelf -d "$b" | grep -q 'NEEDED.*libstdc++'; then
      pass "$name links the shared C++ runtime (-Dstatic_deps=false), so one copy"
    else
      expect "$name carries the C++ runtime and loads no shared copy of it" "" \
        "$(ldd "$b" | awk '/libstdc\+\+/{print $1}')"
    fi
  done
else
  skip "tfd and tfctl load one C++ runtime" "no readelf or ldd here"
fi
expect "it copies the installed binaries" "COPY --from=build /staging/usr/bin/ /usr/bin/" \
  "$(grep -m1 '^COPY --from=build /staging/usr/bin/' <<<"$final")"
uid=$(sed -nE 's/^USER ([0-9]+):[0-9]+$/\1/p' <<<"$final")
k8s_uid=$(grep -h 'runAsUser:' "$SRC"/deploy/k8s/*.yaml | awk '{print $2}' | sort -u | tr '\n' ' ')
expect "it runs as the unprivileged uid deploy/k8s's pods use" "$uid " "$k8s_uid"
[[ $uid -gt 0 && $final == *"useradd --system --uid $uid"* ]] &&
  pass "the image creates that user (uid $uid)" || fail "the image creates that user (uid '$uid')"

# OCI labels on the image.
for key in title description version revision licenses; do
  if grep -Eq "org\.opencontainers\.image\.$key=\"[^\"]+\"" <<<"$final"; then
    pass "the image has the OCI label org.opencontainers.image.$key"
  else
    fail "the image has the OCI label org.opencontainers.image.$key"
  fi
done
expect "its licenses label is meson.build's license" "$LICENSE_ID" \
  "$(sed -nE 's/.*org\.opencontainers\.image\.licenses="([^"]+)".*/\1/p' <<<"$final")"

# The health check: tfctl health, run here as the container would run it
# (exec form, PATH's tfctl, tfd configured by TFD_* variables) against a
# real tfd, then against none.
health=$(grep -m1 '^HEALTHCHECK ' <<<"$final")
cmd_json=$(sed -nE 's/.* CMD (\[.*\])$/\1/p' <<<"$health")
mapfile -t probe < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' \
                       "$cmd_json" 2>/dev/null)
docker_timeout=$(sed -nE 's/.*--timeout=([0-9]+)s.*/\1/p' <<<"$health")
probe_timeout=$(for ((i = 0; i < ${#probe[@]}; i++)); do
                  [[ ${probe[i]} == --timeout ]] && echo "${probe[i + 1]}"; done)
if [[ ${probe[0]:-} == tfctl && ${probe[1]:-} == health && -n $docker_timeout &&
      -n $probe_timeout && $probe_timeout -lt $docker_timeout ]]; then
  pass "HEALTHCHECK runs tfctl health (exec form) and it gives up (${probe_timeout} s) inside Docker's --timeout (${docker_timeout} s)"
else
  fail "HEALTHCHECK runs tfctl health, giving up inside Docker's --timeout ('$health')"
fi
source "$SRC/scripts/cluster-lib.sh"
cluster_spec ps=1
mkdir -p "$work/bin"
ln -s "$(realpath "$TFCTL")" "$work/bin/tfctl"
image_env=(env -i "PATH=$work/bin:/usr/bin:/bin" "TFD_CLUSTER=$spec" TFD_JOB=ps TFD_TASK=0)
"${image_env[@]}" "$TFD" --threads 1 >"$work/tfd.log" 2>&1 </dev/null &
tfd_pid=$!
# The first probe may come before tfd listens: Docker's --start-period is
# for that, and the probe itself waits up to its --timeout.
healthy=1
for _ in 1 2 3 4 5 6; do
  if "${image_env[@]}" "${probe[@]}" >"$work/probe.out" 2>&1; then healthy=0; break; fi
done
if [[ $healthy -eq 0 && $(cat "$work/probe.out") == "ok: /job:ps/replica:0/task:0 serving at "* ]]; then
  pass "the health check passes while tfd serves"
else
  fail "the health check passes while tfd serves ($(cat "$work/probe.out"); tfd: $(tail -n3 "$work/tfd.log"))"
fi
kill "$tfd_pid" 2>/dev/null
wait "$tfd_pid" 2>/dev/null
"${image_env[@]}" "${probe[@]}" >"$work/probe.out" 2>&1
rc=$?
if [[ $rc -ne 0 && $(cat "$work/probe.out") == "error: UNAVAILABLE: health of "* ]]; then
  pass "the health check fails (exit $rc) once tfd is gone, saying why"
else
  fail "the health check fails once tfd is gone (exit $rc: $(cat "$work/probe.out"))"
fi

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
if [[ $rc -eq 0 && $args == "build -f "*" -t tfd:$VERSION "* && $args == *" --build-arg TFD_CPU=portable "* ]] &&
   grep -q '^ARG TFD_CPU=x86-64-v3$' "$FILE" && grep -q -- '-Dcpu="$TFD_CPU"' "$FILE"; then
  pass "TFD_CPU=portable reaches the image's -Dcpu as a build argument (default x86-64-v3)"
else
  fail "TFD_CPU=portable reaches the image's -Dcpu (exit $rc, args '$args', output '$out')"
fi
revision=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
if [[ $args == *" --build-arg TFD_VERSION=$VERSION "* && $args == *" --build-arg TFD_REVISION=$revision "* ]]; then
  pass "build.sh passes the version and the commit for the OCI labels"
else
  fail "build.sh passes the version and the commit for the OCI labels (args '$args')"
fi
out=$(PATH=$work/fake:$PATH TFD_CONTAINER_TOOL=podman TFD_DEBIAN_DIGEST=sha256:aa \
      TFD_DEBIAN_SLIM_DIGEST=sha256:bb bash "$BUILD_SH" 2>&1)
args=$(cat "$work/podman.args" 2>/dev/null)
if [[ $args == *" --build-arg DEBIAN_DIGEST=sha256:aa "* && $args == *" --build-arg DEBIAN_SLIM_DIGEST=sha256:bb "* ]]; then
  pass "build.sh passes TFD_DEBIAN_DIGEST and TFD_DEBIAN_SLIM_DIGEST as the digest arguments"
else
  fail "build.sh passes the digest arguments (args '$args', output '$out')"
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
