#!/usr/bin/python3
"""Walkthrough 3: parameters placed round-robin over the ps tasks by
replica_device_setter (v1, v2, v3 on ps 0, 1, 0), s = v1 + v2 on worker 0,
p1 = 2s on /task:1, p2 = 3s on /task:1/cpu:0 (03_round_robin.sh in Python)."""
import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"ps": 2, "worker": 2}, ["--log-device-placement"]) as cluster:
    with tfd.device(tfd.train.replica_device_setter(ps_tasks=2)):
        v1 = tfd.Variable(1.0, name="v1")
        v2 = tfd.Variable(2.0, name="v2")
        v3 = tfd.Variable(3.0, name="v3")
    with tfd.device("/job:worker/task:0"):
        s = tfd.add(v1, v2, name="s")
    with tfd.device("/task:1"):
        p1 = tfd.multiply(s, 2.0, name="p1")
    with tfd.device("/task:1/cpu:0"):
        p2 = tfd.multiply(s, 3.0, name="p2")
    with tfd.Session(cluster.address("worker", 0)) as sess:
        sess.run(tfd.global_variables_initializer())
        out = sess.run([p1, p2])
    print("p1, p2 =", out)
    expect(str(out), "6")
    expect(str(out), "9")
    log = cluster.log("worker", 0)
    for node, op, where in [("v1", "VariableV2", "ps/replica:0/task:0"),
                            ("v2", "VariableV2", "ps/replica:0/task:1"),
                            ("v3", "VariableV2", "ps/replica:0/task:0"),
                            ("s", "Add", "worker/replica:0/task:0"),
                            ("p1", "Mul", "worker/replica:0/task:1"),
                            ("p2", "Mul", "worker/replica:0/task:1")]:
        expect(log, "placement: %s (%s) -> /job:%s/device:CPU:0" % (node, op, where))
    print("placement as logged by the master:")
    entries = {line.split("placement: ")[1] for line in log.splitlines() if "placement: " in line}
    for entry in sorted(entries):
        node = entry.split(" (")[0]
        if "/" not in node and not node.startswith("_"):  # the graph's own nodes
            print("  " + entry)
