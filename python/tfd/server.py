"""tf.train.Server: this process's task of a cluster, as a TF1 script starts
it (`server = tf.train.Server(cluster, job_name="ps", task_index=0)`,
then `server.join()` on a ps, `tf.Session(server.target)` on a worker).

TF1 runs the server inside the Python process; tfd's server is the `tfd`
daemon, so Server starts one as a child process (the program named by the
TFD environment variable, else `tfd` on PATH) for the task, with the
cluster spec, and waits until that daemon says it serves (READY=1 over the
sd_notify protocol tfd speaks to systemd, on a socket of this Server's: a
port answered by another process does not count). The child ends with
this process (it gets SIGTERM when its parent dies) or at stop().

A server's `config` (tfd.ConfigProto) is what a TF1 server's config was
for the sessions it serves, given to the daemon as its flags (_daemon_flags).
"""
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid

from . import config as config_lib, errors

_READY_TIMEOUT = 60.0  # seconds for the daemon to accept connections


def _die_with_parent():
    """In the child, before exec: SIGTERM when the parent process dies
    (Linux's PR_SET_PDEATHSIG), so no daemon outlives the script."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _tfd_program():
    program = os.environ.get("TFD") or shutil.which("tfd")
    if not program:
        raise errors.NotFoundError(
            "tfd.train.Server starts the `tfd` daemon: set TFD to its path or put "
            "it on PATH")
    return program


def _cluster_dict(server_or_cluster_def):
    if hasattr(server_or_cluster_def, "as_dict"):
        return server_or_cluster_def.as_dict()
    if isinstance(server_or_cluster_def, dict):
        return {job: list(tasks) for job, tasks in server_or_cluster_def.items()}
    raise TypeError("tfd.train.Server takes a tfd.train.ClusterSpec or a dict of job -> "
                    "addresses, not %r" % (server_or_cluster_def,))


def _daemon_flags(config, extra_args):
    """The tfd flags and environment a server's ConfigProto stands for:
    intra_op_parallelism_threads is --threads, log_device_placement and
    allow_soft_placement their flags, operation_timeout_in_ms
    --step-timeout; gpu_options.visible_device_list (indices among the GPUs
    this process sees) and device_count["GPU"] (at most that many of them)
    narrow CUDA_VISIBLE_DEVICES. The other fields are hints tfd has no use
    for (docs/python.md). A flag that extra_args sets too is a ValueError."""
    if config is None:
        return [], {}
    args = []
    if config.intra_op_parallelism_threads > 0:
        args += ["--threads", str(int(config.intra_op_parallelism_threads))]
    if config.log_device_placement:
        args.append("--log-device-placement")
    if config.allow_soft_placement:
        args.append("--allow-soft-placement")
    if config.operation_timeout_in_ms > 0:
        args += ["--step-timeout", "%g" % (config.operation_timeout_in_ms / 1000.0)]
    both = sorted({a for a in args if a.startswith("--")}
                  & {a.split("=")[0] for a in extra_args if a.startswith("--")})
    if both:
        raise ValueError("tfd.train.Server: config and extra_args both set %s" % ", ".join(both))
    return args, _visible_gpus(config)


def _visible_gpus(config):
    """{"CUDA_VISIBLE_DEVICES": ...} when the config narrows the GPUs."""
    seen = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = None if seen is None else [i for i in seen.split(",") if i.strip()]
    wanted = config.gpu_options.visible_device_list
    if wanted:
        picks = [int(i) for i in wanted.split(",")]
        if ids is not None and any(not 0 <= i < len(ids) for i in picks):
            raise ValueError("gpu_options.visible_device_list %r names GPUs this process does "
                             "not see (CUDA_VISIBLE_DEVICES=%r)" % (wanted, seen))
        ids = [ids[i] if ids is not None else str(i) for i in picks]
    count = config.device_count.get("GPU")
    if count is not None:
        ids = (ids if ids is not None else [str(i) for i in range(int(count))])[:int(count)]
    if not wanted and count is None:
        return {}
    return {"CUDA_VISIBLE_DEVICES": ",".join(ids)}


class Server:
    """The task `job_name`/`task_index` of the cluster, served by a tfd
    daemon this process starts. `config` sets the daemon's flags as a TF1
    server's config set its sessions' defaults (_daemon_flags); `extra_args`
    (a tfd extension) are more flags of `tfd` (`--checkpoint-dir`, ...)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, extra_args=()):
        config_lib.checked(config, config_lib.ConfigProto, "config")
        if protocol not in (None, "grpc"):
            raise ValueError("tfd.train.Server speaks tfd's protocol; protocol=%r is not "
                             "taken" % (protocol,))
        self._cluster = _cluster_dict(server_or_cluster_def)
        if job_name is None:
            if len(self._cluster) != 1:
                raise ValueError("job_name must be given for a cluster of jobs %s"
                                 % sorted(self._cluster))
            job_name = next(iter(self._cluster))
        if job_name not in self._cluster:
            raise ValueError("job %r is not in the cluster %s" % (job_name, sorted(self._cluster)))
        tasks = self._cluster[job_name]
        if task_index is None:
            if len(tasks) != 1:
                raise ValueError("task_index must be given: job %r has %d tasks"
                                 % (job_name, len(tasks)))
            task_index = 0
        if not 0 <= int(task_index) < len(tasks):
            raise ValueError("job %r has tasks 0..%d, not %r"
                             % (job_name, len(tasks) - 1, task_index))
        self._job, self._task = job_name, int(task_index)
        self._address = tasks[self._task]
        self._extra_args = [str(a) for a in extra_args]
        self._config_args, self._config_env = _daemon_flags(config, self._extra_args)
        self._proc, self._notify = None, None
        if start:
            self.start()

    @property
    def target(self):
        """What a tfd.Session connects to: "grpc://host:port", as TF1's."""
        return "grpc://" + self._address

    @property
    def server_def(self):
        """The cluster, job and task this server serves (a dict)."""
        return {"cluster": {j: list(t) for j, t in self._cluster.items()},
                "job_name": self._job, "task_index": self._task}

    def start(self):
        """Starts the daemon, once, and waits until it serves:
        UnavailableError naming its exit status if it ended first (its port
        taken, say), DeadlineExceededError after a minute."""
        if self._proc is not None:
            return
        # The daemon's READY=1 comes on a socket in the abstract namespace
        # (no file to clean up), named for this Server alone. It stays open
        # while the daemon runs, for the STOPPING=1 the daemon sends as it
        # stops (which it would otherwise warn was refused).
        name = "tfd-server-%d-%s" % (os.getpid(), uuid.uuid4().hex)
        self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._notify.bind("\0" + name)
        self._notify.settimeout(0.1)
        self._proc = subprocess.Popen(
            [_tfd_program(), "--cluster", json.dumps(self._cluster), "--job", self._job,
             "--task", str(self._task)] + self._config_args + self._extra_args,
            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
            env=dict(os.environ, NOTIFY_SOCKET="@" + name, **self._config_env))
        self._wait_until_serving(self._notify)

    def _wait_until_serving(self, ready):
        deadline = time.monotonic() + _READY_TIMEOUT
        while True:
            try:
                if b"READY=1" in ready.recv(4096).split(b"\n"):
                    return
            except socket.timeout:
                pass
            code = self._proc.poll()
            if code is not None:
                self._proc = None  # start() may try again
                self._close_notify()
                raise errors.UnavailableError(
                    "the tfd daemon for /job:%s/task:%d (%s) exited with status %d before "
                    "serving (its messages are above)" % (self._job, self._task, self._address,
                                                          code))
            if time.monotonic() > deadline:
                self.stop()
                raise errors.DeadlineExceededError(
                    "the tfd daemon for /job:%s/task:%d did not serve on %s within %.0f s"
                    % (self._job, self._task, self._address, _READY_TIMEOUT))

    def join(self):
        """Blocks until the daemon ends (a ps's main thread, as TF1's)."""
        if self._proc is not None:
            self._proc.wait()

    def stop(self, timeout=30.0):
        """Stops the daemon (SIGTERM, then SIGKILL after `timeout` s)."""
        proc, self._proc = self._proc, None
        try:
            if proc is None or proc.poll() is not None:
                return
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        finally:
            self._close_notify()

    def _close_notify(self):
        notify, self._notify = self._notify, None
        if notify is not None:
            notify.close()

    @staticmethod
    def create_local_server(config=None, start=True, extra_args=()):
        """A server of a one-task cluster ("local") on a free port of
        127.0.0.1, as TF1's, for a session of its own."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return Server({"local": ["127.0.0.1:%d" % port]}, "local", 0, config=config,
                      start=start, extra_args=extra_args)
