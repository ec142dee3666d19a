#!/usr/bin/env bash
# Builds the tfd image from deploy/container/Containerfile with podman, or
# docker, whichever can build here (TFD_CONTAINER_TOOL names one).
#
#   deploy/container/build.sh [TAG]      # default tag: tfd:<meson.build's version>
#   TFD_CPU=portable deploy/container/build.sh   # meson's -Dcpu (default x86-64-v3)
#   TFD_DEBIAN_DIGEST=sha256:... TFD_DEBIAN_SLIM_DIGEST=sha256:... deploy/container/build.sh
#                                        # base images by digest (the Containerfile says how
#                                        # to look them up)
#
# The image's OCI labels get meson.build's version and the git commit.
#
# The build context is the source tree as git sees it (tracked and
# untracked files that are not ignored), copied to a temporary directory,
# so build directories and other local files stay out of the image.
#
# Exit status: 0 built; 77 skipped, with a message, when no container tool
# can build on this machine (none installed, or docker without a running
# daemon); 1 when the build failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

version=$(sed -nE "s/^ *version *: *'([^']+)'.*/\1/p" "$root/meson.build" | head -n1)
tag=${1:-tfd:$version}

tool=""
for candidate in ${TFD_CONTAINER_TOOL:-podman docker}; do
  # `info` needs the daemon (docker) or a usable storage (podman).
  if command -v "$candidate" >/dev/null && "$candidate" info >/dev/null 2>&1; then
    tool=$candidate
    break
  fi
done
if [[ -z $tool ]]; then
  echo "build.sh: skipped: no container tool can build here (tried: ${TFD_CONTAINER_TOOL:-podman docker}; installed but not working counts as none, e.g. docker without its daemon)" >&2
  exit 77
fi

context=$(mktemp -d "${TMPDIR:-/tmp}/tfd-image.XXXXXX")
trap 'rm -rf "$context"' EXIT
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # Files deleted locally but still in git's index are left out.
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do if [[ -e $f ]]; then printf '%s\0' "$f"; fi; done |
     xargs -0 cp --parents -t "$context")
else
  tar -C "$root" --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$context" -xf -
fi

echo "build.sh: building $tag with $tool"
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
build_args=(--build-arg "TFD_VERSION=$version" --build-arg "TFD_REVISION=$revision")
[[ -n ${TFD_CPU:-} ]] && build_args+=(--build-arg "TFD_CPU=$TFD_CPU")
[[ -n ${TFD_DEBIAN_DIGEST:-} ]] && build_args+=(--build-arg "DEBIAN_DIGEST=$TFD_DEBIAN_DIGEST")
[[ -n ${TFD_DEBIAN_SLIM_DIGEST:-} ]] &&
  build_args+=(--build-arg "DEBIAN_SLIM_DIGEST=$TFD_DEBIAN_SLIM_DIGEST")
"$tool" build -f "$context/deploy/container/Containerfile" -t "$tag" "${build_args[@]}" "$context"
echo "build.sh: built $tag"
