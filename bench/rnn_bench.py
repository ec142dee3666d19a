#!/usr/bin/python3
"""rnn_bench: what tfd.nn.dynamic_rnn's TensorArrays buy over a loop that
appends each step's output to a growing tensor.

One training step (forward and backward, plain SGD) of a GRU (batch 32,
depth 32, 64 units) over T time steps, in one process (tfd.Session()),
built two ways in one graph: by tfd.nn.dynamic_rnn (inputs read from a
TensorArray, outputs written to one: each step moves its own rows) and by a
tfd.while_loop that slices the inputs and concatenates the outputs so far
(each step copies everything before it: O(T^2)). Rounds alternate the two;
each figure is the median over rounds of the per-step time.

  PYTHONPATH=build/python /usr/bin/python3 bench/rnn_bench.py [--steps 20] [--rounds 5]

Prints a table and one JSON line.
"""
import argparse
import json
import statistics
import time

import numpy as np

import tfd

BATCH, DEPTH, UNITS = 32, 32, 64


def concat_rnn(cell, steps, batch):
    """The loop without arrays: steps[t] sliced, outputs concatenated."""
    n = tfd.shape(steps)[0]
    no_outputs = tfd.zeros(tfd.stack([0, batch, UNITS]))

    def body(t, h, outputs):
        out, h = cell(steps[t], h)
        return t + 1, h, tfd.concat([outputs, tfd.expand_dims(out, 0)], 0)

    _, _, outputs = tfd.while_loop(
        lambda t, h, o: t < n, body, [0, cell.zero_state(batch, tfd.float32), no_outputs],
        shape_invariants=[tfd.TensorShape([]), tfd.TensorShape([batch, UNITS]),
                          tfd.TensorShape([None, batch, UNITS])], parallel_iterations=32)
    return outputs


def build(length):
    x = tfd.constant(np.random.RandomState(0).rand(length, BATCH, DEPTH).astype(np.float32))
    ops = {}
    with tfd.variable_scope("arrays"):
        cell = tfd.nn.rnn_cell.GRUCell(UNITS)
        out, _ = tfd.nn.dynamic_rnn(cell, x, dtype=tfd.float32, time_major=True)
        ops["arrays"] = tfd.train.GradientDescentOptimizer(0.01).minimize(
            tfd.reduce_mean(tfd.square(out)))
    with tfd.variable_scope("concat"):
        cell = tfd.nn.rnn_cell.GRUCell(UNITS)
        out = concat_rnn(cell, x, BATCH)
        ops["concat"] = tfd.train.GradientDescentOptimizer(0.01).minimize(
            tfd.reduce_mean(tfd.square(out)))
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lengths", default="16,64,256")
    args = ap.parse_args()
    results = {}
    for length in [int(v) for v in args.lengths.split(",")]:
        tfd.reset_default_graph()
        ops = build(length)
        times = {name: [] for name in ops}
        with tfd.Session() as sess:
            sess.run(tfd.global_variables_initializer())
            for op in ops.values():
                sess.run(op)  # warm up
            for _ in range(args.rounds):
                for name, op in ops.items():
                    start = time.perf_counter()
                    for _ in range(args.steps):
                        sess.run(op)
                    times[name].append((time.perf_counter() - start) / args.steps)
        results[length] = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    print("%6s  %14s  %14s  %8s" % ("T", "arrays ms/step", "concat ms/step", "speedup"))
    for length, r in results.items():
        print("%6d  %14.2f  %14.2f  %8.2f" % (length, r["arrays"], r["concat"],
                                             r["concat"] / r["arrays"]))
    print(json.dumps({"bench": "rnn", "batch": BATCH, "depth": DEPTH, "units": UNITS,
                      "ms_per_step": {str(k): v for k, v in results.items()}}))


if __name__ == "__main__":
    main()
