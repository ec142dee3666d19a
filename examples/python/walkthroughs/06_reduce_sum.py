#!/usr/bin/python3
"""Walkthrough 6: reduce-sum over two workers. 1000 ones are fed at the
master (the chief), split in two; each worker sums its half on its own task
and logs the partial sum in its own log (Print); the total comes back
(06_reduce_sum.sh in Python)."""
import sys

import numpy as np

import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"chief": 1, "worker": 2}) as cluster:
    with tfd.device("/job:chief"):
        x = tfd.placeholder(tfd.float32, [1000], name="x")
        halves = tfd.raw_ops.split(0, x, num_split=2, name="halves")
    printed = []
    for w in range(2):
        with tfd.device("/job:worker/task:%d" % w):
            partial = tfd.reduce_sum(halves[w], 0, name="sum%d" % w)
            printed.append(tfd.raw_ops.print(partial, [partial],
                                             message="partial sum on worker %d: " % w,
                                             name="print%d" % w))
    with tfd.device("/job:chief"):
        total = tfd.add(printed[0], printed[1], name="total")
    with tfd.Session(cluster.address("chief", 0)) as sess:
        out = sess.run(total, {x: np.ones(1000, np.float32)})
    print("total =", out)
    expect(str(out), "1000")
    # Each partial sum was computed, and logged, on its own worker.
    for w in range(2):
        log = cluster.log("worker", w)
        expect(log, "partial sum on worker %d: [500]" % w)
        print("worker %d log: %s" % (w, [line for line in log.splitlines()
                                         if "partial sum" in line][0].strip()))
    if "partial sum" in cluster.log("chief", 0):
        sys.exit("FAILED: a partial sum was logged on the chief")
