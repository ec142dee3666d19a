"""What the session-lifetime tests share: this process's open fds, sockets
and OS threads (what a session holds shows there), a function run on a
thread of its own (joined at once, or later), and the small model they
train."""
import os
import threading
import time

import numpy as np
import tfd


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def open_sockets():
    links = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            links.append(os.readlink("/proc/self/fd/" + fd))
        except FileNotFoundError:  # the listing's own fd, closed since
            pass
    return sum(link.startswith("socket:") for link in links)


def os_threads():
    """This process's OS threads. A thread just joined may still be listed
    for a moment (the kernel wakes its joiner before it has removed it):
    read until two reads 10 ms apart agree, within a second."""
    count = len(os.listdir("/proc/self/task"))
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        time.sleep(0.01)
        again = len(os.listdir("/proc/self/task"))
        if again == count:
            return count
        count = again
    return count


def on_thread(fn, *args, timeout=120):
    """fn(*args) on a new thread, joined within `timeout` seconds; what it
    raised, or None."""
    raised = []

    def body():
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001 (the caller looks at what it is)
            raised.append(e)
    t = threading.Thread(target=body)
    t.start()
    t.join(timeout=timeout)
    assert not t.is_alive()
    return raised[0] if raised else None


def start_on_thread(fn, *args):
    """fn(*args) started on a new thread; returns join(timeout=60), which
    waits for the thread and returns what fn returned or raised."""
    outcome = []

    def body():
        try:
            outcome.append(fn(*args))
        except BaseException as e:  # noqa: BLE001 (the caller looks at what it is)
            outcome.append(e)
    t = threading.Thread(target=body)
    t.start()

    def join(timeout=60):
        t.join(timeout=timeout)
        assert not t.is_alive()
        assert len(outcome) == 1, outcome
        return outcome[0]
    return join


def build_model(cluster):
    """A two-weight model on the cluster's ps, with a global step."""
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.zeros(2, np.float32), name="w")
        loss = tfd.reduce_sum(tfd.square(w - 3.0), name="loss")
        tfd.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
