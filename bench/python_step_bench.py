#!/usr/bin/python3
"""python_step_bench: what the Python package adds to a step (issue 38).

(1) An empty step (one NoOp) on a 1-task cluster, run N times by
`tfctl submit --steps N` (the C++ client: Client::Run each step) and by a
Python tfd.Session (sess.run, the same Client::Run under pybind11), then by
a Python callable (sess.make_callable); the rounds alternate, and each
figure is the median over rounds of the per-step time.
(2) A 64 MiB float32 array fed and fetched back through an Identity on the
task, against a numpy copy of the same bytes: what the boundary costs, in
copies of the array.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_step_bench.py \\
      --tfd build/daemon/tfd --tfctl build/cli/tfctl [--steps 2000] [--rounds 5]

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


def big_array(sess, rounds):
    n = 64 * 1024 * 1024 // 4
    x = tfd.placeholder(tfd.float32, [n], name="big")
    y = tfd.identity(x, name="big_out")
    a = np.random.default_rng(1).random(n, dtype=np.float32)
    out = sess.run(y, {x: a})
    assert np.array_equal(out, a)
    trips, copies = [], []
    for _ in range(rounds):
        began = time.perf_counter()
        sess.run(y, {x: a})
        trips.append(time.perf_counter() - began)
        began = time.perf_counter()
        a.copy()
        copies.append(time.perf_counter() - began)
    return statistics.median(trips), statistics.median(copies)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tfd", default="build/daemon/tfd")
    p.add_argument("--tfctl", default="build/cli/tfctl")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp, open(os.path.join(tmp, "tfd.log"), "wb") as log:
        noop = tfd.no_op(name="noop")
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
                trip, copy = big_array(sess, args.rounds)
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
    print("64 MiB float32 fed and fetched     %8.1f ms  (numpy copy of it: %.1f ms, %.1f copies)"
          % (trip * 1e3, copy * 1e3, trip / copy))
    print(json.dumps({"empty_step_us": us, "big_roundtrip_ms": trip * 1e3,
                      "numpy_copy_ms": copy * 1e3}))


if __name__ == "__main__":
    sys.exit(main())
