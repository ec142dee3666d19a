#!/usr/bin/python3
"""Walkthrough 5: a counter and a queue on the ps, shared by two workers,
each client with its own copy of the graph: each increments the counter 5
times and enqueues the new value; the ps drains 1..10
(05_counter_queue.sh in Python)."""
import threading

import numpy as np

import tfd
from local_cluster import LocalCluster, expect


def build():
    """The workers' graph: counter += 1, enqueue the new value."""
    graph = tfd.Graph()
    with graph.as_default(), tfd.device("/job:ps"):
        counter = tfd.Variable(np.int32(0), name="counter")
        queue = tfd.raw_ops.fifo_queue(component_types=[tfd.int32], shapes=[[]],
                                          capacity=10, shared_name="shared_queue",
                                          name="queue")
        increment = tfd.raw_ops.assign_add(counter, np.int32(1), use_locking=True,
                                           name="increment")
        tfd.raw_ops.queue_enqueue(queue, [increment], name="enqueue")
        tfd.raw_ops.queue_dequeue_many(queue, 10, component_types=[tfd.int32],
                                          name="drain")
    return graph, counter


def work(address, graph, errors):
    try:
        with tfd.Session(address, graph=graph) as sess:
            for _ in range(5):
                sess.run("enqueue")
    except Exception as e:  # noqa: BLE001 (reported by the main thread)
        errors.append(e)


with LocalCluster({"ps": 1, "worker": 2}) as cluster:
    graphs = [build() for _ in range(2)]
    with tfd.Session(cluster.address("worker", 0), graph=graphs[0][0]) as sess:
        sess.run(graphs[0][1].initializer)  # the chief initializes
    errors = []
    workers = [threading.Thread(target=work, args=(cluster.address("worker", i), graphs[i][0],
                                                   errors)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    with tfd.Session(cluster.address("ps", 0), graph=graphs[0][0]) as sess:
        drained = sess.run("drain:0")
        counter = sess.run(graphs[0][1])
    print("drained:", sorted(drained.tolist()))
    expect(" ".join(str(v) for v in sorted(drained.tolist())), "1 2 3 4 5 6 7 8 9 10")
    print("counter =", counter)
    expect(str(counter), "10")
