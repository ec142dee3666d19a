# Shared by the walkthrough scripts: find the binaries, pick free loopback
# ports, start a local cluster with tfctl and always stop it on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
TFCTL="${TFCTL:-$root/build/cli/tfctl}"
TFD="${TFD:-$root/build/daemon/tfd}"
export TFD
run_dir="$(mktemp -d /tmp/tfd-walkthrough-XXXXXX)"
spec=""
# free_port, cluster_spec, address.
source "$root/scripts/cluster-lib.sh"

stop_cluster() {
  for pid in "${background_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "$spec" ] && "$TFCTL" stop --cluster "$spec" --run-dir "$run_dir" >/dev/null 2>&1 || true
  rm -rf "$run_dir"
}
trap stop_cluster EXIT

start_cluster() {
  "$TFCTL" start --cluster "$spec" --run-dir "$run_dir" "$@" >/dev/null
}

# Runs CMD..., keeping its exit status in $status, its stdout in $out and its
# stderr in $err, without stopping the script when it fails.
capture() {
  local err_file="$run_dir/stderr.$$"
  set +e
  out=$("$@" 2>"$err_file")
  status=$?
  set -e
  err=$(cat "$err_file")
  rm -f "$err_file"
}

# Fails the script with a message unless "$1" contains "$2".
expect() {
  if [[ "$1" != *"$2"* ]]; then
    echo "FAILED: expected to see '$2' in:" >&2
    echo "$1" >&2
    exit 1
  fi
}
