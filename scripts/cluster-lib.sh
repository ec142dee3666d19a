# Bash functions for scripts that start a local tfd cluster on loopback:
# free ports, a cluster spec over them, and a task's address in it.
#   source scripts/cluster-lib.sh
#   cluster_spec ps=1 worker=2; tfctl start --cluster "$spec" ...
#   tfctl train ... --target "$(address worker 0)"

# A TCP port on 127.0.0.1 that nothing listens on right now, below the
# kernel's ephemeral range: a port inside it can be taken as the source port
# of any outgoing connection (another test's, a daemon's) before tfd binds
# it, and the task then exits with "address in use".
free_port() {
  local port low=32768
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  local first=10000
  (( low - first < 1000 )) && first=1024
  for _ in $(seq 1 200); do
    port=$(( first + RANDOM % (low - first) ))
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
