#!/usr/bin/python3
"""Walkthrough 2: pinning ops to jobs and tasks — a = Variable(1.0) on
/job:ps, b = a + 2 on /job:worker, c = a + b on /job:worker/task:1; the
master's placement log shows where each ran (02_pinning.sh in Python)."""
import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"ps": 2, "worker": 3}, ["--log-device-placement"]) as cluster:
    with tfd.device("/job:ps"):
        a = tfd.Variable(1.0, name="a")
    with tfd.device("/job:worker"):
        b = tfd.add(a, 2.0, name="b")
    with tfd.device("/job:worker/task:1"):
        c = tfd.add(a, b, name="c")
    with tfd.Session(cluster.address("worker", 0)) as sess:
        sess.run(a.initializer)
        out = sess.run(c)
    print("c =", out)
    expect(str(out), "4")
    log = cluster.log("worker", 0)
    expect(log, "placement: a (VariableV2) -> /job:ps/replica:0/task:0/device:CPU:0")
    expect(log, "placement: b (Add) -> /job:worker/replica:0/task:0/device:CPU:0")
    expect(log, "placement: c (Add) -> /job:worker/replica:0/task:1/device:CPU:0")
    print("placement as logged by the master:")
    entries = {line.split("placement: ")[1] for line in log.splitlines() if "placement: " in line}
    for entry in sorted(entries):
        node = entry.split(" (")[0]
        if "/" not in node and not node.startswith("_"):  # the graph's own nodes
            print("  " + entry)
