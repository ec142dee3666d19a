#!/usr/bin/python3
"""python_step_bench: what the Python package adds to a step (issue 38).

(1) An empty step (one NoOp) on a 1-task cluster, run N times by
`tfctl submit --steps N` (the C++ client: Client::Run each step) and by a
Python tfd.Session (sess.run, the same Client::Run under pybind11), then by
a Python callable (sess.make_callable); the rounds alternate, and each
figure is the median over rounds of the per-step time.
(2) A 64 MiB float32 array fed and fetched back through an Identity on the
task by Python's sess.run, alternated with bench/feed_fetch_bench (a C++
Client::Run of the same step, in its own process), beside a numpy copy of
the same bytes: what the Python boundary adds, in copies of the array.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_step_bench.py \\
      --tfd build/daemon/tfd --tfctl build/cli/tfctl \\
      --feed-fetch-bench build/bench/feed_fetch_bench [--steps 2000] [--rounds 5]

Prints a table and one JSON line. Every process it starts, it stops.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import tfd


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_task(tfd_path, log):
    address = "127.0.0.1:%d" % free_port()
    spec = json.dumps({"worker": [address]})
    proc = subprocess.Popen([tfd_path, "--cluster", spec, "--job", "worker", "--task", "0"],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:  # until it answers a session (connect has its own deadline)
        try:
            tfd.Session(address, timeout=5).close()
            return proc, address
        except tfd.errors.OpError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise


def cpp_steps(tfctl, graph, address, steps):
    out = subprocess.run([tfctl, "submit", graph, "--target", address, "--run", "noop",
                          "--steps", str(steps), "--output", "json"],
                         check=True, capture_output=True, timeout=300)
    return json.loads(out.stdout)["seconds"] / steps


def python_steps(sess, noop, steps):
    sess.run(noop)
    began = time.perf_counter()
    for _ in range(steps):
        sess.run(noop)
    return (time.perf_counter() - began) / steps


def callable_steps(step, steps):
    step()
    began = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - began) / steps


BIG_MIB = 64


def big_graph():
    """big (float32 [64 MiB / 4]) -> Identity big_out."""
    n = BIG_MIB * 1024 * 1024 // 4
    x = tfd.placeholder(tfd.float32, [n], name="big")
    return x, tfd.identity(x, name="big_out")


def big_array(sess, x, y, bench, graph, address, rounds):
    """Rounds alternating the C++ client (3 timed steps in its own process)
    and Python's sess.run (3 steps), each step a 64 MiB feed and fetch; then
    the medians of the C++ steps, the Python steps and a numpy copy."""
    a = np.random.default_rng(1).random(x.shape[0], dtype=np.float32)
    out = sess.run(y, {x: a})
    assert np.array_equal(out, a)
    del out
    cpp, trips, copies = [], [], []
    for _ in range(rounds):
        run = subprocess.run([bench, "--target", address, "--graph", graph, "--mib",
                              str(BIG_MIB), "--rounds", "3"],
                             check=True, capture_output=True, timeout=300)
        cpp += json.loads(run.stdout)["seconds"]
        for _ in range(3):
            began = time.perf_counter()
            out = sess.run(y, {x: a})
            trips.append(time.perf_counter() - began)
            del out
        began = time.perf_counter()
        a.copy()
        copies.append(time.perf_counter() - began)
    return statistics.median(cpp), statistics.median(trips), statistics.median(copies)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tfd", default="build/daemon/tfd")
    p.add_argument("--tfctl", default="build/cli/tfctl")
    p.add_argument("--feed-fetch-bench", default="build/bench/feed_fetch_bench")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp, open(os.path.join(tmp, "tfd.log"), "wb") as log:
        noop = tfd.no_op(name="noop")
        x, y = big_graph()
        graph = os.path.join(tmp, "noop.capnp")
        tfd.write_graph(graph)
        proc, address = start_task(args.tfd, log)
        try:
            figures = {"cpp": [], "python": [], "callable": []}
            with tfd.Session(address, timeout=30) as sess:
                step = sess.make_callable(noop)
                for _ in range(args.rounds):
                    figures["cpp"].append(cpp_steps(args.tfctl, graph, address, args.steps))
                    figures["python"].append(python_steps(sess, noop, args.steps))
                    figures["callable"].append(callable_steps(step, args.steps))
                cpp_trip, trip, copy = big_array(sess, x, y, args.feed_fetch_bench, graph,
                                                 address, args.rounds)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    us = {k: statistics.median(v) * 1e6 for k, v in figures.items()}
    print("empty step, 1 task, median of %d rounds of %d steps" % (args.rounds, args.steps))
    print("  tfctl submit (C++ Client::Run)   %8.1f us" % us["cpp"])
    print("  Python sess.run                  %8.1f us  (%.2fx)" % (us["python"],
                                                                    us["python"] / us["cpp"]))
    print("  Python make_callable             %8.1f us  (%.2fx)" % (us["callable"],
                                                                    us["callable"] / us["cpp"]))
    print("64 MiB float32 fed and fetched, median step")
    print("  C++ Client::Run (feed_fetch_bench) %8.1f ms" % (cpp_trip * 1e3))
    print("  Python sess.run                    %8.1f ms  (%+.1f ms: %.2f numpy copies of it)"
          % (trip * 1e3, (trip - cpp_trip) * 1e3, (trip - cpp_trip) / copy))
    print("  numpy copy of 64 MiB               %8.1f ms" % (copy * 1e3))
    print(json.dumps({"empty_step_us": us, "big_roundtrip_ms": {"cpp": cpp_trip * 1e3,
                                                                "python": trip * 1e3},
                      "numpy_copy_ms": copy * 1e3}))


if __name__ == "__main__":
    sys.exit(main())
