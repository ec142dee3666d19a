"""tfd.train.MonitoredTrainingSession against real daemons: the C++ loop's
stop, checkpoints, summaries and recovery, with Python hooks around its
steps."""
import logging
import threading

import numpy as np
import pytest

import tfd


def build_model(cluster):
    """w -> 3 by SGD, variables on the ps; loss as a summary."""
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.zeros(2, np.float32), name="w")
        loss = tfd.reduce_sum(tfd.square(w - 3.0), name="loss")
        tfd.summary.scalar("loss", loss)
        tfd.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return w, loss


class Recorder(tfd.train.SessionRunHook):
    """Every call, and the loss it asked for after each step."""

    def __init__(self, loss):
        self.loss, self.calls, self.losses = loss, [], []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tfd.train.SessionRunArgs({"loss": self.loss})

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.losses.append(float(run_values.results["loss"]))

    def end(self, session):
        self.calls.append("end")


def test_steps_until_the_last_step_with_python_hooks(cluster_factory, caplog):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    w, loss = build_model(cluster)
    recorder = Recorder(loss)
    logged = tfd.train.LoggingTensorHook({"the_loss": loss}, every_n_iter=2)
    hooks = [tfd.train.StopAtStepHook(last_step=5), recorder, logged]
    steps = []
    with caplog.at_level(logging.INFO, logger="tfd"):
        with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), hooks=hooks,
                                                timeout=60) as sess:
            while not sess.should_stop():
                steps.append(sess.run({"step": "train/global_step:0"}))
        result = sess.result
    assert [int(s["step"]) for s in steps] == [1, 2, 3, 4, 5]
    # 3 - 3 * 0.8^k after k steps of SGD at 0.1 on (w - 3)^2, on the ps.
    with tfd.Session(cluster.address("worker", 0), timeout=60) as plain:
        np.testing.assert_allclose(plain.run(w), [3 - 3 * 0.8 ** 5] * 2, rtol=1e-5)
    assert recorder.calls[:2] == ["begin", "after_create_session"]
    assert recorder.calls[-1] == "end"
    assert recorder.calls.count("after_run") == 5
    assert recorder.losses == sorted(recorder.losses, reverse=True)
    assert result["global_step"] == 5 and result["local_steps"] == 5
    assert len([r for r in caplog.records if "the_loss = " in r.getMessage()]) == 3
    with pytest.raises(RuntimeError):
        sess.run(loss)
    # Opened again at its last step (a finished job restarted), the loop
    # says it should stop before its first step: TF1's canonical loop runs
    # no step and never sees a None from run().
    again_steps = []
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), timeout=60,
                                            hooks=[tfd.train.StopAtStepHook(last_step=5)]) as again:
        while not again.should_stop():
            again_steps.append(again.run("train/global_step:0"))
    assert again_steps == [] and again.result["global_step"] == 5


def test_a_hook_that_raises_ends_the_loop_with_its_exception(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    build_model(cluster)

    class Boom(tfd.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise KeyError("boom")

    sess = tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), hooks=[Boom()],
                                              timeout=60)
    with pytest.raises(KeyError, match="boom"):
        sess.run("train")
    assert sess.should_stop()
    sess.close()


def test_local_variables_are_initialized_in_every_session(cluster_factory):
    """TF1's local_init_op: a metric's counts (local variables on the
    worker) start at zero in each MonitoredTrainingSession."""
    cluster = cluster_factory({"worker": 1})
    _, loss = build_model(cluster)
    mean_loss, update = tfd.metrics.mean(loss)
    for _ in range(2):  # the second session counts afresh
        with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), timeout=60,
                                                hooks=[tfd.train.StopAtStepHook(num_steps=3)]
                                                ) as sess:
            seen = []
            while not sess.should_stop():
                got = sess.run({"loss": loss, "mean": update})
                seen.append(got["loss"])
                np.testing.assert_allclose(got["mean"], np.mean(seen), rtol=1e-6)
        assert len(seen) == 3


def test_chief_saves_checkpoints_and_summaries(cluster_factory, tmp_path):
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    build_model(cluster)
    logdir = tmp_path / "logs"
    hooks = [tfd.train.StopAtStepHook(num_steps=4)]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                            checkpoint_dir=str(logdir), hooks=hooks,
                                            save_checkpoint_steps=2, save_summaries_steps=2,
                                            timeout=60) as sess:
        while not sess.should_stop():
            sess.run("train")
    assert sess.result["global_step"] == 4
    assert sess.result["checkpoints"] >= 2
    assert any((tmp_path / "ckpt-ps0").iterdir())
    events = list(logdir.glob("events.out.tfevents.*"))
    assert len(events) == 1
    data = events[0].read_bytes()
    assert b"brain.Event:2" in data and b"loss" in data and b"global_step/sec" in data


def _fields(data):
    from tfd import example_proto  # its wire reader: (number, wire type, value)
    return list(example_proto._fields(data))


def test_histogram_summaries_reach_tensorboard_files(cluster_factory, tmp_path):
    """tfd.summary.histogram as TensorBoard reads it: an Event (a TFRecord)
    whose Summary.value holds the tag and a HistogramProto, written at
    the steps a summary write follows."""
    import struct
    cluster = cluster_factory({"ps": 1, "worker": 1})
    w, _ = build_model(cluster)
    tfd.summary.histogram("weights", w)
    logdir = tmp_path / "logs"
    hooks = [tfd.train.StopAtStepHook(num_steps=4),
             tfd.train.SummarySaverHook(save_steps=2, output_dir=str(logdir))]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                            hooks=hooks, timeout=60) as sess:
        while not sess.should_stop():
            sess.run("train")
    [events] = logdir.glob("events.out.tfevents.*")
    histograms = {}  # step -> {field number: value} of the HistogramProto
    for record in tfd.python_io.tf_record_iterator(str(events)):
        event = {n: v for n, _, v in _fields(record)}
        for n, _, value in _fields(event.get(5, b"")):  # Summary.value
            fields = {vn: vv for vn, _, vv in _fields(value)}
            if fields.get(1) == b"weights" and 5 in fields:
                histograms[event[2]] = {hn: hv for hn, _, hv in _fields(fields[5])}
    assert sorted(histograms) == [2, 4]
    for h in histograms.values():
        num, low, high = (struct.unpack("<d", h[i])[0] for i in (3, 1, 2))
        counts = struct.unpack("<%dd" % (len(h[7]) // 8), h[7])
        limits = struct.unpack("<%dd" % (len(h[6]) // 8), h[6])
        assert num == 2 and sum(counts) == 2 and len(limits) == len(counts)
        assert low == high and 0 < low < 3  # w's two equal values on their way to 3


def test_training_goes_on_over_a_restarted_ps(cluster_factory, tmp_path):
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    w, _ = build_model(cluster)
    hooks = [tfd.train.StopAtStepHook(last_step=8)]
    seen = []
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                            checkpoint_dir=str(tmp_path / "logs"), hooks=hooks,
                                            save_checkpoint_steps=1, timeout=60,
                                            step_timeout=30) as sess:
        for _ in range(4):
            seen.append(int(sess.run("train/global_step:0")))
        cluster.stop("ps", 0)
        cluster.start("ps", 0)  # restores its newest checkpoint before it listens
        while not sess.should_stop():
            seen.append(int(sess.run("train/global_step:0")))
    assert seen[:4] == [1, 2, 3, 4]
    # The model came back at a saved step, not at 0: no step is numbered
    # below the one the restart interrupted, and the run ends at its last.
    assert min(seen[4:]) >= 4 and seen[-1] == 8
    assert sess.result["global_step"] == 8
    # It saw the ps come back alone at step 4 and took the cluster there.
    assert 4 in sess.result["restored_steps"]


class Listener(tfd.train.CheckpointSaverListener):
    """Every call with its step; after_save stops the loop at stop_at."""

    def __init__(self, stop_at=None, fail_in=None):
        self.calls, self.stop_at, self.fail_in = [], stop_at, fail_in

    def begin(self):
        self.calls.append(("begin", None))

    def before_save(self, session, step):
        self.calls.append(("before_save", step))
        if self.fail_in == "before_save":
            raise KeyError("listener broke")

    def after_save(self, session, step):
        assert isinstance(session, tfd.train.MonitoredTrainingSession)
        self.calls.append(("after_save", step))
        return step == self.stop_at

    def end(self, session, step):
        self.calls.append(("end", step))


def test_checkpoint_listeners_are_told_around_each_save_and_may_stop_the_loop(cluster_factory,
                                                                             tmp_path):
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    build_model(cluster)
    target = cluster.address("worker", 0)

    def train(listener, num_steps):
        saver = tfd.train.CheckpointSaverHook("unused", save_steps=2, listeners=[listener])
        with tfd.train.MonitoredTrainingSession(
                target, is_chief=True, timeout=60,
                hooks=[saver, tfd.train.StopAtStepHook(num_steps=num_steps)]) as sess:
            while not sess.should_stop():
                sess.run("train")
        return sess.result

    told = Listener()
    assert train(told, 4)["global_step"] == 4
    # The initialized model (step 0), every 2 steps; the final save finds
    # step 4 saved already.
    assert told.calls == [("begin", None), ("before_save", 0), ("after_save", 0),
                          ("before_save", 2), ("after_save", 2), ("before_save", 4),
                          ("after_save", 4), ("end", 4)]
    stopping = Listener(stop_at=6)
    assert train(stopping, 100)["global_step"] == 6
    assert ("after_save", 6) in stopping.calls and stopping.calls[-1] == ("end", 6)
    with pytest.raises(KeyError, match="listener broke"):
        train(Listener(fail_in="before_save"), 4)
    for refused in (dict(saver=object()), dict(scaffold=object())):
        with pytest.raises(ValueError, match="not supported"):
            tfd.train.CheckpointSaverHook("d", save_steps=1, **refused)
    with pytest.raises(ValueError, match="summary_writer"):  # goes with summary_op
        tfd.train.SummarySaverHook(output_dir="d", summary_writer=object())
    for refused in ("init_fn", "init_feed_dict", "ready_op", "ready_for_local_init_op",
                    "saver"):
        with pytest.raises(ValueError, match=refused + " not supported"):
            tfd.train.Scaffold(**{refused: object()})
    with pytest.raises(TypeError, match="Scaffold"):
        tfd.train.MonitoredTrainingSession(target, scaffold=object())
    with pytest.raises(ValueError, match="save_summaries_secs is not supported"):
        tfd.train.MonitoredTrainingSession(target, save_summaries_steps=None,
                                           save_summaries_secs=30)


def damage(folder):
    """Flips a bit in the first tensor of every checkpoint in `folder` (its
    payload starts at byte 64); the files, and their bytes afterwards."""
    files = sorted(folder.glob("ckpt-*.tfdckpt"))
    assert len(files) >= 2
    for f in files:
        data = bytearray(f.read_bytes())
        data[64] ^= 1
        f.write_bytes(bytes(data))
    return files, {f: f.read_bytes() for f in files}


def test_a_cluster_whose_every_checkpoint_is_damaged_is_not_trained_afresh(cluster_factory,
                                                                            tmp_path):
    """TF1 raises DataLossError rather than start a model over when its
    checkpoint is damaged; the ps, which restores on start, starts empty,
    and the chief must not initialize it and save over the checkpoints."""
    args = ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")]
    cluster = cluster_factory({"ps": 1, "worker": 1}, args)
    build_model(cluster)
    options = dict(is_chief=True, checkpoint_dir=str(tmp_path / "logs"), timeout=60)
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), save_checkpoint_steps=2,
                                            hooks=[tfd.train.StopAtStepHook(num_steps=4)],
                                            **options) as sess:
        while not sess.should_stop():
            sess.run("train")
    cluster.stop_all()
    files, damaged = damage(tmp_path / "ckpt-ps0" / "ps-0")
    cluster.start("ps", 0)
    cluster.start("worker", 0)
    with pytest.raises(tfd.errors.DataLossError, match="checksum mismatch") as raised:
        tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), **options)
    assert str(files[-1]) in str(raised.value)
    assert {f: f.read_bytes() for f in files} == damaged  # nothing saved over them
    assert sorted((tmp_path / "ckpt-ps0" / "ps-0").glob("ckpt-*.tfdckpt")) == files


def test_a_ps_restarted_over_damaged_checkpoints_is_not_initialized_afresh(cluster_factory,
                                                                            tmp_path):
    """Two ps tasks: the global step on ps 0, w on ps 1. ps 1 restarts
    mid-run and finds its every checkpoint damaged, so it starts empty while
    ps 0 keeps its values: the chief's recovery must not initialize w alone
    (a model half trained, half new) but fail as TF1 does. Checkpoints come
    every 2 steps, so none holds the step the restart interrupts (3)."""
    args = ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")]
    cluster = cluster_factory({"ps": 2, "worker": 1}, args)
    w, _ = build_model(cluster)
    assert w.device.startswith("/job:ps/task:1")
    with pytest.raises(tfd.errors.DataLossError, match="checksum mismatch"):
        with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                                checkpoint_dir=str(tmp_path / "logs"),
                                                save_checkpoint_steps=2, timeout=60,
                                                step_timeout=30) as sess:
            for _ in range(3):
                sess.run("train")
            cluster.stop("ps", 1)
            files, damaged = damage(tmp_path / "ckpt-ps1" / "ps-1")
            cluster.start("ps", 1)
            for _ in range(3):
                sess.run("train")
    assert {f: f.read_bytes() for f in files} == damaged


class FeedsRate(tfd.train.SessionRunHook):
    """Feeds the learning rate of every step, as a schedule hook would."""

    def __init__(self, lr, value, fetch=None):
        self.lr, self.value, self.fetch, self.fetched = lr, value, fetch, []

    def before_run(self, run_context):
        return tfd.train.SessionRunArgs(self.fetch, feed_dict={self.lr: self.value})

    def after_run(self, run_context, run_values):
        self.fetched.append(run_values.results)


def test_steps_are_fed_by_the_user_and_the_hooks_through_a_restarted_ps(cluster_factory,
                                                                        tmp_path):
    """TF1's distributed loop feeds each step (mon_sess.run(train_op,
    feed_dict=...)); hooks may feed too (here the learning rate, a
    placeholder). A step run again after the ps restarted is fed the same
    values, so the model ends where six fed steps take it."""
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.zeros(2, np.float32), name="w")
        target = tfd.placeholder(tfd.float32, [2], name="target")
        lr = tfd.placeholder(tfd.float32, [], name="lr")
        loss = tfd.reduce_sum(tfd.square(w - target), name="loss")
        tfd.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)
    hooks = [tfd.train.StopAtStepHook(last_step=6), FeedsRate(lr, 0.1)]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                            checkpoint_dir=str(tmp_path / "logs"), hooks=hooks,
                                            save_checkpoint_steps=1, timeout=60,
                                            step_timeout=30) as sess:
        for _ in range(3):
            sess.run("train", feed_dict={target: [3.0, -3.0]})
        cluster.stop("ps", 0)
        cluster.start("ps", 0)
        while not sess.should_stop():
            sess.run("train", feed_dict={"target:0": np.array([3.0, -3.0], np.float32)})
    assert sess.result["global_step"] == 6
    with tfd.Session(cluster.address("worker", 0), timeout=60) as plain:
        np.testing.assert_allclose(plain.run(w), np.array([3, -3]) * (1 - 0.8 ** 6), rtol=1e-5)


def test_a_tensor_fed_twice_in_a_step_is_tf1s_runtime_error(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    with tfd.device("/job:worker/task:0"):
        w = tfd.Variable(np.zeros([], np.float32), name="w")
        lr = tfd.placeholder(tfd.float32, [], name="lr")
        tfd.train.GradientDescentOptimizer(lr).minimize(tfd.square(w - 1.0))
    fetched = FeedsRate(lr, 0.5, fetch=lr)
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), hooks=[fetched],
                                            timeout=60) as sess:
        sess.run("train")
        assert fetched.fetched == [np.float32(0.5)]  # a hook's fetch sees what the hook fed
        with pytest.raises(RuntimeError, match="Same tensor is fed .* Conflict.*: lr:0"):
            sess.run("train", feed_dict={lr: 0.25})


def test_the_thread_that_made_a_session_steps_it(cluster_factory):
    """Its client lives on that thread's event loop (a step is no hand-over
    to another thread): another thread's run() is refused, and the loop
    goes on."""
    cluster = cluster_factory({"worker": 1})
    build_model(cluster)
    hooks = [tfd.train.StopAtStepHook(last_step=3)]
    raised = []

    def step_elsewhere(sess):
        try:
            sess.run("train")
        except Exception as e:  # noqa: BLE001 (the test looks at what it is)
            raised.append(e)

    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), hooks=hooks,
                                            timeout=60) as sess:
        other = threading.Thread(target=step_elsewhere, args=(sess,))
        other.start()
        other.join(timeout=60)
        assert not other.is_alive()
        steps = 0
        while not sess.should_stop():
            sess.run("train")
            steps += 1
    assert len(raised) == 1 and isinstance(raised[0], tfd.errors.FailedPreconditionError)
    assert raised[0].code == "FAILED_PRECONDITION"
    assert steps == 3 and sess.result["global_step"] == 3


def test_a_worker_steps_without_the_other_workers(cluster_factory):
    """The ops the session adds to the graph (train/global_step) live where
    the step's update does: worker 1 trains on while worker 0 is down."""
    cluster = cluster_factory({"ps": 1, "worker": 2})
    build_model(cluster)
    hooks = [tfd.train.StopAtStepHook(last_step=4)]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 1), is_chief=True,
                                            hooks=hooks, timeout=60, max_wait_secs=5) as sess:
        sess.run("train")
        cluster.stop("worker", 0)
        while not sess.should_stop():
            sess.run("train")
    assert sess.result["global_step"] == 4 and sess.result["recoveries"] == 0


def test_without_a_master_it_trains_in_process_and_resumes(tmp_path):
    """As TF1's in-process training: a second run on the same
    checkpoint_dir goes on from the first's last checkpoint."""
    import socket

    def train(steps):
        """The run's result and w as its first step read it."""
        tfd.reset_default_graph()
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.zeros(2, np.float32), name="w")
        w_before = tfd.identity(w) - 0.0  # a value the step's gradient needs: w before its update
        loss = tfd.reduce_sum(tfd.square(w_before - 3.0))
        tfd.summary.scalar("loss", loss)
        tfd.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        hooks = [tfd.train.StopAtStepHook(num_steps=steps)]
        first = None
        with tfd.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                                save_checkpoint_steps=2,
                                                save_summaries_steps=2) as sess:
            while not sess.should_stop():
                value = sess.run(w_before)
                first = value if first is None else first
        host, port = sess._local_server.target[len("grpc://"):].split(":")
        with pytest.raises(ConnectionRefusedError):  # its daemon is gone with it
            socket.create_connection((host, int(port)), timeout=5).close()
        return sess.result, first

    result, first = train(4)
    assert result["global_step"] == 4
    np.testing.assert_array_equal(first, [0, 0])
    result, first = train(2)
    assert result["global_step"] == 6  # restored at step 4, then 2 more
    # w -> 0.8 w + 0.6 each step: after 4 steps, 3 (1 - 0.8^4).
    np.testing.assert_allclose(first, [3 * (1 - 0.8 ** 4)] * 2, rtol=1e-5)
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2


def test_step_counter_and_feed_fn_hooks_are_tf1s(cluster_factory, tmp_path, caplog):
    """StepCounterHook: global_step/sec every n global steps after the first,
    logged and written; FeedFnHook: each step fed what feed_fn returns."""
    from tfd import example_proto
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(0.0, name="w")
        x = tfd.placeholder(tfd.float32, [], name="x")
        tfd.train.GradientDescentOptimizer(1.0).minimize(-x * w, global_step=global_step)
    fed = iter([1.0, 2.0, 3.0, 4.0, 5.0])
    hooks = [tfd.train.StopAtStepHook(num_steps=5),
             tfd.train.StepCounterHook(every_n_steps=2, output_dir=tmp_path / "rate"),
             tfd.train.FeedFnHook(lambda: {x: next(fed)})]
    with caplog.at_level(logging.INFO, logger="tfd"):
        with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                                hooks=hooks, timeout=60) as sess:
            while not sess.should_stop():
                sess.run("train")
    with tfd.Session(cluster.address("worker", 0), timeout=60) as s:
        assert s.run(w) == 15.0  # each step added what it was fed
    assert len([r for r in caplog.records if "global_step/sec" in r.getMessage()]) == 2
    tfd.summary.FileWriterCache.clear()
    [events] = (tmp_path / "rate").glob("events.out.tfevents.*")
    steps = []
    for record in tfd.python_io.tf_record_iterator(str(events)):
        event = {n: v for n, _, v in example_proto._fields(record)}
        if 5 in event:
            [value] = tfd.Summary.FromString(event[5]).value
            assert value.tag == "global_step/sec" and value.simple_value > 0
            steps.append(event[2])
    assert steps == [3, 5]  # the clock starts at step 1
    with pytest.raises(ValueError):
        tfd.train.StepCounterHook(every_n_steps=None)


def test_a_scaffolds_ops_are_what_the_loop_runs(tmp_path):
    """Scaffold(init_op, local_init_op, summary_op): the chief initializes
    with init_op, every session runs local_init_op, and the loop's summaries
    are summary_op's alone, as TF1's."""
    global_step = tfd.train.get_or_create_global_step()
    w = tfd.Variable(0.0, name="w")
    counted = tfd.Variable(0.0, name="counted", collections=[tfd.GraphKeys.LOCAL_VARIABLES])
    init = tfd.group(tfd.variables_initializer([global_step], name="init_step"),
                     tfd.assign(w, 10.0), name="my_init")
    local_init = tfd.group(tfd.assign(counted, 7.0), name="my_local_init")
    tfd.summary.scalar("w", w)
    only = tfd.summary.scalar("only_this", w * 2, collections=[])
    loss = tfd.square(w - 3.0)  # computed from w before the step's update
    tfd.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=global_step)
    scaffold = tfd.train.Scaffold(init_op=init, local_init_op=local_init, summary_op=only)
    assert scaffold.finalize() is scaffold
    seen = []
    with tfd.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), scaffold=scaffold,
                                            save_summaries_steps=1,
                                            hooks=[tfd.train.StopAtStepHook(num_steps=2)]) as sess:
        while not sess.should_stop():
            seen.append(sess.run([loss, counted]))
    assert seen[0] == [49.0, 7.0]  # init_op's w (10), local_init_op's count
    tags = set()
    for path in tmp_path.glob("events.out.tfevents.*"):
        for record in tfd.python_io.tf_record_iterator(str(path)):
            from tfd import example_proto
            event = {n: v for n, _, v in example_proto._fields(record)}
            if 5 in event:
                tags |= {v.tag for v in tfd.Summary.FromString(event[5]).value}
    assert tags == {"only_this"}
    tfd.summary.FileWriterCache.clear()
    # A second run on the same checkpoint_dir restores w and keeps it: the
    # scaffold's init_op (nested groups) runs only for what was not restored.
    with tfd.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), scaffold=scaffold,
                                            hooks=[tfd.train.StopAtStepHook(num_steps=1)]) as sess:
        restored = sess.run(loss)
    # w -> w - 0.5 (w - 3) each step: 10, 6.5, then 4.75 saved at the end.
    assert restored == (4.75 - 3.0) ** 2
    # The loop runs "init" by name: another op of that name is refused, saying so.
    tfd.reset_default_graph()
    v = tfd.Variable(1.0)
    tfd.variables_initializer([v])  # named "init", as TF1 names it
    mine = tfd.train.Scaffold(init_op=tfd.group(tfd.assign(v, 2.0)))
    with pytest.raises(ValueError, match="runs 'init' by name"):
        tfd.train.MonitoredTrainingSession(scaffold=mine)


def test_a_grouped_init_op_never_runs_over_a_trained_model(cluster_factory):
    """TF1's Scaffold(init_op=tf.group(tf.global_variables_initializer(),
    ...)): a chief that comes back to a cluster whose ps kept training finds
    every variable initialized and runs no init, as TF1's SessionManager
    (its ready_op) decides; the groups inside the init op are looked into."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(0.0, name="w")
        loss = tfd.square(w - 3.0)  # computed from w before the step's update
        tfd.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=global_step)
    init = tfd.group(tfd.group(tfd.global_variables_initializer(name="all_vars")),
                     name="grouped_init")

    def first_loss():
        scaffold = tfd.train.Scaffold(init_op=init)
        with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                                scaffold=scaffold, timeout=60) as sess:
            return sess.run(loss)  # one step: w -> w - 0.5 (w - 3)

    assert first_loss() == 9.0  # w = 0
    assert first_loss() == 2.25  # w = 1.5, the first session's, not 0 again
