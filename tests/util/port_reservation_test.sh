#!/usr/bin/env bash
# The shell and Python reservations (scripts/port-reservation.sh,
# scripts/port_reservation.py) follow the one rule of
# bench/port_reservation.h (the C++ side: tests/bench/port_reservation_test.cc):
# processes of both languages drawing ports at the same time never hold the
# same one, and a holder killed with SIGKILL leaves its ports free. Output
# is TAP, for meson.
#
#   SRC_ROOT=. PYTHON=python3 bash tests/util/port_reservation_test.sh
set -u

SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
holders=()  # the processes that hold ports
cleanup() {
  [[ ${#holders[@]} -eq 0 ]] || kill -KILL "${holders[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Ports each holder draws. The shell's are dearer (a few processes each);
# the Python holder draws many, so that two holders drawing at random
# without reserving would share a port almost surely (about 8 on average).
shell_ports=60
python_ports=1500

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }

# shell_holder: reserves $shell_ports ports, prints them and "done", and
# holds them until killed. It replaces the caller's process, so that the
# process substitution's $! is the holder itself.
shell_holder() {
  exec bash -c 'source "$1/scripts/port-reservation.sh"
           for _ in $(seq 1 "$2"); do reserve_port || exit 1; done
           echo done
           exec sleep 600' _ "$SRC" "$shell_ports"
}
# python_holder: the same with scripts/port_reservation.py.
python_holder() {
  PYTHONPATH="$SRC/scripts" exec "$PYTHON" -c '
import signal, sys
from port_reservation import reserve_port
for _ in range(int(sys.argv[1])):
    print(reserve_port())
print("done", flush=True)
signal.pause()' "$python_ports"
}
# collect NAME FD: reads NAME's ports from FD into $work/NAME until it says
# done, waiting at most 60 s for each line.
collect() {
  local line
  : >"$work/$1"
  while read -r -t 60 -u "$2" line; do
    [[ $line == done ]] && return 0
    echo "$line" >>"$work/$1"
  done
  return 1
}

# All three start drawing at once; each reports on a pipe of its own.
names=(shell_a shell_b python)
exec {from_shell_a}< <(shell_holder)
holders+=($!)
exec {from_shell_b}< <(shell_holder)
holders+=($!)
exec {from_python}< <(python_holder)
holders+=($!)
for name in "${names[@]}"; do
  fd_name="from_$name"
  if collect "$name" "${!fd_name}"; then
    ok "$name reserved its ports"
  else
    not_ok "$name reserved its ports" "it stopped after $(wc -l <"$work/$name")"
  fi
done

# Each port once among all the holders' while all hold theirs.
shared=$(cat "${names[@]/#/$work/}" | sort | uniq -d)
if [[ -z $shared ]]; then
  ok "shell and Python holders drawing at once never hold the same port"
else
  not_ok "shell and Python holders drawing at once never hold the same port" \
    "held twice: $(echo $shared)"
fi

# SIGKILL to every holder: the kernel drops the locks (the shell's once its
# helpers see the lifeline end), so each port can be locked again.
kill -KILL "${holders[@]}"
wait "${holders[@]}" 2>/dev/null
holders=()
lock_dir="${TMPDIR:-/tmp}/tfd-test-ports"
# free_within_30s FILE: locks each port of FILE in turn, waiting for it.
free_within_30s() {
  "$PYTHON" -c '
import fcntl, os, signal, sys
signal.alarm(30)  # the deadline: SIGALRM ends the process if a lock never comes
for port in open(sys.argv[2]).read().split():
    fd = os.open(os.path.join(sys.argv[1], port), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.close(fd)
' "$lock_dir" "$1"
}
for name in "${names[@]}"; do
  if free_within_30s "$work/$name"; then
    ok "$name's ports are free once it is killed with SIGKILL"
  else
    not_ok "$name's ports are free once it is killed with SIGKILL" "not all within 30 s"
  fi
done

echo "1..$n"
exit $failed
