#!/usr/bin/env python3
"""Checks deploy/k8s/*.yaml without a cluster or kubectl. Output is TAP.

1. Schema: every object is checked against the Kubernetes API's own models
   as Debian's python3-kubernetes generates them (openapi_types and
   attribute_map of V1StatefulSet, V1Service, ...): every field must exist
   in the API (a misspelt key is an error, as with kubeconform -strict),
   have the API's type, and required fields must be there.
2. What tfd needs of them: each StatefulSet has a headless Service
   (clusterIP None, publishNotReadyAddresses) that selects its pods; the
   tfd-cluster ConfigMap lists exactly <set>-<ordinal>.<service>:<port> for
   each replica; pods get their job name, the cluster spec and their pod
   name for TF_CONFIG, listen on every address, take the token from the
   tfd-token Secret, have readiness and liveness probes: on /healthz of the
   port TFD_HTTP_LISTEN serves when it is set, else `tfctl health` exec'd
   against the rpc port, ending before the kubelet's timeoutSeconds;
   the training Job runs `tfctl train` once per worker, Indexed; images are
   tagged with meson.build's version.

   K8S_DIR=deploy/k8s VERSION=0.1.0 python3 tests/deploy/k8s_check.py
"""
import json
import os
import re

from k8s_testlib import check, finish, load_manifests, skip

VERSION = os.environ["VERSION"]

docs = load_manifests(os.environ["K8S_DIR"])  # (file, object)
check(len(docs) > 0, "deploy/k8s holds manifests (%d objects)" % len(docs))

# --- 1. Schema ---------------------------------------------------------------

# The API groups these manifests may use, and the model of each kind.
KINDS = {
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("v1", "Service"): "V1Service",
    ("apps/v1", "StatefulSet"): "V1StatefulSet",
    ("batch/v1", "Job"): "V1Job",
}


def schema_errors(value, type_name, path, client):
    """Where `value` differs from the API type `type_name` (a model name or
    'str', 'int', 'list[T]', 'dict(str, T)', ...), as 'path: problem'."""
    errors = []
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            return ["%s: expected a list, got %r" % (path, value)]
        for i, item in enumerate(value):
            errors += schema_errors(item, m.group(1), "%s[%d]" % (path, i), client)
        return errors
    m = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if m:
        if not isinstance(value, dict):
            return ["%s: expected a map, got %r" % (path, value)]
        for k, v in value.items():
            errors += schema_errors(v, m.group(1), "%s.%s" % (path, k), client)
        return errors
    if type_name == "str":
        return [] if isinstance(value, str) else ["%s: expected a string, got %r" % (path, value)]
    if type_name == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else ["%s: expected an integer, got %r" % (path, value)]
    if type_name == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else ["%s: expected a number, got %r" % (path, value)]
    if type_name == "bool":
        return [] if isinstance(value, bool) else ["%s: expected true or false, got %r" % (path, value)]
    if type_name in ("object", "datetime", "date"):
        return []  # IntOrString, quantities, raw JSON: any scalar or map
    model = getattr(client, type_name, None)
    if model is None:
        return ["%s: the API has no type %s" % (path, type_name)]
    if not isinstance(value, dict):
        return ["%s: expected a %s object, got %r" % (path, type_name, value)]
    by_json = {j: attr for attr, j in model.attribute_map.items()}
    for key, v in value.items():
        if key not in by_json:
            errors.append("%s.%s: %s has no field '%s' (it has: %s)"
                          % (path, key, type_name, key, ", ".join(sorted(by_json))))
            continue
        errors += schema_errors(v, model.openapi_types[by_json[key]], "%s.%s" % (path, key), client)
    # The model's constructor refuses a missing required field.
    try:
        model(**{by_json[k]: v for k, v in value.items() if k in by_json})
    except ValueError as e:
        errors.append("%s: %s" % (path, e))
    return errors


try:
    import kubernetes.client as client
except ImportError:
    client = None
if client is None:
    skip("the manifests match the Kubernetes API schema",
         "python3-kubernetes is not installed (scripts/install-deps.sh installs it)")
else:
    for name, obj in docs:
        what = "%s: %s %s" % (name, obj.get("kind"), obj.get("metadata", {}).get("name"))
        model = KINDS.get((obj.get("apiVersion"), obj.get("kind")))
        if not check(model, "%s has a known apiVersion and kind" % what,
                     "(%s, %s) is not one of %s" % (obj.get("apiVersion"), obj.get("kind"),
                                                    sorted(KINDS))):
            continue
        errors = schema_errors(obj, model, obj["kind"], client)
        check(not errors, "%s matches the Kubernetes API schema (%s)" % (what, model),
              "\n".join(errors))

# --- 2. What tfd needs --------------------------------------------------------


def objects(kind):
    return {o["metadata"]["name"]: o for _, o in docs if o.get("kind") == kind}


def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def probe_errors(container, probe, env, http_port, rpc_port):
    """What is wrong with `probe` of a tfd container, as a list of problems:
    with TFD_HTTP_LISTEN it must GET /healthz on the http port tfd serves
    it on; without, it must exec `tfctl health` against the rpc port on
    loopback, giving up (--timeout) before the kubelet does
    (timeoutSeconds, default 1)."""
    p = container.get(probe)
    if not p:
        return ["no %s" % probe]
    if "TFD_HTTP_LISTEN" in env:
        errors = []
        if http_port is None:
            errors.append("TFD_HTTP_LISTEN is set but the container declares no http port")
        elif env["TFD_HTTP_LISTEN"].get("value") != "0.0.0.0:%s" % http_port:
            errors.append("TFD_HTTP_LISTEN is %r, not every address on the http port %s"
                          % (env["TFD_HTTP_LISTEN"].get("value"), http_port))
        get = p.get("httpGet") or {}
        if get.get("path") != "/healthz" or get.get("port") not in ("http", http_port):
            errors.append("%s does not GET /healthz on the http port: %r" % (probe, p))
        return errors
    command = (p.get("exec") or {}).get("command", [])
    if command[:2] != ["tfctl", "health"]:
        return ["%s: without TFD_HTTP_LISTEN, /healthz is not served; exec tfctl health "
                "instead: %r" % (probe, p)]
    errors = []
    flags = dict(zip(command[2::2], command[3::2]))
    if flags.get("--target") != "127.0.0.1:%s" % rpc_port:
        errors.append("%s: tfctl health --target is %r, not 127.0.0.1:%s (the rpc port)"
                      % (probe, flags.get("--target"), rpc_port))
    try:
        timeout = float(flags.get("--timeout", "5"))
    except ValueError:
        timeout = None
    if timeout is None or timeout >= p.get("timeoutSeconds", 1):
        errors.append("%s: tfctl health --timeout %s does not end inside timeoutSeconds %s"
                      % (probe, flags.get("--timeout", "5 (its default)"),
                         p.get("timeoutSeconds", "1 (the default)")))
    return errors


# The rule both ways, on a pod of each kind (so that it is known to tell).
_http_env = {"TFD_HTTP_LISTEN": {"value": "0.0.0.0:9470"}}
_get = {"httpGet": {"path": "/healthz", "port": "http"}}
_exec = {"exec": {"command": ["tfctl", "health", "--target", "127.0.0.1:2222", "--timeout", "3"]},
         "timeoutSeconds": 5}
check(not probe_errors({"livenessProbe": _get}, "livenessProbe", _http_env, 9470, 2222) and
      probe_errors({"livenessProbe": _exec}, "livenessProbe", _http_env, 9470, 2222) and
      not probe_errors({"livenessProbe": _exec}, "livenessProbe", {}, None, 2222) and
      probe_errors({"livenessProbe": _get}, "livenessProbe", {}, None, 2222) and
      probe_errors({"livenessProbe": dict(_exec, timeoutSeconds=3)}, "livenessProbe", {}, None, 2222),
      "the probe rule: httpGet /healthz with TFD_HTTP_LISTEN, else tfctl health within "
      "timeoutSeconds")
if client is not None:
    # The exec probe the manifests' comments give for a pod without HTTP.
    errors = schema_errors(_exec, "V1Probe", "exec probe", client)
    check(not errors, "the exec probe for pods without HTTP matches the Kubernetes API schema",
          "\n".join(errors))

services = objects("Service")
sets = objects("StatefulSet")
config_maps = objects("ConfigMap")
jobs = objects("Job")
check("tfd-cluster" in config_maps, "a tfd-cluster ConfigMap holds the cluster spec")
spec = json.loads(config_maps.get("tfd-cluster", {}).get("data", {}).get("cluster.json", "{}"))
check(set(spec) == {"ps", "worker"}, "the cluster spec has jobs ps and worker", spec)

job_of_set = {}
for set_name, sts in sorted(sets.items()):
    what = "StatefulSet %s" % set_name
    pod = sts["spec"]["template"]
    labels = pod["metadata"].get("labels", {})
    check(selects(sts["spec"]["selector"].get("matchLabels"), labels),
          "%s: its selector matches its pods' labels" % what)
    service = services.get(sts["spec"].get("serviceName"))
    if not check(service, "%s: its serviceName names a Service here" % what):
        continue
    sspec = service["spec"]
    check(sspec.get("clusterIP") == "None", "%s: Service %s is headless (clusterIP: None)"
          % (what, service["metadata"]["name"]))
    check(sspec.get("publishNotReadyAddresses") is True,
          "%s: Service %s publishes not-ready addresses" % (what, service["metadata"]["name"]))
    check(selects(sspec.get("selector"), labels) and
          not any(selects(sspec.get("selector"), o["spec"]["template"]["metadata"].get("labels", {}))
                  for n, o in sets.items() if n != set_name),
          "%s: Service %s selects its pods and no other set's" % (what, service["metadata"]["name"]))

    containers = pod["spec"]["containers"]
    tfd = containers[0]
    env = env_of(tfd)
    job = env.get("JOB_NAME", {}).get("value")
    job_of_set[set_name] = job
    check(job in spec, "%s: its pods are tasks of job '%s' of the cluster spec" % (what, job))
    ports = {p.get("name"): p["containerPort"] for p in tfd.get("ports", [])}
    rpc_port = ports.get("rpc")
    check(rpc_port is not None, "%s: the container declares its rpc port" % what)
    service_ports = {p.get("name"): p for p in sspec.get("ports", [])}
    check(service_ports.get("rpc", {}).get("port") == rpc_port,
          "%s: the Service's rpc port is the container's (%s)" % (what, rpc_port))
    # The cluster spec: <set>-<ordinal>.<service>:<port>, one per replica.
    want = ["%s-%d.%s:%s" % (set_name, i, service["metadata"]["name"], rpc_port)
            for i in range(sts["spec"].get("replicas", 1))]
    check(spec.get(job) == want, "%s: the cluster spec lists its %d pods in ordinal order"
          % (what, len(want)), "spec has %s, the set makes %s" % (spec.get(job), want))
    # What the pod's command needs to build TF_CONFIG.
    check(env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "metadata.name", "%s: POD_NAME comes from the pod's name (its ordinal)" % what)
    check(env.get("CLUSTER_SPEC", {}).get("valueFrom", {}).get("configMapKeyRef")
          == {"name": "tfd-cluster", "key": "cluster.json"},
          "%s: CLUSTER_SPEC comes from the tfd-cluster ConfigMap" % what)
    script = " ".join(tfd.get("command", []) + tfd.get("args", []))
    check("TF_CONFIG" in script and "exec tfd" in script,
          "%s: the command sets TF_CONFIG and execs tfd" % what, script)
    check(env.get("TFD_LISTEN", {}).get("value") == "0.0.0.0:%s" % rpc_port,
          "%s: tfd listens on every address of the pod (TFD_LISTEN)" % what)
    # The token, from the Secret.
    token_file = env.get("TFD_AUTH_TOKEN_FILE", {}).get("value", "")
    volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
    mounts = [m for m in tfd.get("volumeMounts", [])
              if volumes.get(m["name"], {}).get("secret", {}).get("secretName") == "tfd-token"]
    check(mounts and token_file == mounts[0]["mountPath"] + "/token",
          "%s: TFD_AUTH_TOKEN_FILE is the token key of the mounted tfd-token Secret" % what,
          "TFD_AUTH_TOKEN_FILE=%r, mounts %r" % (token_file, mounts))
    # Health: with the HTTP port on, the probes ask /healthz there (503
    # while draining); without it, they exec `tfctl health` on the rpc port.
    http_port = ports.get("http")
    for probe in ("readinessProbe", "livenessProbe"):
        errors = probe_errors(tfd, probe, env, http_port, rpc_port)
        check(not errors, "%s: %s asks %s" % (what, probe, "/healthz on the http port"
                                              if "TFD_HTTP_LISTEN" in env else
                                              "tfctl health on the rpc port"), "\n".join(errors))
    if "TFD_HTTP_LISTEN" in env:
        annotations = pod.get("metadata", {}).get("annotations", {})
        check(annotations.get("prometheus.io/port") == str(http_port),
              "%s: the pod tells Prometheus where /metrics is" % what, annotations)
    check(tfd.get("image") == "tfd:" + VERSION, "%s: the image is tfd:%s" % (what, VERSION),
          tfd.get("image"))

check(set(job_of_set.values()) == set(spec), "every job of the cluster spec has a StatefulSet",
      "sets: %s, spec: %s" % (job_of_set, sorted(spec)))

# The training Job: one indexed pod per worker, each training on its worker.
train = jobs.get("tfd-train")
if check(train, "a tfd-train Job"):
    jspec = train["spec"]
    workers = len(spec.get("worker", []))
    check(jspec.get("completionMode") == "Indexed", "tfd-train is an Indexed Job")
    check(jspec.get("completions") == workers and jspec.get("parallelism") == workers,
          "tfd-train runs one pod per worker, all at once (%d)" % workers,
          "completions %s, parallelism %s" % (jspec.get("completions"), jspec.get("parallelism")))
    c = jspec["template"]["spec"]["containers"][0]
    script = " ".join(c.get("command", []) + c.get("args", []))
    worker_set = [n for n, j in job_of_set.items() if j == "worker"]
    target = '--target "%s-$JOB_COMPLETION_INDEX.%s:' % (
        worker_set[0] if worker_set else "?",
        sets[worker_set[0]]["spec"]["serviceName"] if worker_set else "?")
    check("tfctl train" in script and target in script,
          "tfd-train: pod N runs tfctl train against worker N", script)
    check("--token-file" in script, "tfd-train: tfctl presents the token", script)
    check(c.get("image") == "tfd:" + VERSION, "tfd-train: the image is tfd:%s" % VERSION)

finish()
