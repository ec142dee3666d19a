"""What a session holds goes when it is closed: its connection and thread
(counted as the process's open fds and threads), while a large fetch it
returned stays valid; a MonitoredTrainingSession is closed from its own
thread only, and close() drops its connection."""
import gc

import numpy as np
import tfd
from process_helpers import build_model, on_thread, open_fds, open_sockets, os_threads


def test_close_frees_the_connection_and_thread_while_large_fetches_stay_valid(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    values = np.arange(1 << 19, dtype=np.float32)  # 2 MiB: fetched without a copy
    big = tfd.Variable(values, name="big")
    doubled = big * 2.0
    with tfd.Session(cluster.address("worker", 0), timeout=60) as warm:
        warm.run(big.initializer)  # what the first session loads once is not counted
    fds, threads = open_fds(), os_threads()
    sess = tfd.Session(cluster.address("worker", 0), timeout=60)
    a, b = sess.run([big, doubled])
    c = sess.make_callable(doubled)()
    assert open_fds() > fds and os_threads() > threads
    sess.close()
    assert (open_fds(), os_threads()) == (fds, threads)
    del sess
    gc.collect()
    # Memory freed by the session would be reused by the next one's frames.
    with tfd.Session(cluster.address("worker", 0), timeout=60) as again:
        for _ in range(3):
            again.run(doubled)
    np.testing.assert_array_equal(a, values)
    np.testing.assert_array_equal(b, 2 * values)
    np.testing.assert_array_equal(c, 2 * values)
    assert (open_fds(), os_threads()) == (fds, threads)


def test_a_monitored_session_is_closed_by_its_thread_and_close_frees_it(cluster_factory):
    cluster = cluster_factory({"worker": 1})
    build_model(cluster)
    fds, sockets = open_fds(), open_sockets()
    sess = tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), timeout=60)
    sess.run("train")
    raised = on_thread(sess.close)
    assert isinstance(raised, tfd.errors.FailedPreconditionError)
    assert "another thread" in str(raised)
    sess.run("train")  # still open for its own thread
    sess.close()
    assert sess.result["global_step"] == 2
    assert open_sockets() == sockets  # before Python collects it
    del sess, raised  # its traceback holds the session too
    gc.collect()
    assert open_fds() == fds  # its thread's event loop went with it
