"""examples/python/mnist.py as its docstring runs it: one process per
worker of a local cluster of 1 ps and 2 workers, on small MNIST-shaped idx
files made here (600 training images, 100 test images)."""
import json
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "mnist.py"


def write_idx(directory, prefix, count, rng):
    """Images whose class is the row band that is bright: learnable, small."""
    labels = rng.integers(0, 10, size=count).astype(np.uint8)
    images = rng.integers(0, 60, size=(count, 28, 28)).astype(np.uint8)
    for i, label in enumerate(labels):
        images[i, 2 + 2 * label:4 + 2 * label, :] = 255
    (directory / (prefix + "-images-idx3-ubyte")).write_bytes(
        struct.pack(">IIII", 0x803, count, 28, 28) + images.tobytes())
    (directory / (prefix + "-labels-idx1-ubyte")).write_bytes(
        struct.pack(">II", 0x801, count) + labels.tobytes())


def test_the_mnist_example_trains_on_two_workers(cluster_factory, tmp_path):
    data = tmp_path / "mnist"
    data.mkdir()
    rng = np.random.default_rng(7)
    write_idx(data, "train", 600, rng)
    write_idx(data, "t10k", 100, rng)
    cluster = cluster_factory({"ps": 1, "worker": 2}, ["--data-dir", str(data)])
    trainers = [subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--target", cluster.address("worker", i), "--worker",
         str(i), "--workers", "2", "--ps-tasks", "1", "--epochs", "2", "--test-batch", "100",
         "--learning-rate", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ)) for i in range(2)]
    results = []
    for p in trainers:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        results.append(json.loads(out.decode().strip().splitlines()[-1]))
    # Each worker read its 300-image shard twice, 100 at a time: 6 steps.
    assert [r["local_steps"] for r in results] == [6, 6]
    assert [r["stopped"] for r in results] == ["input exhausted"] * 2
    assert max(r["global_step"] for r in results) == 12
    # The bands are easy: the trained model classifies most test images.
    assert all(r["accuracy"] > 0.5 for r in results)
