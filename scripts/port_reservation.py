"""Loopback ports reserved for a process that starts local tfd daemons (the
Python tests, examples/python/walkthroughs), by the rule that everything
picking such ports follows (written once, in bench/port_reservation.h): a
port below the kernel's ephemeral range, held by an exclusive flock on
${TMPDIR:-/tmp}/tfd-test-ports/PORT and bound once to check that it is free.
Here the lock is held until the process exits; the kernel drops it then,
however the process ends. It needs only the standard library.
scripts/port-reservation.sh is the same for bash.

    port = reserve_port()          # any free port, held from now on
    try_reserve_port(port) -> False  # held: refused, even to this process
"""
import errno
import fcntl
import os
import random
import socket

_ATTEMPTS = 1000
# Its own generator: a test that seeds `random` must not make two processes
# draw the same candidates.
_rng = random.SystemRandom()
# Lock files of the ports this process holds, open until it exits.
_held = []


def lock_directory():
    """The directory of the lock files, shared by all tests on the machine."""
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", "tfd-test-ports")


def _candidates():
    """Rule 1: from 10000 (or 1024) up to the ephemeral range's first port."""
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return (10000 if low - 10000 >= 1000 else 1024), low


def _ensure_directory(path):
    try:
        os.mkdir(path, 0o1777)
    except FileExistsError:
        return
    os.chmod(path, 0o1777)  # mkdir's mode went through the umask


def _bind_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def try_reserve_port(port):
    """Reserves `port` for this process if no one holds it and nothing is
    bound to it; says whether it did."""
    directory = lock_directory()
    _ensure_directory(directory)
    try:
        fd = os.open(os.path.join(directory, str(port)), os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        return False  # another user's lock file: theirs
    try:
        os.fchmod(fd, 0o666)
    except PermissionError:
        pass
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    if not _bind_free(port):
        os.close(fd)
        return False
    _held.append(fd)  # os.open makes it close-on-exec: daemons do not inherit it
    return True


def reserve_port():
    """A free port on 127.0.0.1 below the ephemeral range, reserved for the
    life of this process."""
    first, end = _candidates()
    for _ in range(_ATTEMPTS):
        port = _rng.randrange(first, end)
        if try_reserve_port(port):
            return port
    raise RuntimeError("no free port on 127.0.0.1 in %d..%d after %d tries (lock directory %s)"
                       % (first, end - 1, _ATTEMPTS, lock_directory()))
