#!/usr/bin/python3
"""Walkthrough 7: start order does not matter. A run that needs a task that
is not up yet waits for it and completes once it joins; a task that never
starts fails the run with UNAVAILABLE naming it at the step's deadline,
never a hang (07_start_order.sh in Python)."""
import sys
import threading
import time

import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"ps": 2, "worker": 1}, start=False) as cluster:
    cluster.start("worker", 0)  # the ps tasks are not up
    with tfd.device("/job:ps/task:0"):
        p0 = tfd.constant(3.0, name="p0")
    with tfd.device("/job:ps/task:1"):
        p1 = tfd.constant(4.0, name="p1")
    with tfd.device("/job:worker"):
        q0 = tfd.identity(p0, name="q0")
        q1 = tfd.identity(p1, name="q1")
    # ps task 0 joins 3 s after the run has started waiting for it.
    threading.Timer(3.0, cluster.start, args=("ps", 0)).start()
    with tfd.Session(cluster.address("worker", 0)) as sess:
        began = time.monotonic()
        out = sess.run(q0, timeout=30)
        print(out)
        expect(str(out), "3")
        print("the run waited %.0f s for /job:ps/task:0 and completed once it joined"
              % (time.monotonic() - began))
        # ps task 1 never starts: the run fails at its 2 s deadline, naming the task.
        began = time.monotonic()
        try:
            sess.run(q1, timeout=2)
            sys.exit("FAILED: a run needing a task that never started succeeded")
        except tfd.errors.UnavailableError as e:
            print("error: %s: %s" % (e.code, e.message))
            expect(e.message, "/job:ps/replica:0/task:1")
        print("a task that never starts: UNAVAILABLE after %.0f s" % (time.monotonic() - began))
