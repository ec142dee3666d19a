# Bash functions that reserve TCP ports on 127.0.0.1 for a shell script, by
# the rule everything that picks ports for local daemons follows (written
# once, in bench/port_reservation.h; scripts/port_reservation.py is the same
# for Python): a port below the kernel's ephemeral range, held by an
# exclusive flock on ${TMPDIR:-/tmp}/tfd-test-ports/PORT, and checked free
# (here by a connection that is refused: bash cannot bind).
# scripts/cluster-lib.sh sources this file; its free_port is the one to call.
#
#   source scripts/port-reservation.sh
#   port=$(reserve_port)          # held until this shell is gone
#   try_reserve_port 12345 || echo "taken"
#
# A lock taken in a subshell such as $(reserve_port) would end with it, so
# each port's lock is kept by a small holder process, which exits, and the
# kernel drops its lock, when it reads end-of-file from a lifeline: a FIFO
# that this shell holds open for writing from the moment it sources this
# file. End-of-file comes once this shell has exited, however it exits
# (SIGKILL included), together with every process it started that inherited
# the lifeline (a daemon started from the script, say): while those run, the
# ports stay reserved.

_tfd_ports_dir="${TMPDIR:-/tmp}/tfd-test-ports"

# Opens the lifeline in this shell: $_tfd_ports_alive writes (the holders
# close their copy), $_tfd_ports_watch reads (the holders wait on it).
_tfd_ports_open_lifeline() {
  local dir
  dir=$(mktemp -d) || return 1
  if ! mkfifo "$dir/lifeline"; then
    rm -rf "$dir"
    return 1
  fi
  # Read-write first: opening a FIFO for reading alone would wait for a writer.
  exec {_tfd_ports_alive}<>"$dir/lifeline"
  exec {_tfd_ports_watch}<"$dir/lifeline"
  rm -rf "$dir"
}
if [[ -z ${_tfd_ports_alive:-} ]]; then
  _tfd_ports_open_lifeline || echo "port-reservation.sh: cannot open the lifeline FIFO" >&2
fi

# try_reserve_port PORT: reserves PORT if no one holds it and nothing listens
# on it; the status says whether it did.
try_reserve_port() {
  local port="$1" file="$_tfd_ports_dir/$1" lock
  [[ -n ${_tfd_ports_watch:-} ]] || return 1
  if [[ ! -d $_tfd_ports_dir ]]; then
    mkdir -p "$_tfd_ports_dir" 2>/dev/null && chmod 1777 "$_tfd_ports_dir" 2>/dev/null
  fi
  if [[ ! -e $file ]]; then
    : >>"$file" 2>/dev/null && chmod 666 "$file" 2>/dev/null
  fi
  { exec {lock}>>"$file"; } 2>/dev/null || return 1  # another user's file: theirs
  if ! flock -n "$lock" || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    exec {lock}>&-
    return 1
  fi
  # The holder inherits $lock, and with it the lock; started from a subshell
  # so that it is never a child this shell would `wait` for.
  ( (exec {_tfd_ports_alive}>&-; read -r -u "$_tfd_ports_watch" _) & ) \
    </dev/null >/dev/null 2>&1
  exec {lock}>&-
}

# reserve_port: prints a port reserved by try_reserve_port, drawn at random
# below the ephemeral range.
reserve_port() {
  local port low=32768 first=10000
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  (( low - first < 1000 )) && first=1024
  for _ in $(seq 1 1000); do
    port=$(( first + ${SRANDOM:-$RANDOM} % (low - first) ))
    if try_reserve_port "$port"; then
      echo "$port"
      return 0
    fi
  done
  echo "reserve_port: no free port on 127.0.0.1 in $first..$((low - 1)) (lock directory $_tfd_ports_dir)" >&2
  return 1
}
