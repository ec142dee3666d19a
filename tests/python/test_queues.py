"""TF1's queues and the threads that fill them: tfd.FIFOQueue,
RandomShuffleQueue, tfd.train.QueueRunner, Coordinator, start_queue_runners,
batch and shuffle_batch, in process and with the queue on a ps task."""
import threading
import time

import numpy as np
import pytest

import tfd


def _source(values, name="source"):
    """A closed queue holding `values` (int32 scalars) and the op filling
    it: dequeues from it end in OutOfRangeError, the end of the input."""
    src = tfd.FIFOQueue(len(values), tfd.int32, shapes=[[]], name=name)
    with tfd.control_dependencies([src.enqueue_many([np.array(values, np.int32)])]):
        return src, src.close()


def _until(predicate):
    deadline = time.monotonic() + 30  # only stops a hang
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert predicate()


def test_a_queue_has_tf1s_methods_shapes_and_structures():
    q = tfd.FIFOQueue(10, [tfd.float32, tfd.int32], shapes=[[3], []], name="q")
    assert (q.name, q.dtypes, q.queue_ref.op.name) == ("q", [tfd.float32, tfd.int32], "q")
    xs, ys = q.dequeue_many(4)
    assert (xs.shape.as_list(), ys.shape.as_list()) == ([4, 3], [4])
    assert (xs * 2).shape.as_list() == [4, 3]  # ops built on it know it too
    assert q.dequeue_many(tfd.placeholder(tfd.int32, []))[0].shape.dims == [None, 3]
    single = tfd.FIFOQueue(5, tfd.float32, shapes=[2])
    taken = single.dequeue()
    assert isinstance(taken, tfd.Tensor) and taken.shape.as_list() == [2]
    named = tfd.queue.FIFOQueue(5, [tfd.int32, tfd.float32], shapes=[[], []], names=["a", "b"])
    with pytest.raises(ValueError, match="enqueue a dict"):
        named.enqueue([1, 2.0])
    with pytest.raises(ValueError, match="shape"):
        q.enqueue([[1.0, 2.0], 1])
    with pytest.raises(ValueError, match="fully defined"):
        tfd.FIFOQueue(5, tfd.float32, shapes=[[None]])
    ops = [q.enqueue([[1, 2, 3], 7]),  # Python ints become the queue's float32
           q.enqueue_many([np.ones((3, 3), np.float32), np.arange(3, dtype=np.int32)]),
           named.enqueue({"a": 4, "b": 0.5})]
    with tfd.Session() as sess:
        for op in ops:
            sess.run(op)
        assert sess.run(q.size()) == 4
        first, label = sess.run(q.dequeue())
        np.testing.assert_array_equal(first, [1.0, 2.0, 3.0])
        assert label == 7
        rows, labels = sess.run(q.dequeue_many(3))
        np.testing.assert_array_equal(rows, np.ones((3, 3)))
        np.testing.assert_array_equal(labels, [0, 1, 2])
        assert sess.run(named.dequeue()) == {"a": 4, "b": 0.5}
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(tfd.errors.OutOfRangeError):
            sess.run(q.dequeue())
    assert tfd.train.queue_runner.QueueRunner is tfd.train.QueueRunner


def test_batch_makes_batches_of_a_dict_from_queue_runner_threads():
    src, fill = _source(list(range(20)))
    value = src.dequeue()
    batch = tfd.train.batch({"x": value, "y": tfd.cast(value, tfd.float32) * 2.0},
                            batch_size=4, num_threads=2, capacity=8)
    assert batch["x"].shape.as_list() == [4] and batch["y"].dtype == tfd.float32
    assert len(tfd.get_collection(tfd.GraphKeys.QUEUE_RUNNERS)) == 1
    taken = []
    with tfd.Session() as sess:
        sess.run(fill)
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        try:
            while not coord.should_stop():
                got = sess.run(batch)
                np.testing.assert_array_equal(got["y"], got["x"] * 2.0)
                taken.extend(got["x"].tolist())
        except tfd.errors.OutOfRangeError:  # the source ran out: the runner closed the queue
            pass
        finally:
            coord.request_stop()
            coord.join(threads)
    assert sorted(taken) == list(range(20))


def test_shuffle_batch_hands_out_every_element_once_shuffled():
    src, fill = _source(list(range(64)))
    batch = tfd.train.shuffle_batch([src.dequeue()], batch_size=8, capacity=32,
                                    min_after_dequeue=16, allow_smaller_final_batch=True)
    assert batch.dtype == tfd.int32
    taken = []
    with tfd.Session() as sess:
        sess.run(fill)
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        try:
            while True:
                taken.extend(sess.run(batch).tolist())
        except tfd.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads)
    assert sorted(taken) == list(range(64))
    assert taken != list(range(64))  # in order by chance: 1 in 64!


def _drawn(seed):
    """The order a RandomShuffleQueue filled with 0..63 hands them out in."""
    with tfd.Graph().as_default():
        q = tfd.RandomShuffleQueue(64, 0, tfd.int32, shapes=[[]], seed=seed)
        with tfd.Session() as sess:
            sess.run(q.enqueue_many([np.arange(64, dtype=np.int32)]))
            return sess.run(q.dequeue_many(64)).tolist()


def test_a_random_shuffle_queue_draws_in_an_order_its_seed_fixes():
    # (Through shuffle_batch the order also depends on how far the runner
    # threads got when each batch was taken, as in TF1.)
    assert _drawn(5) == _drawn(5) != _drawn(6)
    assert sorted(_drawn(None)) == list(range(64))


def test_a_random_shuffle_queue_keeps_min_after_dequeue_until_closed():
    q = tfd.RandomShuffleQueue(10, 3, tfd.int32, shapes=[[]], seed=1)
    assert tfd.queue.RandomShuffleQueue is tfd.RandomShuffleQueue
    fill = q.enqueue_many([np.arange(4, dtype=np.int32)])
    take = q.dequeue()
    with tfd.Session() as sess:
        sess.run(fill)
        first = sess.run(take)  # four held, three kept: one comes out
        with pytest.raises(tfd.errors.DeadlineExceededError):
            sess.run(take, timeout=0.5)  # three held: none may
        sess.run(q.close())
        rest = sess.run(q.dequeue_up_to(5)).tolist()  # closed: the three left
        assert sorted([first] + rest) == [0, 1, 2, 3]
    with pytest.raises(tfd.errors.InvalidArgumentError, match="min_after_dequeue"):
        tfd.RandomShuffleQueue(3, 3, tfd.int32, shapes=[[]])


def test_a_smaller_final_batch_takes_what_is_left():
    src, fill = _source([1, 2, 3])
    batch = tfd.train.batch([src.dequeue()], 2, allow_smaller_final_batch=True)
    assert isinstance(batch, tfd.Tensor)  # a list of one tensor batches to a tensor, as TF1's
    with tfd.Session() as sess:
        sess.run(fill)
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        assert sorted(sess.run(batch).tolist() + sess.run(batch).tolist()) == [1, 2, 3]
        coord.request_stop()
        coord.join(threads)


def test_an_error_in_a_runner_thread_reaches_join():
    q = tfd.FIFOQueue(4, tfd.float32, shapes=[[]])
    unfed = tfd.placeholder(tfd.float32, [], name="unfed")
    tfd.train.add_queue_runner(tfd.train.QueueRunner(q, [q.enqueue(unfed)]))
    with tfd.Session() as sess:
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        assert coord.wait_for_stop(30)  # the runner's error asked for it
        with pytest.raises(tfd.errors.InvalidArgumentError, match="unfed"):
            coord.join(threads)
    assert not any(t.is_alive() for t in threads)


def test_request_stop_wakes_runners_blocked_on_a_full_queue():
    q = tfd.FIFOQueue(2, tfd.float32, shapes=[[]])
    qr = tfd.train.QueueRunner(q, [q.enqueue(1.0)] * 3)
    with tfd.Session() as sess:
        coord = tfd.train.Coordinator()
        threads = qr.create_threads(sess, coord, daemon=True, start=True)
        _until(lambda: sess.run(q.size()) == 2)  # full: the three threads wait for room
        coord.request_stop()  # its cancel_op closes the queue and wakes them
        coord.join(threads, stop_grace_period_secs=30)
        assert not any(t.is_alive() for t in threads)
        assert sess.run(q.dequeue_many(2)).tolist() == [1.0, 1.0]
        with pytest.raises(tfd.errors.OutOfRangeError):
            sess.run(q.dequeue())


def test_join_names_a_thread_that_does_not_stop():
    coord = tfd.train.Coordinator()
    release = threading.Event()
    stubborn = threading.Thread(target=release.wait, args=(30,), name="stubborn", daemon=True)
    stubborn.start()
    coord.register_thread(stubborn)
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stubborn"):
        coord.join(stop_grace_period_secs=0.01)
    release.set()
    stubborn.join(30)
    coord.clear_stop()
    with coord.stop_on_exception():
        raise ValueError("from a thread's body")
    with pytest.raises(ValueError, match="thread's body"):
        coord.join([stubborn], ignore_live_threads=True)


def test_a_runner_on_a_worker_fills_a_queue_on_the_ps(cluster_factory):
    """TF1's input pipeline between tasks: runner threads on the worker's
    session move the producer's data into a queue on the ps; the training
    loop takes batches until the producer's data ends and the runner's
    close op has run. Every element comes out exactly once."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    src, fill = _source(list(range(48)))  # on the worker, the master's own task
    with tfd.device("/job:ps/task:0"):
        q = tfd.FIFOQueue(10, tfd.int32, shapes=[[]], shared_name="input", name="q")
    tfd.train.add_queue_runner(tfd.train.QueueRunner(q, [q.enqueue(src.dequeue())] * 2))
    batch = q.dequeue_many(8)
    taken = []
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(fill)
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        try:
            while not coord.should_stop():
                taken.extend(sess.run(batch, timeout=30).tolist())
        except tfd.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=30)
    assert sorted(taken) == list(range(48))


def _pipeline(cluster, values, fail_at=None):
    """A model trained on batches of 8 of `values` from train.batch, whose
    runner reads the filled source queue on the worker; `fail_at`: the
    runner's enqueue fails (InvalidArgumentError) at the first value that
    large. Each step adds -sum(batch) to w on the ps (SGD at 1 on
    sum(batch) * w), so w tells which elements were trained on."""
    src, fill = _source(values)
    x = src.dequeue()
    if fail_at is not None:
        check = tfd.debugging.assert_less(x, fail_at, message="input too large")
        with tfd.control_dependencies([check]):
            x = tfd.identity(x)
    batch = tfd.train.batch([x], batch_size=8, num_threads=1, capacity=8)
    with tfd.device("/job:ps/task:0"):
        w = tfd.Variable(0.0, name="w")
        step = tfd.train.get_or_create_global_step()
    loss = tfd.reduce_sum(tfd.cast(batch, tfd.float32) * w)
    tfd.train.GradientDescentOptimizer(1.0).minimize(loss, global_step=step)
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(fill)  # the source queue outlives this session on the worker
    return w


class _CoordSeen(tfd.train.SessionRunHook):
    def after_create_session(self, session, coord):
        self.coord = coord


def test_monitored_training_session_runs_the_queue_runners(cluster_factory):
    """As TF1's: MonitoredTrainingSession starts the graph's queue runners
    and gives the hooks their coordinator; the loop ends when the input
    does, every element trained on once."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    w = _pipeline(cluster, list(range(48)))
    seen = _CoordSeen()
    steps = 0
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), hooks=[seen],
                                            timeout=60) as mts:
        while not mts.should_stop():
            if mts.run(w) is not None:
                steps += 1
    assert isinstance(seen.coord, tfd.train.Coordinator) and seen.coord.should_stop()
    assert steps == 6 and mts.result["global_step"] == 6
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        assert sess.run(w) == -sum(range(48))


class _UntilFull(tfd.train.SessionRunHook):
    """After each of the first `steps` steps, before the loop's checkpoint,
    waits until the runner has filled the batch queue again (and so waits
    on it, in its next enqueue)."""

    def __init__(self, target, steps):
        self.target, self.steps, self.done = target, steps, 0

    def after_run(self, run_context, run_values):
        if self.done < self.steps:
            self.done += 1
            with tfd.Session(self.target, timeout=60) as sess:
                _until(lambda: sess.run("summaries/batch/fraction_of_8_full:0") == 1.0)
            time.sleep(0.05)  # into its next enqueue, which waits for room


def test_checkpoints_do_not_wait_for_runners_blocked_on_a_full_queue(cluster_factory, tmp_path):
    """A runner's enqueue waits on the full batch queue between steps; a
    checkpoint of the cluster lets it be, as TF1's Saver does, rather than
    wait its drain bound for a step that ends only when training goes on."""
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    w = _pipeline(cluster, list(range(64)))
    hooks = [_UntilFull(cluster.address("worker", 0), 3)]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), timeout=60,
                                            hooks=hooks, checkpoint_dir=str(tmp_path / "logs"),
                                            save_checkpoint_steps=1) as mts:
        while not mts.should_stop():
            mts.run(w)
    assert mts.result["global_step"] == 8 and mts.result["checkpoints"] >= 8
    assert "saved checkpoint" in (tmp_path / "ps0.log").read_text()
    # The saving master says when a save waited for a step.
    assert "still running after" not in (tmp_path / "worker0.log").read_text()


def test_a_queue_runners_error_ends_the_monitored_loop_and_comes_out_of_close(cluster_factory):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    w = _pipeline(cluster, list(range(48)), fail_at=20)
    mts = tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), timeout=60)
    steps = 0
    while not mts.should_stop():
        steps += mts.run(w) is not None
    assert steps <= 3  # the batches of 0..19 at most
    with pytest.raises(tfd.errors.InvalidArgumentError, match="input too large"):
        mts.close()


def _endless_pipeline(queue_device):
    """Batches of 4 from a range producer on the worker (its epochs endless)
    through a queue of 8 on `queue_device`, filled by a QueueRunner; each
    step adds -sum(batch) * 1e-9 to w on the ps and counts the global step
    there. Returns the queue's size."""
    x = tfd.train.range_input_producer(1000, shuffle=False).dequeue()
    with tfd.device(queue_device):
        q = tfd.FIFOQueue(8, tfd.int32, shapes=[[]], name="input")
        size = q.size()
    tfd.train.add_queue_runner(tfd.train.QueueRunner(q, [q.enqueue(x)]))
    with tfd.device("/job:ps/task:0"):
        w = tfd.Variable(0.0, name="w")
        step = tfd.train.get_or_create_global_step()
    loss = tfd.reduce_sum(tfd.cast(q.dequeue_many(4), tfd.float32) * w)
    tfd.train.GradientDescentOptimizer(1e-9).minimize(loss, global_step=step)
    return size


def _train_over_restarts(cluster, tmp_path, size, restarts):
    """Trains to step 10, a checkpoint every 3 steps. After step 3, once the
    runner's thread waits on the full queue (a step in flight on its task),
    does `restarts` (a (job, task) each) back to back. The global steps seen."""
    seen = []
    with tfd.train.MonitoredTrainingSession(
            cluster.address("worker", 0), is_chief=True, checkpoint_dir=str(tmp_path / "logs"),
            hooks=[tfd.train.StopAtStepHook(last_step=10)], save_checkpoint_steps=3,
            timeout=60, step_timeout=30) as mts:
        while not mts.should_stop():
            step = mts.run("train/global_step:0")
            if step is None:
                break
            seen.append(int(step))
            if len(seen) == 3:
                with tfd.Session(cluster.address("worker", 0), timeout=60) as probe:
                    _until(lambda: probe.run(size) == 8)
                for task in restarts:
                    cluster.stop(*task)
                    cluster.start(*task)
    return seen, mts.result


def test_monitored_queue_runners_go_on_over_a_ps_restarted_twice(cluster_factory, tmp_path):
    """TF1's recovery restarts the queue runners with the session: a ps that
    holds the input's queue restarting (here twice, the second while the
    first recovery may be under way) costs the queue's contents, not the
    run, which must not mistake the old runners' cancel for the input's end."""
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    size = _endless_pipeline("/job:ps/task:0")
    seen, result = _train_over_restarts(cluster, tmp_path, size, [("ps", 0), ("ps", 0)])
    assert seen[:3] == [1, 2, 3] and seen[-1] == 10 and result["global_step"] == 10


def test_monitored_queue_runners_go_on_over_their_worker_restarted(cluster_factory, tmp_path):
    """The loop's own task (holding the input's queues) restarting: the loop
    connects again, and so do the runners, once the worker's variables are
    initialized again."""
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    size = _endless_pipeline("/job:worker/task:0")
    seen, result = _train_over_restarts(cluster, tmp_path, size, [("worker", 0)])
    assert seen[-1] == 10 and result["global_step"] == 10 and result["recoveries"] >= 1


def test_count_up_to_counts_to_its_limit_and_then_ends_the_input():
    v = tfd.Variable(np.int64(0), name="count")
    c = v.count_up_to(2)
    with tfd.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(c), sess.run(c)] == [0, 1]
        with pytest.raises(tfd.errors.OutOfRangeError, match="limit of 2"):
            sess.run(c)
        assert sess.run(v) == 2  # left at the limit


def _drain(sess, fetches):
    got = []
    try:
        while True:
            got.append(sess.run(fetches))
    except tfd.errors.OutOfRangeError:
        return got


def test_input_producers_hand_out_each_element_once_per_epoch():
    """slice_input_producer reshuffles the rows each epoch and keeps each
    row's tensors together; string_input_producer without shuffle keeps
    the order; both end after num_epochs, as TF1's."""
    images = np.arange(10, dtype=np.float32).reshape(5, 2)
    image, label = tfd.train.slice_input_producer([images, np.arange(5, dtype=np.int32)],
                                                  num_epochs=2, seed=7)
    assert image.shape.as_list() == [2] and label.shape.as_list() == []
    names = tfd.train.string_input_producer(["a", "b", "c"], num_epochs=1, shuffle=False)
    name = names.dequeue()
    with pytest.raises(ValueError, match="non-null"):
        tfd.train.string_input_producer([])
    with tfd.Session() as sess:
        sess.run(tfd.local_variables_initializer())  # the epoch counters
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        rows = _drain(sess, [image, label])
        assert _drain(sess, name) == [b"a", b"b", b"c"]
        coord.request_stop()
        coord.join(threads)
    labels = [int(r[1]) for r in rows]
    assert sorted(labels[:5]) == sorted(labels[5:]) == [0, 1, 2, 3, 4]
    for img, lab in rows:
        np.testing.assert_array_equal(img, images[lab])


def test_batch_join_batches_several_inputs_each_on_a_thread_of_its_own():
    a, fill_a = _source([1, 2, 3, 4], name="a")
    b, fill_b = _source([10, 20, 30, 40], name="b")
    batch = tfd.train.batch_join([[a.dequeue()], [b.dequeue()]], batch_size=4)
    assert batch.shape.as_list() == [4]
    with tfd.Session() as sess:
        sess.run([fill_a, fill_b])
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        taken = [int(x) for b in _drain(sess, batch) for x in b]
        coord.request_stop()
        coord.join(threads)
    assert sorted(taken) == [1, 2, 3, 4, 10, 20, 30, 40]


def test_a_padding_queue_pads_each_batch_to_its_longest_element():
    q = tfd.PaddingFIFOQueue(10, [tfd.int32, tfd.string], shapes=[[None, 2], [None]])
    seq, words = tfd.placeholder(tfd.int32, [None, 2]), tfd.placeholder(tfd.string, [None])
    enqueue = q.enqueue([seq, words])
    anything = tfd.placeholder(tfd.int32)  # checked by the queue alone
    unchecked = q.enqueue([anything, words])
    a, w = q.dequeue_many(2)
    assert a.shape.as_list() == [2, None, 2] and w.shape.as_list() == [2, None]
    with tfd.Session() as sess:
        sess.run(enqueue, {seq: [[1, 2]], words: ["x"]})
        sess.run(enqueue, {seq: [[3, 4], [5, 6], [7, 8]], words: ["y", "z"]})
        got_a, got_w = sess.run([a, w])
        np.testing.assert_array_equal(got_a, [[[1, 2], [0, 0], [0, 0]], [[3, 4], [5, 6], [7, 8]]])
        assert got_w.tolist() == [[b"x", b""], [b"y", b"z"]]
        with pytest.raises(tfd.errors.InvalidArgumentError, match="shape"):
            sess.run(unchecked, {anything: np.zeros((2, 3), np.int32), words: ["v"]})
    with pytest.raises(ValueError, match="known rank"):
        tfd.PaddingFIFOQueue(10, [tfd.int32], shapes=[tfd.TensorShape(None)])


def test_batch_with_dynamic_pad_pads_to_the_longest_in_each_batch():
    counter = tfd.Variable(0, name="counter")
    row = tfd.range(counter.count_up_to(3))  # [], [0], [0, 1]; then the input ends
    batch = tfd.train.batch([row], batch_size=3, dynamic_pad=True)
    assert batch.shape.as_list() == [3, None]
    with tfd.Session() as sess:
        sess.run(counter.initializer)
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        np.testing.assert_array_equal(sess.run(batch), [[0, 0], [0, 0], [0, 1]])
        with pytest.raises(tfd.errors.OutOfRangeError):
            sess.run(batch)
        coord.request_stop()
        coord.join(threads)


def test_coordinator_loop_calls_its_target_until_the_stop():
    coord = tfd.train.Coordinator()
    calls = []
    looper = coord.loop(0.01, calls.append, args=("tick",))
    _until(lambda: len(calls) >= 3)
    coord.request_stop()
    coord.join([looper], stop_grace_period_secs=10)
    assert not looper.is_alive() and set(calls) == {"tick"}

    def boom():
        raise RuntimeError("from the looper")

    failing = tfd.train.Coordinator()
    tfd.train.LooperThread.loop(failing, None, boom)  # back to back: fails at once
    with pytest.raises(RuntimeError, match="from the looper"):
        failing.join(stop_grace_period_secs=10)
    with pytest.raises(ValueError, match="target"):
        tfd.train.LooperThread(failing, 1.0, args=(1,))


def test_count_up_to_stops_an_int32_counter_at_its_largest_value():
    v = tfd.Variable(np.int32(2 ** 31 - 2), name="big")
    c = v.count_up_to(2 ** 40)  # past int32's range: the counter must not wrap
    with tfd.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(c) == 2 ** 31 - 2
        with pytest.raises(tfd.errors.OutOfRangeError, match="limit"):
            sess.run(c)
        assert sess.run(v) == 2 ** 31 - 1
