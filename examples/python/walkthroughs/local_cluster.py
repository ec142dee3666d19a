"""What the Python walkthroughs share, as lib.sh is for the shell ones: a
local cluster of tfd daemons on reserved loopback ports, stopped on exit,
with each task's log at hand, and expect() that fails the script with a
message.

    with LocalCluster({"ps": 2, "worker": 3}) as cluster:
        sess = tfd.Session(cluster.address("worker", 0))

The daemon is $TFD, else build/daemon/tfd of this checkout.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[3]

# Why reserve a port rather than take one that is free now: the cluster spec
# names every task's port before any daemon starts, and a port found free
# (say, by binding port 0 and closing it) can be taken by another program
# before its daemon binds it; that daemon then fails to start. Anything else
# that reserves the same way (the tests, another walkthrough, the shell
# walkthroughs' scripts/cluster-lib.sh) is never handed a port held here.
# Each port stays reserved until this process exits. Outside this checkout,
# put a copy of scripts/port_reservation.py (standard library only) beside
# this file.
sys.path.insert(0, str(ROOT / "scripts"))
from port_reservation import reserve_port  # noqa: E402


def expect(text, wanted):
    """Exits with a message unless `wanted` is in `text`."""
    if wanted not in text:
        sys.exit("FAILED: expected to see %r in:\n%s" % (wanted, text))


class LocalCluster:
    """tfd daemons for {job: task count}; `extra_args` go to every task."""

    def __init__(self, jobs, extra_args=(), start=True):
        self.spec = {job: ["127.0.0.1:%d" % reserve_port() for _ in range(n)]
                     for job, n in jobs.items()}
        self.extra_args = list(extra_args)
        self._dir = tempfile.TemporaryDirectory(prefix="tfd-walkthrough-")
        self._procs = {}
        if start:
            for job, addresses in self.spec.items():
                for task in range(len(addresses)):
                    self.start(job, task)

    def address(self, job, task):
        return self.spec[job][task]

    def log_path(self, job, task):
        return pathlib.Path(self._dir.name) / ("%s-%d.log" % (job, task))

    def log(self, job, task):
        return self.log_path(job, task).read_text(errors="replace")

    def start(self, job, task):
        binary = os.environ.get("TFD", str(ROOT / "build" / "daemon" / "tfd"))
        with open(self.log_path(job, task), "ab") as log:
            self._procs[(job, task)] = subprocess.Popen(
                [binary, "--cluster", json.dumps(self.spec), "--job", job, "--task", str(task)]
                + self.extra_args, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)

    def kill(self, job, task):
        """SIGKILL, no goodbye: the task leaves as a crash would."""
        proc = self._procs.pop((job, task))
        proc.kill()
        proc.wait(timeout=30)

    def stop(self):
        for proc in self._procs.values():
            proc.terminate()
        for proc in self._procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        self._procs.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        self._dir.cleanup()
        return False
