#!/usr/bin/python3
"""The MNIST models of examples/mnist in Python, trained between-graph by one
MonitoredTrainingSession per worker.

--model picks one, node for node as examples/mnist builds it, so `tfctl
train` and this script train the same graph:
  classic  784-100-10 with a sigmoid hidden layer (weights from N(0, 1),
           seeds 1 and 2, zero biases), plain SGD at 0.001;
  strong   784-256-10 with ReLU, He-scaled truncated-normal weights, Adam
           at 0.001 (scripts/train-mnist.sh's default);
  sync     the strong model with synchronous replicas
           (tfd.train.SyncReplicasOptimizer, every worker's gradient in each
           update): training ends at the global step that covers --epochs
           (train/max_steps), as `train-mnist.sh --sync`.
Softmax cross-entropy, batches of 100, each worker reading its shard of the
training set. Run one per worker, each against its own task; the daemons
read the idx files from their --data-dir (scripts/get-mnist.sh fetches them):

  PYTHONPATH=build/python /usr/bin/python3 examples/python/mnist.py \\
      --model strong --target localhost:2223 --worker 0 --workers 2 --epochs 3

It prints one JSON line: the steps, the global step, the test accuracy.
--write-graph PATH only writes the graph (for `tfctl train PATH`).
"""
import argparse
import json
import math
import time

import tfd

PIXELS, CLASSES = 28 * 28, 10


HIDDEN = {"classic": 100, "strong": 256}


def dense_parameters(args):
    """w1, w2 then b1, b2, as the C++ model makes them."""
    widths = [PIXELS, HIDDEN[args.layers], CLASSES]
    weights = []
    for i in range(2):
        if args.layers == "classic":
            init = tfd.random_normal_initializer(stddev=1.0, seed=args.seed + i)
        else:  # He-scaled
            init = tfd.truncated_normal_initializer(stddev=math.sqrt(2.0 / widths[i]),
                                                    seed=args.seed + i)
        weights.append(tfd.get_variable("w%d" % (i + 1), shape=[widths[i], widths[i + 1]],
                                        initializer=init))
    biases = [tfd.get_variable("b%d" % (i + 1), shape=[widths[i + 1]],
                               initializer=tfd.zeros_initializer()) for i in range(2)]
    return weights, biases


def logits(images, weights, biases, activation):
    x = activation(tfd.nn.bias_add(tfd.matmul(images, weights[0]), biases[0]))
    return tfd.nn.bias_add(tfd.matmul(x, weights[1]), biases[1])


def add_update(args, loss, global_step):
    """The train op: asynchronous, or (sync) one update per round of every
    worker's gradient, ending at the step that covers --epochs."""
    if args.layers == "classic":
        optimizer = tfd.train.GradientDescentOptimizer(args.learning_rate)
    else:
        optimizer = tfd.train.AdamOptimizer(args.learning_rate)
    if args.model != "sync":
        optimizer.minimize(loss, global_step=global_step, name="train")
        return None
    replicas = max(args.workers, 1)
    sync = tfd.train.SyncReplicasOptimizer(optimizer, replicas_to_aggregate=replicas,
                                           total_num_replicas=replicas)
    sync.minimize(loss, global_step=global_step, name="train")
    per_update = args.batch_size * replicas
    with tfd.name_scope("train/"):
        tfd.constant((args.epochs * args.train_examples + per_update - 1) // per_update,
                     tfd.int64, name="max_steps")
    return sync


def build(args):
    """The whole graph; the SyncReplicasOptimizer when --model sync."""
    args.layers = "classic" if args.model == "classic" else "strong"
    activation = tfd.nn.sigmoid if args.layers == "classic" else tfd.nn.relu
    shards = args.workers if args.workers > 1 else 0
    with tfd.device(tfd.train.replica_device_setter(
            ps_tasks=args.ps_tasks, worker_device="/job:worker",
            ps_strategy=tfd.train.GreedyLoadBalancingStrategy())):
        global_step = tfd.train.get_or_create_global_step()
        weights, biases = dense_parameters(args)
        data = tfd.raw_ops.idx_dataset(
            images_path="train-images-idx3-ubyte", labels_path="train-labels-idx1-ubyte",
            shuffle=True, seed=args.seed, epochs=-1 if args.model == "sync" else args.epochs,
            num_shards=shards, name="train_data")
        images, labels = tfd.raw_ops.idx_next_batch(data, batch_size=args.batch_size,
                                                    one_hot=True, Tlabels=tfd.float32,
                                                    name="next_batch")
        with tfd.name_scope("model"):
            out = logits(images, weights, biases, activation)
        xent = tfd.nn.softmax_cross_entropy_with_logits(labels=labels, logits=out)
        loss = tfd.reduce_mean(xent, 0, name="loss")
        tfd.summary.scalar("loss", loss)
        with tfd.control_dependencies([labels]):
            tfd.summary.scalar("epoch", tfd.raw_ops.idx_dataset_progress(data))
        with tfd.name_scope("train/"):  # docs/training.md's names, as the C++ model's
            tfd.constant(args.epochs, tfd.int64, name="epochs")
            tfd.raw_ops.idx_dataset_reset(data, name="reset_input")
        sync = add_update(args, loss, global_step)
        tfd.global_variables_initializer(name="init")
        with tfd.name_scope("eval/"):
            test = tfd.raw_ops.idx_dataset(
                images_path="t10k-images-idx3-ubyte", labels_path="t10k-labels-idx1-ubyte",
                shuffle=False, name="test_data")
            test_images, test_labels = tfd.raw_ops.idx_next_batch(
                test, batch_size=args.test_batch, name="test_batch")
            predicted = tfd.argmax(logits(test_images, weights, biases, activation), 1)
            correct = tfd.cast(tfd.equal(tfd.cast(predicted, tfd.int32), test_labels),
                               tfd.float32)
            tfd.reduce_mean(correct, 0, name="accuracy")
    return sync


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["classic", "strong", "sync"], default="classic")
    parser.add_argument("--target", help="this worker's task, host:port")
    parser.add_argument("--worker", type=int, default=0, help="this worker's task index")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps-tasks", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--learning-rate", type=float, default=0.001)
    parser.add_argument("--train-examples", type=int, default=60000,
                        help="sync: the training set's size, for train/max_steps")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--test-batch", type=int, default=10000)
    parser.add_argument("--write-graph", metavar="PATH")
    args = parser.parse_args()
    sync = build(args)
    if args.write_graph:
        tfd.write_graph(args.write_graph)
        return
    if not args.target:
        parser.error("--target (this worker's task) or --write-graph is needed")
    hooks = [sync.make_session_run_hook(args.worker == 0)] if sync else []
    with tfd.train.MonitoredTrainingSession(args.target, is_chief=args.worker == 0, hooks=hooks,
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
