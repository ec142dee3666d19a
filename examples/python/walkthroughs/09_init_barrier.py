#!/usr/bin/python3
"""Walkthrough 9: one client waits on the init barrier until another runs
the initializer, and proceeds at once after (09_init_barrier.sh in Python,
Session.wait_initialized standing for `tfctl wait init`)."""
import sys
import threading

import tfd
from local_cluster import LocalCluster

with LocalCluster({"ps": 1, "worker": 2}) as cluster:
    with tfd.device("/job:ps"):
        a = tfd.Variable(1.0, name="a")
    chief = tfd.Session(cluster.address("worker", 0))
    waiter = tfd.Session(cluster.address("worker", 1))
    # Create the variable, uninitialized: the barrier must hold.
    chief.run(a.op)
    try:
        waiter.wait_initialized([a], timeout=0.5)
        sys.exit("FAILED: the barrier let a waiter through before 'a' was initialized")
    except tfd.errors.DeadlineExceededError as e:
        print("before the initializer: %s: %s" % (e.code, e.message))
    done = threading.Event()
    thread = threading.Thread(target=lambda: (waiter.wait_initialized([a], timeout=30),
                                              done.set()))
    thread.start()
    chief.run(a.initializer)
    thread.join(timeout=60)
    if not done.is_set():
        sys.exit("FAILED: the waiter did not proceed once 'a' was initialized")
    print("the waiter proceeded once 'a' was initialized")
    chief.close()
    waiter.close()
