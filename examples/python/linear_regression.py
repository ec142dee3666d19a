#!/usr/bin/python3
"""Fits y = 3x + 0.5 with tfd, in TensorFlow 1.x's words.

In this process:          PYTHONPATH=build/python /usr/bin/python3 examples/python/linear_regression.py
On a cluster (ps+worker): ... linear_regression.py --target localhost:2223 --ps-tasks 1
Only write the graph:     ... linear_regression.py --write-graph model.capnp
                          (then: tfctl submit model.capnp --target ... --run train --steps 200)
"""
import argparse

import numpy as np

import tfd


def build_model(ps_tasks):
    with tfd.device(tfd.train.replica_device_setter(ps_tasks=ps_tasks)):
        x = tfd.placeholder(tfd.float32, [None, 1], name="x")
        y = tfd.placeholder(tfd.float32, [None, 1], name="y")
        w = tfd.get_variable("w", shape=[1, 1], initializer=tfd.zeros_initializer())
        b = tfd.get_variable("b", shape=[1], initializer=tfd.zeros_initializer())
        loss = tfd.reduce_mean(tfd.square(x @ w + b - y), name="loss")
        step = tfd.train.get_or_create_global_step()
        train = tfd.train.AdamOptimizer(0.1).minimize(loss, global_step=step, name="train")
        init = tfd.global_variables_initializer()
    return x, y, w, b, loss, train, init


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="", help="host:port of a tfd task; none: in process")
    parser.add_argument("--ps-tasks", type=int, default=0)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--write-graph", default="", help="write graph.capnp here and stop")
    args = parser.parse_args()

    x, y, w, b, loss, train, init = build_model(args.ps_tasks)
    if args.write_graph:
        tfd.write_graph(args.write_graph)
        print("wrote", args.write_graph)
        return

    rng = np.random.default_rng(0)
    xs = rng.normal(size=(256, 1)).astype(np.float32)
    ys = 3.0 * xs + 0.5
    with tfd.Session(args.target) as sess:
        sess.run(init)
        for i in range(args.steps):
            loss_value, _ = sess.run([loss, train], {x: xs, y: ys})
            if i % 100 == 0:
                print("step %d: loss %.6f" % (i, loss_value))
        w_value, b_value = sess.run([w, b])
    print("w = %.3f, b = %.3f (the data: 3, 0.5)" % (w_value[0, 0], b_value[0]))
    if abs(w_value[0, 0] - 3.0) > 0.05 or abs(b_value[0] - 0.5) > 0.05:
        raise SystemExit("did not fit the line")


if __name__ == "__main__":
    main()
