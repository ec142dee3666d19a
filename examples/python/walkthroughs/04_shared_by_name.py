#!/usr/bin/python3
"""Walkthrough 4: each client builds its own graph; a variable of the same
name on the same task (both graphs pin it to worker 0) is one variable, and
sessions on two different tasks see each other's assignments through it.
Unpinned, each session would get its own: a node with no device runs on the
session's own task, as in TensorFlow 1.x (04_shared_by_name.sh in Python)."""
import numpy as np

import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"worker": 2}, ["--log-device-placement"]) as cluster:
    with tfd.Graph().as_default() as writer, tfd.device("/job:worker/task:0"):
        shared = tfd.Variable(np.float32(0), name="shared")
        set_op = shared.assign(42.0, name="set")
    with tfd.Session(cluster.address("worker", 0), graph=writer) as sess:
        sess.run(set_op)
    with tfd.Graph().as_default() as reader:
        with tfd.device("/job:worker/task:0"):
            shared = tfd.Variable(np.float32(0), name="shared")  # the same name, not initialized
        read = tfd.identity(shared, name="read")
    with tfd.Session(cluster.address("worker", 1), graph=reader) as sess:
        out = sess.run(read)
    print("read on worker 1:", out)
    expect(str(out), "42")
    # Where 'shared' lives: the task both graphs name.
    expect(cluster.log("worker", 1),
           "placement: shared (VariableV2) -> /job:worker/replica:0/task:0/device:CPU:0")
