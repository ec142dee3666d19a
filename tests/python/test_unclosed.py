"""Sessions dropped without close(), as TF1 scripts drop theirs (sweeps,
notebooks, tests; tf.Session.__del__ closes them): what a session held (its
connection, its thread, its event loop: counted as the process's open fds
and threads) goes when Python collects it, on whichever thread collects it,
and the collecting thread never waits on a task that is stopped."""
import gc
import queue
import signal
import threading

import numpy as np
import tfd
from process_helpers import build_model, on_thread, open_fds, os_threads


def counts():
    """(open fds, OS threads) of this process."""
    return open_fds(), os_threads()


def assert_back_to(before):
    fds, threads = counts()
    assert fds <= before[0] + 1 and threads <= before[1] + 1, (before, (fds, threads))


def run_on_thread(fn):
    """fn() on a new thread, joined; raises what it raised."""
    raised = on_thread(fn, timeout=300)
    if raised is not None:
        raise raised


def test_dropped_remote_sessions_free_their_connection_and_thread(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    address = cluster.address("worker", 0)
    y = tfd.constant(np.arange(4, dtype=np.float32)) * 2.0
    with tfd.Session(address, timeout=60) as warm:
        warm.run(y)  # what the first session loads once is not counted
    del warm
    before = counts()
    for i in range(20):
        sess = tfd.Session(address, timeout=60)
        np.testing.assert_array_equal(sess.run(y), [0, 2, 4, 6])
        if i % 2:
            sess.cycle = sess  # only the garbage collector frees it (below, on another thread)
        held = [sess]
        del sess
        if i % 4 == 2:
            run_on_thread(held.clear)  # its last reference goes on that thread
        del held
    run_on_thread(gc.collect)
    assert_back_to(before)


def test_monitored_sessions_dropped_on_another_thread_are_freed(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    build_model(cluster)
    address = cluster.address("worker", 0)

    def make(i):
        # Python hooks make a reference cycle: then the collector frees it.
        hooks = [tfd.train.SessionRunHook()] if i % 2 else None
        sess = tfd.train.MonitoredTrainingSession(address, timeout=60, hooks=hooks)
        sess.run("train")
        return sess

    make(0).close()
    before = counts()
    # One thread makes them one after another; this one drops each while
    # that thread lives on and makes the next.
    handed, dropped = queue.Queue(), queue.Queue()

    def home():
        for i in range(20):
            handed.put(make(i))
            dropped.get(timeout=120)
    maker = threading.Thread(target=home)
    maker.start()
    for _ in range(20):
        sess = handed.get(timeout=120)
        del sess
        gc.collect()
        dropped.put(None)
    maker.join(timeout=120)
    assert not maker.is_alive()
    # Made by threads that have ended when this one drops them.
    for i in range(4):
        made = []
        run_on_thread(lambda i=i: made.append(make(i)))
        made.clear()
        gc.collect()
    assert_back_to(before)


def test_sessions_dropped_while_their_task_is_stopped_do_not_wait_for_it(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    build_model(cluster)
    address = cluster.address("worker", 0)
    task = cluster.procs[("worker", 0)][0]
    deadline = 5.0  # the sessions' own: connecting and each call
    made, stopped, raised = threading.Event(), threading.Event(), []

    def home():
        try:
            monitored = tfd.train.MonitoredTrainingSession(address, timeout=deadline,
                                                           step_timeout=deadline)
            monitored.run("train")  # the chief has initialized the variables
            sess = tfd.Session(address, timeout=deadline)
            sess.run("loss:0")
        except BaseException as e:  # noqa: BLE001 (the test raises it)
            raised.append(e)
            return
        finally:
            made.set()
        stopped.wait(timeout=120)
        del sess, monitored  # dropped unclosed, by the thread that made them
    dropper = threading.Thread(target=home)
    dropper.start()
    assert made.wait(timeout=120)
    if raised:
        raise raised[0]
    task.send_signal(signal.SIGSTOP)
    try:
        stopped.set()
        dropper.join(timeout=deadline)
        assert not dropper.is_alive(), "dropping the sessions waited for the stopped task"
    finally:
        task.send_signal(signal.SIGCONT)
        dropper.join(timeout=120)
