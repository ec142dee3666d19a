"""tfd.train.Server: a TF1 script's own task, served by a tfd daemon it
starts as a child: a worker's session through server.target trains with a
variable on a ps Server, join() returns when the daemon ends, a daemon that
cannot serve is an error naming it, and no daemon outlives its script."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import tfd
from conftest import free_port


def _cluster():
    return tfd.train.ClusterSpec({"ps": ["127.0.0.1:%d" % free_port()],
                                  "worker": ["127.0.0.1:%d" % free_port()]})


def test_a_worker_trains_through_server_target_with_its_variable_on_a_ps_server():
    cluster = _cluster()
    ps = tfd.train.Server(cluster, job_name="ps", task_index=0, extra_args=["--threads", "1"])
    worker = tfd.train.Server(cluster, job_name="worker", task_index=0,
                              extra_args=["--threads", "1"])
    try:
        assert worker.target == "grpc://" + cluster.job_tasks("worker")[0]
        with tfd.device("/job:ps/task:0"):
            v = tfd.Variable(1.0, name="v")
        with tfd.device("/job:worker/task:0"):
            step = tfd.assign_add(v, 2.0)
        with tfd.Session(worker.target, timeout=60) as sess:
            sess.run(v.initializer)
            sess.run(step)
            assert sess.run(v) == 3.0
        joined = threading.Thread(target=ps.join)
        joined.start()
        ps.stop()
        joined.join(30)
        assert not joined.is_alive()  # join() ended with the daemon
    finally:
        ps.stop()
        worker.stop()


def test_a_local_server_serves_a_session_of_its_own():
    server = tfd.train.Server.create_local_server()
    try:
        with tfd.Session(server.target, timeout=60) as sess:
            assert sess.run(tfd.constant(2.0) * 3.0) == 6.0
    finally:
        server.stop()


def test_a_daemon_that_cannot_serve_and_a_task_not_in_the_cluster_are_errors():
    cluster = _cluster()
    with pytest.raises(ValueError, match="job 'chief' is not in the cluster"):
        tfd.train.Server(cluster, job_name="chief", task_index=0)
    with pytest.raises(ValueError, match="tasks 0..0, not 3"):
        tfd.train.Server(cluster, job_name="ps", task_index=3)
    first = tfd.train.Server(cluster, job_name="ps", task_index=0, extra_args=["--threads", "1"])
    try:
        # The same task again: its port is taken, the second daemon exits.
        with pytest.raises(tfd.errors.UnavailableError, match="/job:ps/task:0 .* exited"):
            tfd.train.Server(cluster, job_name="ps", task_index=0)
    finally:
        first.stop()


def test_no_daemon_outlives_the_script_that_started_it():
    port = free_port()
    script = textwrap.dedent("""
        import sys, time, tfd
        server = tfd.train.Server({"ps": ["127.0.0.1:%d"]}, "ps", 0,
                                  extra_args=["--threads", "1"])
        print(server._proc.pid, flush=True)
        time.sleep(600)
    """ % port)
    script_proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                   text=True, env=dict(os.environ))
    try:
        daemon = int(script_proc.stdout.readline())
        script_proc.send_signal(signal.SIGKILL)  # no atexit, no cleanup: only the kernel's signal
        script_proc.wait(30)
        deadline = time.monotonic() + 30  # only stops a hang
        while _alive(daemon) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(daemon)
    finally:
        script_proc.kill()
        script_proc.wait(30)


def _alive(pid):
    """Whether `pid` runs (a zombie, reaped by init later, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
