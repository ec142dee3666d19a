#!/usr/bin/python3
"""Walkthrough 8: a task leaving. When the task an op is placed on dies
(SIGKILL, no goodbye), the run fails with UNAVAILABLE naming it instead of
hanging; once the task is started again, the same run succeeds: the master
registers the graph with the new process itself (08_task_leaving.sh in
Python)."""
import sys

import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"ps": 1, "worker": 1}) as cluster:
    with tfd.device("/job:ps"):
        p = tfd.constant(5.0, name="p")
        doubled = tfd.add(p, p, name="doubled")
    with tfd.device("/job:worker"):
        q = tfd.identity(doubled, name="q")
    with tfd.Session(cluster.address("worker", 0)) as sess:
        out = sess.run(q, timeout=3)
        expect(str(out), "10")
        cluster.kill("ps", 0)
        try:
            sess.run(q, timeout=3)
            sys.exit("FAILED: the run succeeded with the ps gone")
        except tfd.errors.UnavailableError as e:
            print("error: %s: %s" % (e.code, e.message))
            expect(e.message, "/job:ps/replica:0/task:0")
        cluster.start("ps", 0)
        out = sess.run(q, timeout=30)
        print(out)
        expect(str(out), "10")
        print("after the restart the same run succeeds")
