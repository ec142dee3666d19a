#!/usr/bin/python3
"""Walkthrough 1: a local server — a one-task cluster evaluates a constant
(examples/walkthroughs/01_local_server.sh in Python)."""
import tfd
from local_cluster import LocalCluster, expect

with LocalCluster({"local": 1}) as cluster:
    hello = tfd.constant("Hello, distributed tfd!", name="hello")
    with tfd.Session(cluster.address("local", 0)) as sess:
        out = sess.run(hello).decode()  # a string comes back as bytes, as in TF1
    print(out)
    expect(out, "Hello, distributed tfd!")
