"""examples/python/mnist.py as its docstring runs it, each model: one
process per worker of a local cluster of 1 ps and 2 workers, on small
MNIST-shaped idx files made here (600 training images, 100 test images)."""
import json
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np
import pytest

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


def train(cluster_factory, tmp_path, model, learning_rate):
    """Both workers' JSON lines, after 2 epochs of their 300-image shards."""
    data = tmp_path / "mnist"
    data.mkdir()
    rng = np.random.default_rng(7)
    write_idx(data, "train", 600, rng)
    write_idx(data, "t10k", 100, rng)
    cluster = cluster_factory({"ps": 1, "worker": 2}, ["--data-dir", str(data)])
    trainers = [subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--model", model, "--target",
         cluster.address("worker", i), "--worker", str(i), "--workers", "2", "--ps-tasks", "1",
         "--epochs", "2", "--test-batch", "100", "--learning-rate", str(learning_rate),
         "--train-examples", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ)) for i in range(2)]
    results = []
    for p in trainers:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        results.append(json.loads(out.decode().strip().splitlines()[-1]))
    return results


@pytest.mark.parametrize("model, learning_rate", [("classic", 0.5), ("strong", 0.01)])
def test_an_asynchronous_model_trains_on_two_workers(cluster_factory, tmp_path, model,
                                                     learning_rate):
    results = train(cluster_factory, tmp_path, model, learning_rate)
    # Each worker read its 300-image shard twice, 100 at a time: 6 steps.
    assert [r["local_steps"] for r in results] == [6, 6]
    assert [r["stopped"] for r in results] == ["input exhausted"] * 2
    assert max(r["global_step"] for r in results) == 12
    # The bands are easy: the trained model classifies most test images.
    assert all(r["accuracy"] > 0.5 for r in results)


def test_the_sync_model_updates_once_per_round_of_both_workers(cluster_factory, tmp_path):
    results = train(cluster_factory, tmp_path, "sync", 0.01)
    # 2 epochs of 600 images, 200 per update (100 from each worker): 6 updates.
    chief, other = results
    assert chief["chief"] and chief["local_steps"] == 6
    assert chief["global_step"] == 6 and other["global_step"] == 6
    assert chief["stopped"] == "reached step 6"
    assert 1 <= other["local_steps"] <= 6
    assert all(r["accuracy"] > 0.5 for r in results)
