#!/usr/bin/env python3
"""torch, eager, one thread: the Deep MNIST convnet's two convolutions at the
shapes kernel_bench --only conv gives tfd's kernels (batch 50, 5x5, SAME,
stride 1, NHWC there, NCHW here as torch computes), forward, input gradient
and filter gradient, each timed on its own. One JSON line per case: the
median of --rounds rounds of --round-ms each, in microseconds per call.

    OMP_NUM_THREADS=1 /usr/bin/python3 bench/torch_conv.py --rounds 7
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

LAYERS = [("conv 1", 28, 1, 32), ("conv 2", 14, 32, 64)]
BATCH, WINDOW = 50, 5


def per_call_us(fn, round_ms, rounds):
    fn()
    calls, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < round_ms / 1000.0:
        fn()
        calls += 1
    calls = max(calls, 1)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--round-ms", type=float, default=200)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(3)
    for role, size, cin, cout in LAYERS:
        x = torch.rand(BATCH, cin, size, size, generator=g)
        w = torch.rand(cout, cin, WINDOW, WINDOW, generator=g) * 0.4 - 0.2
        dy = torch.rand(BATCH, cout, size, size, generator=g) * 2 - 1
        pad = WINDOW // 2
        # The gradients as autograd computes them: aten's convolution_backward,
        # asked for one gradient at a time.
        def grad(mask):
            return torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [pad, pad], [1, 1],
                                                       False, [0, 0], 1, mask)

        cases = {
            "fwd": lambda: F.conv2d(x, w, padding=pad),
            "d input": lambda: grad([True, False, False]),
            "d filter": lambda: grad([False, True, False]),
        }
        with torch.no_grad():
            for what, fn in cases.items():
                us = per_call_us(fn, a.round_ms, a.rounds)
                print(json.dumps({"system": "torch " + torch.__version__, "threads": a.threads,
                                  "role": role + ", " + what, "input": [BATCH, size, size, cin],
                                  "filter": [WINDOW, WINDOW, cin, cout], "us_per_call": round(us, 1)}),
                      flush=True)


if __name__ == "__main__":
    main()
