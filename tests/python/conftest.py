"""Fixtures of the Python package's tests: a fresh default graph per test,
and real tfd daemons on free loopback ports for the remote ones (TFD names
the binary; meson sets it, as it sets PYTHONPATH to build/python)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import tfd

# scripts/port_reservation.py, which the Python walkthroughs use too.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from port_reservation import reserve_port  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    tfd.reset_default_graph()
    yield
    tfd.reset_default_graph()


def free_port():
    """A port on 127.0.0.1 that no other test can draw while this process
    lives (scripts/port_reservation.py; the rule is in bench/port_reservation.h)."""
    return reserve_port()


class Cluster:
    """tfd daemons of a cluster spec such as {"ps": 1, "worker": 1}, each
    started with subprocess and stopped by stop() or the fixture's teardown.
    `extra_args` go to every task, with {job} and {task} filled in."""

    def __init__(self, tmp_path, jobs, extra_args=()):
        self.spec = {job: ["127.0.0.1:%d" % free_port() for _ in range(n)]
                     for job, n in jobs.items()}
        self.tmp_path = tmp_path
        self.extra_args = list(extra_args)
        self.procs = {}
        for job, addrs in self.spec.items():
            for i in range(len(addrs)):
                self.start(job, i)

    def address(self, job, task):
        return self.spec[job][task]

    def start(self, job, task):
        log = open(self.tmp_path / ("%s%d.log" % (job, task)), "wb")
        self.procs[(job, task)] = (subprocess.Popen(
            [os.environ["TFD"], "--cluster", json.dumps(self.spec), "--job", job,
             "--task", str(task), "--threads", "1"]
            + [a.format(job=job, task=task) for a in self.extra_args],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL), log)

    def stop(self, job, task):
        proc, log = self.procs.pop((job, task))
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()

    def registered_graphs(self, job):
        """The partitions `job`'s task 0 holds, from `tfctl status`: 1 once
        a step blocked there has reached it."""
        out = subprocess.run([os.environ["TFCTL"], "status", "--cluster", json.dumps(self.spec),
                              "--output", "json"], capture_output=True, text=True, timeout=60)
        for t in json.loads(out.stdout)["tasks"]:
            if t["task"] == "/job:%s/replica:0/task:0" % job:
                return t.get("registered_graphs")
        return None

    def stop_all(self):
        for key in list(self.procs):
            self.stop(*key)


@pytest.fixture
def cluster_factory(tmp_path):
    made = []

    def make(jobs, extra_args=()):
        c = Cluster(tmp_path, jobs, extra_args)
        made.append(c)
        return c
    yield make
    for c in made:
        c.stop_all()
