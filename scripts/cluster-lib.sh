# Bash functions for scripts that start a local tfd cluster on loopback:
# free ports, a cluster spec over them, and a task's address in it.
#   source scripts/cluster-lib.sh
#   cluster_spec ps=1 worker=2; tfctl start --cluster "$spec" ...
#   tfctl train ... --target "$(address worker 0)"

source "$(dirname "${BASH_SOURCE[0]}")/port-reservation.sh"

# A TCP port on 127.0.0.1 that nothing listens on and no other test or
# script can draw until this shell is gone (scripts/port-reservation.sh).
free_port() {
  reserve_port
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
