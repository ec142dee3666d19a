#!/usr/bin/env python3
"""Runs the commands of deploy/k8s's pods here, as Kubernetes would run them,
with the real tfd. Output is TAP.

For every pod of every StatefulSet (tfd-worker-1, ...), the container's
command runs under /bin/sh with the environment its manifest gives it:
values, the pod's name for fieldRef metadata.name, the tfd-cluster
ConfigMap's key for configMapKeyRef. Mounted volumes become temporary
directories (the tfd-token Secret one holding a token), and TFD_LISTEN and
TFD_HTTP_LISTEN become reserved loopback ports (tests use loopback only). The
command builds TF_CONFIG from the pod's ordinal and execs tfd, which must
come up as that job and task: READY=1 on a NOTIFY_SOCKET this test binds,
its log naming /job:JOB/replica:0/task:N, its readiness probe's httpGet
answered 200, and exit 0 on SIGTERM. A pod whose ordinal is
past the cluster spec must be refused (exit 2), so tfd is seen to use the
rendered TF_CONFIG. The training Job's command runs with a stand-in tfctl
for each completion index and must train on worker N with the token,
passing only flags the real tfctl train has.

  K8S_DIR=deploy/k8s TFD=build/daemon/tfd TFCTL=build/cli/tfctl \
    python3 tests/deploy/k8s_render_test.py
"""
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from k8s_testlib import check, finish, load_manifests

# The ports the pods' tfd take, reserved as every test's are.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from port_reservation import reserve_port  # noqa: E402

TFD = os.path.abspath(os.environ["TFD"])
TFCTL = os.path.abspath(os.environ["TFCTL"])

docs = [o for _, o in load_manifests(os.environ["K8S_DIR"])]
config_maps = {o["metadata"]["name"]: o for o in docs if o["kind"] == "ConfigMap"}


class Pod:
    """The environment and volumes of one pod of `pod_spec`, rendered in `root`."""

    def __init__(self, pod_spec, pod_name, root, extra_env):
        self.container = pod_spec["spec"]["containers"][0]
        self.root = root
        volumes = {v["name"]: v for v in pod_spec["spec"].get("volumes", [])}
        # Mount path -> local directory.
        self.mounts = {}
        for m in self.container.get("volumeMounts", []):
            local = os.path.join(root, "volumes", m["name"])
            os.makedirs(local, exist_ok=True)
            volume = volumes.get(m["name"], {})
            if volume.get("secret", {}).get("secretName") == "tfd-token":
                # As the kubelet writes it: the Secret's bytes (a token as
                # `openssl rand -hex 32` makes one), with the volume's
                # defaultMode (Kubernetes' own default is 0644).
                path = os.path.join(local, "token")
                with open(path, "w") as f:
                    f.write("%064x\n" % random.getrandbits(256))
                os.chmod(path, volume["secret"].get("defaultMode", 0o644))
            self.mounts[m["mountPath"]] = local
        self.env = {"PATH": os.path.join(root, "bin") + ":/usr/bin:/bin"}
        for e in self.container.get("env", []):
            if "value" in e:
                self.env[e["name"]] = self.local(e["value"])
                continue
            source = e["valueFrom"]
            if source.get("fieldRef", {}).get("fieldPath") == "metadata.name":
                self.env[e["name"]] = pod_name
            elif "configMapKeyRef" in source:
                ref = source["configMapKeyRef"]
                self.env[e["name"]] = config_maps[ref["name"]]["data"][ref["key"]]
            else:
                raise ValueError("%s: no rendering for %s" % (pod_name, source))
        self.env.update(extra_env)

    def local(self, value):
        """A path inside a mount, as the directory standing in for it."""
        for mount, local in self.mounts.items():
            if value == mount or value.startswith(mount + "/"):
                return local + value[len(mount):]
        return value

    def argv(self):
        return self.container.get("command", []) + self.container.get("args", [])


def run_tfd_pod(sts, ordinal):
    """Runs pod `ordinal` of StatefulSet `sts`: READY=1, its task in the log,
    its readiness probe, a clean stop. Returns (ready, log, exit status,
    port, the probe's HTTP status or what failed)."""
    name = "%s-%d" % (sts["metadata"]["name"], ordinal)
    root = tempfile.mkdtemp(prefix="tfd-k8s-")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    process = None
    try:
        os.makedirs(os.path.join(root, "bin"))
        os.symlink(TFD, os.path.join(root, "bin", "tfd"))
        address = "@tfd-k8s-%d-%08x" % (os.getpid(), random.getrandbits(32))
        notify.bind("\0" + address[1:])
        # Held until this test exits, past the pod's tfd binding them.
        port = reserve_port()
        http_port = reserve_port()
        pod = Pod(sts["spec"]["template"], name, root, {
            "TFD_LISTEN": "127.0.0.1:%d" % port,
            "TFD_HTTP_LISTEN": "127.0.0.1:%d" % http_port,
            "TFD_THREADS": "1",
            "NOTIFY_SOCKET": address,
        })
        log_path = os.path.join(root, "tfd.log")
        with open(log_path, "w") as log:
            process = subprocess.Popen(pod.argv(), env=pod.env, stdout=log, stderr=log,
                                       stdin=subprocess.DEVNULL, cwd=root)
        ready = ""
        deadline = time.monotonic() + 60
        notify.settimeout(0.2)
        while time.monotonic() < deadline and process.poll() is None:
            try:
                message = notify.recv(4096).decode()
            except socket.timeout:
                continue
            if "READY=1" in message.split("\n"):
                ready = message
                break
        # The kubelet's readiness probe: GET its path on the port it names.
        probe = pod.container.get("readinessProbe", {}).get("httpGet", {})
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (http_port, probe.get("path", "")),
                                        timeout=10) as reply:
                health = reply.status
        except (urllib.error.URLError, OSError) as e:
            health = str(e)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        with open(log_path) as f:
            return ready, f.read(), status, port, health
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        notify.close()
        shutil.rmtree(root, ignore_errors=True)


for sts in [o for o in docs if o["kind"] == "StatefulSet"]:
    set_name = sts["metadata"]["name"]
    job = next(e["value"] for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]
               if e["name"] == "JOB_NAME")
    replicas = sts["spec"].get("replicas", 1)
    for ordinal in range(replicas):
        task = "/job:%s/replica:0/task:%d" % (job, ordinal)
        ready, log, status, port, health = run_tfd_pod(sts, ordinal)
        check(("STATUS=serving %s on 127.0.0.1:%d" % (task, port)) in ready,
              "pod %s-%d: tfd comes up as %s (READY=1)" % (set_name, ordinal, task),
              "READY message: %r\nexit %s, log:\n%s" % (ready, status, log))
        check("[%s] listening on 127.0.0.1:%d" % (task, port) in log,
              "pod %s-%d: tfd's log names %s" % (set_name, ordinal, task), log)
        check(health == 200, "pod %s-%d: its readiness probe gets 200 (%s)"
              % (set_name, ordinal, health), log)
        check(status == 0, "pod %s-%d: tfd stops cleanly on SIGTERM (exit %s)"
              % (set_name, ordinal, status), log)
    # One ordinal past the spec: the rendered TF_CONFIG names a task that
    # does not exist, and tfd says so.
    ready, log, status, _, _ = run_tfd_pod(sts, replicas)
    check(status == 2 and ("--task %d is out of range" % replicas) in log,
          "pod %s-%d (not in the cluster spec): tfd refuses it, exit 2" % (set_name, replicas),
          "exit %s, log:\n%s" % (status, log))

# The training Job, each completion index with a stand-in tfctl that
# records its arguments; the real tfctl's help says which flags exist.
train_help = subprocess.run([TFCTL, "train", "--help"], capture_output=True, text=True,
                            timeout=30).stdout
for job in [o for o in docs if o["kind"] == "Job"]:
    spec = job["spec"]
    for index in range(spec.get("completions", 1)):
        root = tempfile.mkdtemp(prefix="tfd-k8s-")
        try:
            os.makedirs(os.path.join(root, "bin"))
            args_file = os.path.join(root, "tfctl-args")
            fake = os.path.join(root, "bin", "tfctl")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\nfor a in "$@"; do echo "$a"; done > "%s"\n' % args_file)
            os.chmod(fake, 0o755)
            pod = Pod(spec["template"], "%s-%d" % (job["metadata"]["name"], index), root,
                      {"JOB_COMPLETION_INDEX": str(index)})
            run = subprocess.run(pod.argv(), env=pod.env, capture_output=True, text=True,
                                 timeout=30)
            args = open(args_file).read().split("\n") if os.path.exists(args_file) else []
            mounts = {m["name"]: m["mountPath"]
                      for m in spec["template"]["spec"]["containers"][0]["volumeMounts"]}

            def value(flag):
                return args[args.index(flag) + 1] if flag in args[:-1] else None

            check(run.returncode == 0 and args[:1] == ["train"],
                  "Job %s, index %d: runs tfctl train" % (job["metadata"]["name"], index),
                  "exit %s, args %r, stderr %s" % (run.returncode, args, run.stderr))
            check(value("--target") == "tfd-worker-%d.tfd-worker:2222" % index,
                  "Job %s, index %d: trains on worker %d" % (job["metadata"]["name"], index, index),
                  args)
            check(len(args) > 1 and args[1].startswith(mounts.get("graph", "?") + "/"),
                  "Job %s, index %d: the graph comes from the tfd-graph ConfigMap's mount"
                  % (job["metadata"]["name"], index), args)
            check(value("--token-file") == mounts.get("token", "?") + "/token",
                  "Job %s, index %d: the token comes from the tfd-token Secret's mount"
                  % (job["metadata"]["name"], index), args)
            unknown = [a for a in args if a.startswith("--") and
                       not re.search(r"^  %s( arg)? " % re.escape(a), train_help, re.M)]
            check(args and not unknown,
                  "Job %s, index %d: tfctl train takes every flag it is given"
                  % (job["metadata"]["name"], index),
                  "unknown: %r\n`tfctl train --help`:\n%s" % (unknown, train_help))
        finally:
            shutil.rmtree(root, ignore_errors=True)

finish()
