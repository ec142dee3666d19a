"""tfd.train.Server: a TF1 script's own task, served by a tfd daemon it
starts as a child: a worker's session through server.target trains with a
variable on a ps Server, join() returns when the daemon ends, a daemon that
cannot serve is an error naming it, no daemon outlives its script, and a
server's config becomes its daemon's flags."""
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


def test_a_server_stops_without_a_word_of_warning(capfd):
    """The daemon says it is stopping (STOPPING=1) to the Server that
    started it, which still listens: nothing in its log but info."""
    server = tfd.train.Server.create_local_server()
    server.stop()
    log = capfd.readouterr().err
    assert "stopping" in log and "stopped" in log
    assert "[warning]" not in log and "[error]" not in log


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


def test_a_server_config_becomes_its_daemons_flags_and_gpus(monkeypatch):
    """A TF1 server's config set the defaults of the sessions it served:
    the daemon's threads, placement logging and soft placement, the step
    deadline (a step blocked past it fails), and the GPUs it may use."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6")
    config = tfd.ConfigProto(intra_op_parallelism_threads=2, log_device_placement=True,
                             allow_soft_placement=True, operation_timeout_in_ms=1500,
                             device_count={"GPU": 1})
    config.gpu_options.visible_device_list = "2,0"
    server = tfd.train.Server.create_local_server(config=config)
    try:
        pid = server._proc.pid
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
        with open("/proc/%d/environ" % pid, "rb") as f:
            environ = f.read().split(b"\0")
        for flag in ([b"--threads", b"2"], [b"--step-timeout", b"1.5"]):
            assert argv[argv.index(flag[0]) + 1] == flag[1]
        assert b"--log-device-placement" in argv and b"--allow-soft-placement" in argv
        assert b"CUDA_VISIBLE_DEVICES=6" in environ  # the third seen, the one GPU allowed
        queue = tfd.FIFOQueue(1, [tfd.float32], shapes=[[]])
        with tfd.Session(server.target, timeout=60) as sess:
            with pytest.raises(tfd.errors.DeadlineExceededError):
                sess.run(queue.dequeue())  # nothing comes: the daemon's 1.5 s deadline
    finally:
        server.stop()
    with pytest.raises(ValueError, match="config and extra_args both set --threads"):
        tfd.train.Server({"local": ["127.0.0.1:1"]}, config=config, extra_args=["--threads", "1"],
                         start=False)
    config.gpu_options.visible_device_list = "3"
    with pytest.raises(ValueError, match="names GPUs this process does not see"):
        tfd.train.Server({"local": ["127.0.0.1:1"]}, config=config, start=False)
