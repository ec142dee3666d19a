"""Sessions against real tfd daemons on free loopback ports: between-graph
placement on a ps task, TF's grpc:// spelling, and UnavailableError from a
task that stopped."""
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tfd
from process_helpers import start_on_thread


def test_a_remote_session_trains_with_variables_on_the_ps(cluster_factory):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        w = tfd.Variable(np.array([1.0, -1.0], np.float32), name="w")
        x = tfd.placeholder(tfd.float32, [2], name="x")
        loss = tfd.reduce_sum(tfd.square(w - x))
        train = tfd.train.GradientDescentOptimizer(0.25).minimize(loss)
    target = "grpc://" + cluster.address("worker", 0)
    with tfd.Session(target, timeout=60) as sess:
        assert sess.task.startswith("/job:worker")
        sess.run(tfd.global_variables_initializer())
        sess.run(train, {x: np.zeros(2, np.float32)})
        np.testing.assert_allclose(sess.run(w), [0.5, -0.5])
    # The variable lives on the ps: a new session (a new graph naming the
    # same variable) sees the trained value.
    tfd.reset_default_graph()
    with tfd.device("/job:ps/task:0"):
        w2 = tfd.Variable(np.zeros(2, np.float32), name="w")
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        np.testing.assert_allclose(sess.run(w2), [0.5, -0.5])


def test_a_callable_repeats_a_step_on_the_cluster(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    x = tfd.placeholder(tfd.float32, [2], name="x")
    total = tfd.Variable(np.zeros(2, np.float32), name="total")
    add = total.assign_add(x)
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(total.initializer)
        step = sess.make_callable(add, [x])
        outs = [step(np.array([1.0, 2.0], np.float32)), step([10.0, 20.0])]
        np.testing.assert_array_equal(outs[0], [1.0, 2.0])
        np.testing.assert_array_equal(outs[1], [11.0, 22.0])
        with pytest.raises(TypeError):
            step()
    with pytest.raises(RuntimeError):  # as run() after close(), TF's
        step([1.0, 1.0])


def test_large_fetches_outlive_their_session_and_writes_to_them_stay_theirs(cluster_factory):
    """A fetch of 1 MiB or more views the message it arrived in, without a
    copy: it stays whole after its session is closed and gone (dropped on
    any thread), and writing to it changes nothing else."""
    cluster = cluster_factory({"worker": 1})
    n = 1 << 19  # 2 MiB of float32
    values = np.arange(n, dtype=np.float32)
    big = tfd.Variable(values, name="big")
    doubled = big * 2.0
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(big.initializer)
        a, b = sess.run([big, doubled])
        held = [sess.make_callable(big)()]
    del sess
    gc.collect()
    np.testing.assert_array_equal(b, 2 * values)
    np.testing.assert_array_equal(held[0], values)
    assert a.flags.writeable
    a[:] = -1
    np.testing.assert_array_equal(held[0], values)
    with tfd.Session(cluster.address("worker", 0), timeout=60) as again:
        np.testing.assert_array_equal(again.run(big), values)
    other = threading.Thread(target=held.pop)  # the last array of that session goes there
    del a, b
    other.start()
    other.join(timeout=60)
    assert not other.is_alive() and not held


def test_a_saver_saves_and_restores_the_clusters_variables(cluster_factory, tmp_path):
    cluster = cluster_factory({"ps": 1, "worker": 1},
                              ["--checkpoint-dir", str(tmp_path / "ckpt-{job}{task}")])
    with tfd.device("/job:ps/task:0"):
        w = tfd.Variable(np.array([1.0, 2.0], np.float32), name="w")
    saver = tfd.train.Saver()
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(w.initializer)
        assert saver.save(sess, global_step=7) == 7
        sess.run(w.assign([5.0, 5.0]))
        assert saver.restore(sess) == 7
        np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])
    with tfd.Session() as local:
        with pytest.raises(ValueError, match="cluster"):
            saver.save(local)


def test_a_stopped_task_is_unavailable(cluster_factory):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device("/job:ps/task:0"):
        v = tfd.Variable(np.ones(2, np.float32), name="v")
    y = v * 2.0
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [2.0, 2.0])
        cluster.stop("ps", 0)
        with pytest.raises(tfd.errors.UnavailableError) as e:
            sess.run(y, timeout=5)
    assert e.value.code == "UNAVAILABLE"
    assert e.value.task == "/job:ps/replica:0/task:0"


def test_closing_on_a_stopped_task_is_bounded_and_a_with_block_keeps_its_own_error(
        cluster_factory):
    """close() on a session whose task does not answer (SIGSTOPped) raises
    DeadlineExceededError after the close's own few seconds, not the
    session's step timeout; leaving a `with` block by an exception raises
    that exception, not the close's."""
    cluster = cluster_factory({"worker": 1})
    c = tfd.constant(1.0)
    first = tfd.Session(cluster.address("worker", 0), timeout=120)
    second = tfd.Session(cluster.address("worker", 0), timeout=120)
    assert first.run(c) == 1.0 and second.run(c) == 1.0
    pid = cluster.procs[("worker", 0)][0].pid
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(tfd.errors.DeadlineExceededError):
            first.close()
        assert time.monotonic() - started < 60  # 120 s + 2 before
        with pytest.raises(KeyError, match="the block's"):
            with second:
                raise KeyError("the block's own error")
    finally:
        os.kill(pid, signal.SIGCONT)
    with tfd.Session(cluster.address("worker", 0), timeout=60) as again:
        assert again.run(c) == 1.0


def test_a_step_does_not_wait_out_its_deadline_for_a_task_that_went_away(cluster_factory):
    """A ps stopped gracefully (SIGTERM: it drains, then refuses
    connections) fails the next step UNAVAILABLE after a few seconds,
    however long the step's deadline: the task was reached before, so it is
    waited for as long as a restart takes, not as one still starting (a
    trainer's recovery does the rest)."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device("/job:ps/task:0"):
        v = tfd.Variable(np.ones(2, np.float32), name="v")
    y = v * 2.0
    with tfd.Session(cluster.address("worker", 0), timeout=300) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [2.0, 2.0])
        cluster.stop("ps", 0)
        started = time.monotonic()
        for _ in range(3):  # the first may fail on the closing stream itself
            with pytest.raises(tfd.errors.UnavailableError) as e:
                sess.run(y, timeout=300)
        assert time.monotonic() - started < 150  # 3 x 300 s before
    assert e.value.task == "/job:ps/replica:0/task:0"


def test_connecting_to_no_task_is_unavailable(cluster_factory):
    from conftest import free_port
    with pytest.raises(tfd.errors.UnavailableError):
        tfd.Session("127.0.0.1:%d" % free_port(), timeout=1)


def test_a_token_is_required_and_a_wrong_one_is_unauthenticated(cluster_factory, tmp_path):
    token = tmp_path / "token"
    token.write_text("4c6976652d7461736b2d746573742d746f6b656e2d3132\n")
    token.chmod(0o600)
    wrong = tmp_path / "wrong"
    wrong.write_text("77726f6e672d746f6b656e2d666f722d746865207465\n")
    wrong.chmod(0o600)
    cluster = cluster_factory({"worker": 1}, ["--auth-token-file", str(token)])
    address = cluster.address("worker", 0)
    with tfd.Session(address, token_file=str(token), timeout=60) as sess:
        assert sess.run(tfd.constant(2.0) * 3.0) == 6.0
    with pytest.raises(tfd.errors.UnauthenticatedError):
        tfd.Session(address, token_file=str(wrong), timeout=10)
    with pytest.raises(tfd.errors.UnauthenticatedError):
        tfd.Session(address, timeout=10)  # no token at all


def test_close_on_one_thread_while_others_run_steps_refuses_their_next_steps(cluster_factory):
    """close() while other threads run steps on the same session: each of
    them ends its step, has it cancelled (CancelledError, TF1's close), or is
    refused (RuntimeError, or FailedPreconditionError from a call already
    under way), and nothing crashes."""
    cluster = cluster_factory({"worker": 1})
    total = tfd.Variable(np.zeros([], np.float32), name="total")
    add = total.assign_add(1.0)
    refused = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often: between any two lines
    try:
        _close_while_stepping(cluster, total, add, refused)
    finally:
        sys.setswitchinterval(switch)
    assert len(refused) == 40
    for e in refused:
        assert isinstance(e, (RuntimeError, tfd.errors.FailedPreconditionError,
                              tfd.errors.CancelledError)), repr(e)


def _close_while_stepping(cluster, total, add, refused):
    for _ in range(10):
        sess = tfd.Session(cluster.address("worker", 0), timeout=60)
        sess.run(total.initializer)
        stepped = [threading.Event() for _ in range(4)]

        def steps(mine):
            try:
                while True:
                    sess.run(add)
                    mine.set()
            except Exception as e:  # noqa: BLE001 (the test sorts them below)
                refused.append(e)

        threads = [threading.Thread(target=steps, args=(e,)) for e in stepped]
        for t in threads:
            t.start()
        for e in stepped:  # every thread is stepping
            assert e.wait(30)
        sess.close()
        for t in threads:
            t.join(30)
            assert not t.is_alive()


def _queue_on_ps(cluster):
    """A queue on the ps of `cluster`, and its dequeue and enqueue of 7."""
    with tfd.device("/job:ps/task:0"):
        q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]],
                                   shared_name="jobs", name="q")
        [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
        put = tfd.raw_ops.queue_enqueue(q, [tfd.constant(7.0)])
    return take, put


def _wait_for_graphs(cluster, job, n):
    """Until `n` graphs are registered on the task: a session registers its
    partition there with its first step that reaches it."""
    deadline = time.monotonic() + 30  # only stops a hang
    while cluster.registered_graphs(job) != n and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cluster.registered_graphs(job) == n


def test_threads_sharing_a_session_step_at_once(cluster_factory):
    """TF1's producer and consumer threads on one session: a dequeue blocked
    on one thread does not hold up the enqueue another thread runs (each
    thread's step has a connection of its own), nor does it hold up a
    callable's run or a second dequeue; every value enqueued is taken once."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    take, put = _queue_on_ps(cluster)
    sess = tfd.Session(cluster.address("worker", 0), timeout=60)
    first = start_on_thread(lambda: sess.run(take, timeout=30))
    second = start_on_thread(lambda: sess.run(take, timeout=30))
    # Each step's own session registered the dequeue: both wait at the queue.
    _wait_for_graphs(cluster, "ps", 2)
    enqueue = sess.make_callable(put)
    enqueue()
    sess.run(put)
    assert (first(60), second(60)) == (7.0, 7.0)
    sess.run(put)  # and the session goes on as one
    assert sess.run(take, timeout=30) == 7.0
    sess.close()


def test_close_cancels_the_blocked_runs_of_every_thread(cluster_factory):
    """close() on a session whose threads each wait in a dequeue, on
    connections of their own: each run raises CancelledError, and none of
    them took a value."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    take, put = _queue_on_ps(cluster)
    sess = tfd.Session(cluster.address("worker", 0), timeout=60)
    joins = [start_on_thread(lambda: sess.run(take, timeout=120)) for _ in range(3)]
    _wait_for_graphs(cluster, "ps", 3)
    sess.close()
    for join in joins:
        ended = join(60)
        assert isinstance(ended, tfd.errors.CancelledError), repr(ended)
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(put)
    with tfd.Session(cluster.address("worker", 0), timeout=60) as again:
        again.run(put)
        assert again.run(take, timeout=30) == 7.0
        with pytest.raises(tfd.errors.DeadlineExceededError):
            again.run(take, timeout=1)  # the one value was the only one


def test_a_callable_does_not_wait_for_the_step_that_holds_its_connection(cluster_factory):
    """A callable made on the session's one connection; another thread's
    dequeue then holds that connection, waiting for what the callable
    enqueues. The callable runs on another connection (prepared there), so
    the dequeue gets its value rather than both waiting out the deadline;
    and it still runs once ops were added to the graph."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    take, put = _queue_on_ps(cluster)
    sess = tfd.Session(cluster.address("worker", 0), timeout=60)
    enqueue = sess.make_callable(put)
    before = cluster.registered_graphs("ps")
    taken = start_on_thread(lambda: sess.run(take, timeout=30))
    _wait_for_graphs(cluster, "ps", before + 1)  # the dequeue waits at the queue
    enqueue()
    assert taken(60) == 7.0
    tfd.constant(1.0, name="later")  # the graph grows: sent again with the next run
    assert sess.run("later:0") == 1.0
    enqueue()
    assert sess.run(take, timeout=30) == 7.0
    sess.close()


def test_a_call_that_finds_every_connection_busy_keeps_its_deadline(cluster_factory):
    """Sixteen threads blocked in dequeues hold every connection a session
    opens: a step from a seventeenth waits for one no longer than its own
    timeout; a callable's step (none given) and make_callable no longer
    than the session's timeout."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    take, put = _queue_on_ps(cluster)
    sess = tfd.Session(cluster.address("worker", 0), timeout=3)
    enqueue = sess.make_callable(put)  # on the first connection, before it is held
    joins = [start_on_thread(lambda: sess.run(take, timeout=120)) for _ in range(16)]
    _wait_for_graphs(cluster, "ps", 16)
    for call in (lambda: sess.run(put, timeout=1), enqueue, lambda: sess.make_callable(put)):
        with pytest.raises(tfd.errors.DeadlineExceededError):
            call()
    sess.close()
    for join in joins:
        assert isinstance(join(60), tfd.errors.CancelledError)


def test_close_on_another_thread_cancels_a_run_blocked_on_a_queue(cluster_factory):
    """TF1's Session.close: a run blocked in a dequeue from an empty queue
    (on the ps) raises CancelledError when another thread closes its
    session, and its dequeue is gone from the ps."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device("/job:ps/task:0"):
        q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]],
                                   shared_name="jobs", name="q")
        [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
        put = tfd.raw_ops.queue_enqueue(q, [tfd.constant(7.0)])
    sess = tfd.Session(cluster.address("worker", 0), timeout=60)
    join = start_on_thread(lambda: sess.run(take, timeout=120))  # not what ends it
    deadline = time.monotonic() + 30  # only stops a hang
    while cluster.registered_graphs("ps") != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cluster.registered_graphs("ps") == 1  # the step reached the queue
    sess.close()
    ended = join(60)
    assert isinstance(ended, tfd.errors.CancelledError), repr(ended)
    assert "closed" in str(ended)
    # The queue still works, and the cancelled dequeue takes nothing from it.
    with tfd.Session(cluster.address("worker", 0), timeout=60) as again:
        again.run(put)
        assert again.run(take, timeout=30) == 7.0
