#!/usr/bin/env python3
"""torch, eager, on the same GPU as bench/gpu_bench: the MNIST models of
examples/mnist (classic: 784-100-10 sigmoid, N(0, 1) weights; large:
784-2048-2048-10 ReLU, He-scaled normal weights), SGD at 0.001, batches of
100 read from host memory each step and the loss fetched each step, as tfd's
step does. One JSON line per device (cpu, and cuda when there is one).

    python3 bench/torch_gpu_mlp.py --model classic --steps 2000
"""
import argparse
import json
import time

import torch


def make_model(name, device):
    widths = [784, 100, 10] if name == "classic" else [784, 2048, 2048, 10]
    layers = []
    for i in range(len(widths) - 1):
        lin = torch.nn.Linear(widths[i], widths[i + 1])
        with torch.no_grad():
            std = 1.0 if name == "classic" else (2.0 / widths[i]) ** 0.5
            lin.weight.normal_(0.0, std)
            lin.bias.zero_()
        layers.append(lin)
        if i + 2 < len(widths):
            layers.append(torch.nn.Sigmoid() if name == "classic" else torch.nn.ReLU())
    return torch.nn.Sequential(*layers).to(device)


def measure(name, device, steps, warmup):
    torch.manual_seed(1)
    images = torch.randint(0, 256, (60000, 784), dtype=torch.uint8)
    labels = torch.randint(0, 10, (60000,))
    model = make_model(name, device)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    loss_fn = torch.nn.CrossEntropyLoss()
    batch = 100

    def step(i):
        start = (i * batch) % 60000
        x = (images[start:start + batch].float() / 255.0).to(device)
        y = labels[start:start + batch].to(device)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    first = step(0)
    for i in range(1, warmup):
        step(i)
    t0 = time.perf_counter()
    last = 0.0
    for i in range(steps):
        last = step(warmup + i)
    seconds = time.perf_counter() - t0
    record = {"system": "torch " + torch.__version__, "model": name,
              "device": "gpu" if device == "cuda" else "cpu", "steps": steps,
              "steps_per_second": steps / seconds, "first_loss": first, "last_loss": last}
    if device == "cuda":
        record["gpu"] = torch.cuda.get_device_name(0)
    print(json.dumps(record), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="classic", choices=["classic", "large"])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    measure(a.model, "cpu", a.steps, a.warmup)
    if torch.cuda.is_available():
        measure(a.model, "cuda", a.steps, a.warmup)


if __name__ == "__main__":
    main()
