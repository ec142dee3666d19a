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

# A TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# cluster_spec ps=2 worker=3 -> JSON spec on free ports, also kept in $spec.
cluster_spec() {
  local json="{" sep="" job n i addrs
  for arg in "$@"; do
    job="${arg%%=*}"; n="${arg##*=}"; addrs=""
    for i in $(seq 1 "$n"); do
      addrs="$addrs${addrs:+, }\"127.0.0.1:$(free_port)\""
    done
    json="$json$sep\"$job\": [$addrs]"; sep=", "
  done
  spec="$json}"
}

# The address of JOB's task N in $spec.
address() {
  local job="$1" n="$2"
  echo "$spec" | sed -E "s/.*\"$job\": \[([^]]*)\].*/\1/" | tr -d ' "' | cut -d, -f$((n + 1))
}

# Background jobs started with `background CMD...`. stop_cluster waits for
# them rather than killing them: each is bounded, and a tfctl start killed
# half-way could leave a tfd behind that nothing stops.
background_pids=()
background() {
  "$@" &
  background_pids+=($!)
}

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
