"""Ctrl-C reaches a Python program blocked in a step or a wait: SIGINT to a
program blocked in a dequeue from an empty queue (in process, on a ps,
in a MonitoredTrainingSession's step) or in a MonitoredTrainingSession
waiting for a ps that is down raises KeyboardInterrupt there, long before
the wait's own deadline, and the interrupted step takes nothing."""
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np

import tfd

# Each wait below would last 600 s on its own; the test gives the program
# 60 s to answer SIGINT (Program.line), which only a wait that sees the
# signal can meet.
PROGRAM = r'''
import sys
import numpy as np
import tfd

target, what = sys.argv[1], sys.argv[2]
if what == "local":
    q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]], name="q")
    [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
    put = tfd.raw_ops.queue_enqueue(q, [tfd.constant(7.0)])
    with tfd.Session() as sess:
        print("waiting", 0, flush=True)
        try:
            sess.run(take, timeout=600)
            print("returned", flush=True)
        except KeyboardInterrupt:
            print("interrupted", 0, flush=True)
        sess.run(put)  # the session goes on, and the queue has lost nothing
        print("then", sess.run(take, timeout=30), flush=True)
elif what == "run":
    with tfd.device("/job:ps/task:0"):
        q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]],
                                   shared_name="jobs", name="q")
        [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
    for attempt in range(2):  # a second session after the first was interrupted
        sess = tfd.Session(target, timeout=60)
        step = sess.make_callable(take) if attempt else None
        print("waiting", attempt, flush=True)
        try:
            step() if step else sess.run(take, timeout=600)
            print("returned", flush=True)
        except KeyboardInterrupt:
            print("interrupted", attempt, flush=True)
        try:
            sess.run(take, timeout=600)
        except Exception as e:  # the interrupt closed the session
            print("then", type(e).__name__, flush=True)
        sess.close()
else:
    with tfd.device("/job:ps/task:0"):
        w = tfd.Variable(np.zeros(2, np.float32), name="w")
        global_step = tfd.train.get_or_create_global_step()
        q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]],
                                   shared_name="jobs", name="q")
        [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
    tfd.train.GradientDescentOptimizer(0.1).minimize(tfd.reduce_sum(tfd.square(w)),
                                                     global_step=global_step)
    stage = 0
    print("waiting", stage, flush=True)
    try:
        # With its ps down, the session waits for it here.
        sess = tfd.train.MonitoredTrainingSession(target, is_chief=True, max_wait_secs=600,
                                                  timeout=60, step_timeout=600)
        stage = 1
        print("waiting", stage, flush=True)
        sess.run(take)  # a step blocked on the empty queue
        print("returned", flush=True)
    except KeyboardInterrupt:
        print("interrupted", stage, flush=True)
'''


class Program:
    """PROGRAM in a process of its own; its output lines as they come, each
    waited for at most 60 s."""

    def __init__(self, cluster, what):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PROGRAM, cluster.address("worker", 0) if cluster else "", what],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("(exit %d)" % self.proc.wait())

    def line(self):
        try:
            return self.lines.get(timeout=60).split()
        except queue.Empty:
            return ["(silent for 60 s)"]

    def interrupt_when(self, attempt, ready, settle_s=0.0):
        """SIGINT once it printed "waiting `attempt`", `settle_s` passed and
        ready() holds; it must say it was interrupted."""
        assert self.line() == ["waiting", str(attempt)]
        time.sleep(settle_s)
        deadline = time.monotonic() + 30  # only stops a hang
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready()
        self.proc.send_signal(signal.SIGINT)
        assert self.line() == ["interrupted", str(attempt)]

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


def _check_queue_intact(cluster):
    """The queue "jobs" on the ps is empty and works: the interrupted
    dequeues are gone from the ps and took nothing."""
    with tfd.device("/job:ps/task:0"):
        q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]],
                                   shared_name="jobs", name="q")
        [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
        put = tfd.raw_ops.queue_enqueue(q, [tfd.constant(7.0)])
        size = tfd.raw_ops.queue_size(q)
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(put)
        assert sess.run(size) == 1
        assert sess.run(take, timeout=30) == np.float32(7.0)


def test_ctrl_c_cancels_an_in_process_step_blocked_on_a_queue_and_the_session_goes_on():
    program = Program(None, "local")
    try:
        program.interrupt_when(0, lambda: True, settle_s=2.0)  # the step is blocked by then
        assert program.line() == ["then", "7.0"]
        assert program.line() == ["(exit", "0)"]
    finally:
        program.stop()


def test_ctrl_c_ends_a_remote_step_blocked_on_a_queue_twice_in_a_row(cluster_factory):
    # A callable's steps have the task's deadline.
    cluster = cluster_factory({"ps": 1, "worker": 1}, ["--step-timeout", "600"])
    program = Program(cluster, "run")
    try:
        for attempt in range(2):  # Session.run, then a callable on a new session
            program.interrupt_when(attempt, lambda: cluster.registered_graphs("ps") == 1)
            assert program.line() == ["then", "FailedPreconditionError"]
        assert program.line() == ["(exit", "0)"]
    finally:
        program.stop()
    _check_queue_intact(cluster)


def test_ctrl_c_ends_a_monitored_session_waiting_for_a_ps_that_is_down(cluster_factory):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    cluster.stop("ps", 0)
    program = Program(cluster, "monitored")
    try:
        # Two seconds after it began, the session has long connected to its
        # worker and waits for the cluster (a signal before the wait would
        # interrupt Python itself, not the wait).
        program.interrupt_when(0, lambda: True, settle_s=2.0)
        assert program.line() == ["(exit", "0)"]
    finally:
        program.stop()


def test_ctrl_c_ends_a_monitored_sessions_step_blocked_on_a_queue(cluster_factory):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    program = Program(cluster, "monitored")
    try:
        assert program.line() == ["waiting", "0"]
        program.interrupt_when(1, lambda: True, settle_s=2.0)  # the step is blocked by then
        assert program.line() == ["(exit", "0)"]
    finally:
        program.stop()
    _check_queue_intact(cluster)
