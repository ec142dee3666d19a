#!/usr/bin/python3
"""The classic MNIST walkthrough in Python: 784-100-10 with a sigmoid hidden
layer, trained between-graph by one MonitoredTrainingSession per worker.

It is examples/mnist's classic model, node for node (weights from N(0, 1)
with seeds 1 and 2, zero biases, softmax cross-entropy, plain SGD at 0.001,
batches of 100, each worker reading its shard of the training set for
--epochs), so `tfctl train` and this script train the same graph. Run one
per worker, each against its own task; the daemons read the idx files from
their --data-dir (scripts/get-mnist.sh fetches them):

  PYTHONPATH=build/python /usr/bin/python3 examples/python/mnist.py \\
      --target localhost:2223 --worker 0 --workers 2 --ps-tasks 1 --epochs 20

It prints one JSON line: the steps, the global step, the test accuracy.
--write-graph PATH only writes the graph (for `tfctl train PATH`).
"""
import argparse
import json
import time

import tfd

PIXELS, CLASSES = 28 * 28, 10


def dense_parameters(seed):
    """w1, w2 then b1, b2, as the C++ model makes them."""
    widths = [PIXELS, 100, CLASSES]
    weights = [tfd.get_variable("w%d" % (i + 1), shape=[widths[i], widths[i + 1]],
                                initializer=tfd.random_normal_initializer(stddev=1.0,
                                                                          seed=seed + i))
               for i in range(2)]
    biases = [tfd.get_variable("b%d" % (i + 1), shape=[widths[i + 1]],
                               initializer=tfd.zeros_initializer()) for i in range(2)]
    return weights, biases


def logits(images, weights, biases):
    x = tfd.nn.sigmoid(tfd.nn.bias_add(tfd.matmul(images, weights[0]), biases[0]))
    return tfd.nn.bias_add(tfd.matmul(x, weights[1]), biases[1])


def build(args):
    shards = args.workers if args.workers > 1 else 0
    with tfd.device(tfd.train.replica_device_setter(
            ps_tasks=args.ps_tasks, worker_device="/job:worker",
            ps_strategy=tfd.train.GreedyLoadBalancingStrategy())):
        global_step = tfd.train.get_or_create_global_step()
        weights, biases = dense_parameters(args.seed)
        data = tfd.raw_ops.idx_dataset(
            images_path="train-images-idx3-ubyte", labels_path="train-labels-idx1-ubyte",
            shuffle=True, seed=args.seed, epochs=args.epochs, num_shards=shards,
            name="train_data")
        images, labels = tfd.raw_ops.idx_next_batch(data, batch_size=args.batch_size,
                                                    one_hot=True, Tlabels=tfd.float32,
                                                    name="next_batch")
        with tfd.name_scope("model"):
            out = logits(images, weights, biases)
        xent = tfd.nn.softmax_cross_entropy_with_logits(labels=labels, logits=out)
        loss = tfd.reduce_mean(xent, 0, name="loss")
        tfd.summary.scalar("loss", loss)
        with tfd.control_dependencies([labels]):
            tfd.summary.scalar("epoch", tfd.raw_ops.idx_dataset_progress(data))
        with tfd.name_scope("train/"):  # docs/training.md's names, as the C++ model's
            tfd.constant(args.epochs, tfd.int64, name="epochs")
            tfd.raw_ops.idx_dataset_reset(data, name="reset_input")
        tfd.train.GradientDescentOptimizer(args.learning_rate).minimize(
            loss, global_step=global_step, name="train")
        tfd.global_variables_initializer(name="init")
        with tfd.name_scope("eval/"):
            test = tfd.raw_ops.idx_dataset(
                images_path="t10k-images-idx3-ubyte", labels_path="t10k-labels-idx1-ubyte",
                shuffle=False, name="test_data")
            test_images, test_labels = tfd.raw_ops.idx_next_batch(
                test, batch_size=args.test_batch, name="test_batch")
            predicted = tfd.argmax(logits(test_images, weights, biases), 1)
            correct = tfd.cast(tfd.equal(tfd.cast(predicted, tfd.int32), test_labels),
                               tfd.float32)
            tfd.reduce_mean(correct, 0, name="accuracy")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", help="this worker's task, host:port")
    parser.add_argument("--worker", type=int, default=0, help="this worker's task index")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps-tasks", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--learning-rate", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--test-batch", type=int, default=10000)
    parser.add_argument("--write-graph", metavar="PATH")
    args = parser.parse_args()
    build(args)
    if args.write_graph:
        tfd.write_graph(args.write_graph)
        return
    if not args.target:
        parser.error("--target (this worker's task) or --write-graph is needed")
    with tfd.train.MonitoredTrainingSession(args.target, is_chief=args.worker == 0,
                                            timeout=60) as training:
        began = time.monotonic()  # from the first step, as tfctl train's rate
        while not training.should_stop():
            training.run("train")
        seconds = time.monotonic() - began
    # The test set with the trained weights, in a session of its own.
    with tfd.Session(args.target, timeout=60) as sess:
        accuracy = float(sess.run("eval/accuracy:0"))
    steps = training.result["local_steps"]
    print(json.dumps(dict(worker=args.worker, accuracy=accuracy, seconds=round(seconds, 3),
                          steps_per_second=round(steps / seconds, 1), **training.result)))


if __name__ == "__main__":
    main()
