#!/usr/bin/python3
"""Walkthrough 4: each client builds its own graph; a variable of the same
name, unplaced, lands on task 0 of the master's job, and sessions on two
different tasks see each other's assignments through it
(04_shared_by_name.sh in Python)."""
import numpy as np

import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"worker": 2}, ["--log-device-placement"]) as cluster:
    with tfd.Graph().as_default() as writer:
        shared = tfd.Variable(np.float32(0), name="shared")
        set_op = shared.assign(42.0, name="set")
    with tfd.Session(cluster.address("worker", 0), graph=writer) as sess:
        sess.run(set_op)
    with tfd.Graph().as_default() as reader:
        shared = tfd.Variable(np.float32(0), name="shared")  # the same name, not initialized
        read = tfd.identity(shared, name="read")
    with tfd.Session(cluster.address("worker", 1), graph=reader) as sess:
        out = sess.run(read)
    print("read on worker 1:", out)
    expect(str(out), "42")
    # Where 'shared' lives: task 0 of the job of worker 1's master.
    expect(cluster.log("worker", 1),
           "placement: shared (VariableV2) -> /job:worker/replica:0/task:0/device:CPU:0")
