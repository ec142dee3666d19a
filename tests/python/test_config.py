"""tfd.ConfigProto, RunOptions and RunMetadata: TF1's messages, and the
deadlines they set for a session's steps, in process and on a cluster, and
the step traces RunMetadata gets.

A blocked dequeue ends at the deadline asked for; each one runs on a thread
that must end well before the deadline the runtime would otherwise apply
(300 s: the in-process default, and the daemons' --step-timeout here), so a
deadline that did not take effect fails the test rather than slowing it."""
import json

import pytest

import tfd
from process_helpers import start_on_thread


def _empty_queue_dequeue(device=None):
    with tfd.device(device):
        q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]], name="q")
        [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
    return take


def _ends_in_deadline_exceeded(fn):
    ended = start_on_thread(fn)(60)
    assert isinstance(ended, tfd.errors.DeadlineExceededError), repr(ended)


def test_messages_take_tf1_fields_and_only_those():
    config = tfd.ConfigProto(allow_soft_placement=True, operation_timeout_in_ms=5000,
                             gpu_options=tfd.GPUOptions(per_process_gpu_memory_fraction=0.5))
    config.gpu_options.allow_growth = True
    config.graph_options.optimizer_options.global_jit_level = tfd.OptimizerOptions.ON_1
    config.device_count["CPU"] = 2
    assert config.gpu_options.allow_growth
    assert config.gpu_options.per_process_gpu_memory_fraction == 0.5
    assert tfd.ConfigProto().device_count == {}  # not shared with `config`
    assert tfd.ConfigProto(gpu_options={"allow_growth": True}).gpu_options.allow_growth
    assert "operation_timeout_in_ms=5000" in repr(config)
    with pytest.raises(ValueError, match='ConfigProto has no "operation_timeout" field'):
        tfd.ConfigProto(operation_timeout=5000)
    with pytest.raises(AttributeError, match="allow_grow"):
        config.gpu_options.allow_grow = True
    with pytest.raises(TypeError, match="GPUOptions"):
        tfd.ConfigProto(gpu_options=True)
    assert tfd.RunOptions().trace_level == tfd.RunOptions.NO_TRACE == 0
    assert tfd.RunOptions.TraceLevel.FULL_TRACE == tfd.RunOptions.FULL_TRACE == 3
    metadata = tfd.RunMetadata()
    assert metadata.step_stats.dev_stats == [] and metadata.partition_graphs == []


def test_wrong_types_and_two_timeouts_are_refused():
    x = tfd.constant(1.0)
    with pytest.raises(TypeError, match="config must be a tfd.ConfigProto, not dict"):
        tfd.Session(config={"operation_timeout_in_ms": 1000})
    with tfd.Session() as sess:
        with pytest.raises(TypeError, match="options must be a tfd.RunOptions, not RunMetadata"):
            sess.run(x, options=tfd.RunMetadata())
        with pytest.raises(TypeError, match="run_metadata must be a tfd.RunMetadata, not str"):
            sess.run(x, run_metadata="trace")
        with pytest.raises(ValueError, match="both timeout"):
            sess.run(x, timeout=5, options=tfd.RunOptions(timeout_in_ms=1000))


def test_deadlines_in_process():
    """The session's operation_timeout_in_ms bounds a step given none; a
    run's timeout_in_ms wins over it."""
    take = _empty_queue_dequeue()
    with tfd.Session(config=tfd.ConfigProto(operation_timeout_in_ms=1000)) as sess:
        _ends_in_deadline_exceeded(lambda: sess.run(take))
    with tfd.Session(config=tfd.ConfigProto(operation_timeout_in_ms=60000)) as sess:
        _ends_in_deadline_exceeded(
            lambda: sess.run(take, options=tfd.RunOptions(timeout_in_ms=1000)))


def _traced(sess, fetch):
    """run_metadata of one traced run of `fetch`: {device: {node: stats}}."""
    metadata = tfd.RunMetadata()
    sess.run(fetch, options=tfd.RunOptions(trace_level=tfd.RunOptions.FULL_TRACE),
             run_metadata=metadata)
    return {d.device: {n.node_name: n for n in d.node_stats}
            for d in metadata.step_stats.dev_stats}


def test_a_traced_run_fills_run_metadata_and_makes_a_chrome_trace():
    x = tfd.placeholder(tfd.float32, [2], name="x")
    y = tfd.multiply(x, 3.0, name="y")
    with tfd.Session() as sess:
        untraced = tfd.RunMetadata()
        sess.run(y, {x: [1, 2]}, run_metadata=untraced)  # no trace_level: no trace
        assert untraced.step_stats.dev_stats == []
        metadata = tfd.RunMetadata()
        sess.run(y, {x: [1, 2]}, options=tfd.RunOptions(trace_level=tfd.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    [dev] = metadata.step_stats.dev_stats
    assert dev.device.endswith("/device:CPU:0")
    [mul] = [n for n in dev.node_stats if n.node_name == "y"]
    assert mul.all_start_micros > 1.5e15  # microseconds since the epoch: after 2017
    assert mul.all_end_rel_micros >= 0 and mul.timeline_label.startswith("y = Mul(")
    trace = json.loads(tfd.timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in boxes if e["args"]["name"] == "y"] == ["Mul"]
    assert [e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"] == [dev.device]


def test_deadlines_on_a_cluster(cluster_factory):
    """The same on a session whose master is a worker and whose queue is on
    the ps, and a MonitoredTrainingSession's steps bounded by its config."""
    cluster = cluster_factory({"ps": 1, "worker": 1}, ["--step-timeout", "300"])
    take = _empty_queue_dequeue("/job:ps/task:0")
    worker = cluster.address("worker", 0)
    config = tfd.ConfigProto(operation_timeout_in_ms=1000)
    with tfd.Session(worker, config=config, timeout=60) as sess:
        _ends_in_deadline_exceeded(lambda: sess.run(take))
        _ends_in_deadline_exceeded(sess.make_callable(take))
    with tfd.Session(worker, config=tfd.ConfigProto(operation_timeout_in_ms=60000),
                     timeout=60) as sess:
        _ends_in_deadline_exceeded(
            lambda: sess.run(take, options=tfd.RunOptions(timeout_in_ms=1000)))
        # A traced step across both tasks: each task's nodes under its devices.
        with tfd.device("/job:ps/task:0"):
            on_ps = tfd.add(tfd.constant(1.0), 2.0, name="on_ps")
        with tfd.device("/job:worker/task:0"):
            on_worker = tfd.multiply(on_ps, 3.0, name="on_worker")
        traced = _traced(sess, on_worker)
        ps = [d for d in traced if d.startswith("/job:ps/replica:0/task:0/")]
        worker_devices = [d for d in traced if d.startswith("/job:worker/replica:0/task:0/")]
        assert any("on_ps" in traced[d] for d in ps)
        assert any("on_worker" in traced[d] for d in worker_devices)

    tfd.group(take, name="train")  # each step of the loop waits at the queue

    def monitored_step():  # the session's own thread runs its steps
        # The loop runs a step past its deadline again: max_recoveries=0 ends it at once.
        with tfd.train.MonitoredTrainingSession(worker, config=config, timeout=60,
                                                max_recoveries=0) as mon:
            with pytest.raises(ValueError, match="timeout_in_ms"):
                mon.run("train", options=tfd.RunOptions(timeout_in_ms=1000))
            mon.run("train")
    _ends_in_deadline_exceeded(monitored_step)
    with pytest.raises(ValueError, match="both step_timeout"):
        tfd.train.MonitoredTrainingSession(worker, config=config, step_timeout=5)
