"""tfd.Session: runs a graph in this process (no target) or on a tfd cluster
(target "host:port" of the task whose master runs the steps; TF's
"grpc://host:port" is accepted).

    with tfd.Session("localhost:2222", token_file="token") as sess:
        sess.run(init)
        loss_value, _ = sess.run([loss, train], feed_dict={x: batch})

Fetches take TF's structures: a tensor, an operation (None comes back), a
name ("y:0"), a list, tuple, namedtuple or dict of them, nested. A fed
numpy array crosses without a copy to a remote task (it is serialized
from its own memory) and to the in-process runtime when it is read-only
(flags.writeable = False); a writable one is copied, since a variable
assigned from it would otherwise change with the array. Fetched arrays
view the in-process runtime's buffers without a copy, and so does a
remote fetch of 1 MiB or more (it views the message it came in; a smaller
one is copied out of it once: docs/python.md).
"""
import contextlib
import threading

import numpy as np

from . import _tfd, config as config_lib, embedding_ops, errors, framework


def _fetched(value):
    """A fetched tensor as TF1's session.run gives it: an array, but a
    scalar as a numpy scalar (np.float32, np.int64, ...) or, a string
    one, as bytes."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


class _Fetches:
    """A fetch structure flattened to names, and rebuilt from the values."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.names = []
        self.targets = []
        self._index = {}
        self.rebuild = self._walk(fetches)

    def _tensor_slot(self, name):
        if name not in self._index:
            self._index[name] = len(self.names)
            self.names.append(name)
        i = self._index[name]
        return lambda values: _fetched(values[i])

    def _walk(self, f):
        if isinstance(f, framework.Operation):
            self.targets.append(f.name)
            return lambda values: None
        if isinstance(f, framework.IndexedSlices):  # TF's IndexedSlicesValue comes back
            parts = [None if t is None else self._walk(t)
                     for t in (f.values, f.indices, f.dense_shape)]
            return lambda values: framework.IndexedSlicesValue(
                *[None if p is None else p(values) for p in parts])
        if isinstance(f, embedding_ops.SparseTensor):  # TF's SparseTensorValue comes back
            parts = [self._walk(t) for t in (f.indices, f.values, f.dense_shape)]
            return lambda values: embedding_ops.SparseTensorValue(*[p(values) for p in parts])
        if isinstance(f, framework.Tensor) or hasattr(f, "_as_tensor"):
            t = framework._as_graph_element(f)
            if t.graph is not self.graph:
                raise ValueError("fetch %s is not an element of this session's graph" % t.name)
            return self._tensor_slot(t._fetch_name)
        if isinstance(f, str):
            if ":" in f:
                return self._walk(self.graph.get_tensor_by_name(f))
            return self._walk(self.graph.get_operation_by_name(f))
        if isinstance(f, dict):
            parts = {k: self._walk(v) for k, v in f.items()}
            return lambda values: type(f)((k, p(values)) for k, p in parts.items())
        if isinstance(f, (list, tuple)):
            parts = [self._walk(v) for v in f]
            if hasattr(f, "_fields"):  # a namedtuple
                return lambda values: type(f)(*[p(values) for p in parts])
            return lambda values: type(f)(p(values) for p in parts)
        raise TypeError("cannot fetch %r: fetch a tensor, an operation, a name, or a list, tuple "
                        "or dict of them" % (f,))


def _feeds(graph, feed_dict):
    out = []
    for key, value in (feed_dict or {}).items():
        t = graph.get_tensor_by_name(key) if isinstance(key, str) else \
            framework._as_graph_element(key)
        if isinstance(value, framework.Tensor) or hasattr(value, "_as_tensor"):
            raise TypeError("The value of a feed cannot be a tfd.Tensor object. Acceptable feed "
                            "values include Python scalars, strings, lists, numpy ndarrays. The "
                            "value %r was fed to %s." % (value, t.name))
        want = t.dtype.as_numpy_dtype
        if isinstance(value, np.ndarray) and value.dtype == want:
            arr = value
        else:
            arr = np.asarray(value, dtype=want)
        dims = t.shape.dims
        if dims is not None and (len(dims) != arr.ndim or any(
                d is not None and d != a for d, a in zip(dims, arr.shape))):
            raise ValueError("cannot feed a value of shape %s to %s, which has shape %s"
                             % (list(arr.shape), t.name, dims))
        out.append((t._fetch_name, arr))
    return out


def _tls_files(tls):
    if tls is None:
        return "", "", ""
    if isinstance(tls, dict):
        return tls.get("cert", ""), tls.get("key", ""), tls.get("ca", "")
    cert, key, ca = tls
    return cert, key, ca


class Session:
    """A session over `graph` (the default graph by default). `config`, a
    tfd.ConfigProto: its operation_timeout_in_ms bounds every step given
    no timeout of its own (its other fields change nothing in tfd)."""

    def __init__(self, target="", graph=None, config=None, token_file="", tls=None, timeout=30.0,
                 io_dirs=None):
        self.graph = graph or framework.get_default_graph()
        config_lib.checked(config, config_lib.ConfigProto, "config")
        # 0: the runner's own default (the master's step deadline; 5 min in process).
        self._step_timeout = config_lib.seconds(config.operation_timeout_in_ms if config else 0)
        self.target = target or ""
        if self.target.startswith("grpc://"):
            self.target = self.target[len("grpc://"):]
        if self.target:
            cert, key, ca = _tls_files(tls)
            self._runner = _tfd.RemoteRunner(self.target, token_file or "", cert, key, ca,
                                             float(timeout))
        else:
            self._runner = _tfd.LocalRunner([str(d) for d in (io_dirs or [])])
        self._closed = False
        self._default = None

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None, timeout=None):
        """The fetched values in the structure of `fetches`. `timeout` (seconds)
        or options.timeout_in_ms (a tfd.RunOptions) bounds the step, else the
        config's operation_timeout_in_ms: DeadlineExceededError past it.
        With options.trace_level above NO_TRACE, run_metadata (a
        tfd.RunMetadata) gets the step's trace: what each node ran, where
        and when, on every task of the step."""
        timeout = self._timeout_of(options, run_metadata, timeout)
        runner = self._open_runner()
        plan = _Fetches(self.graph, fetches)
        args = (self.graph._builder, _feeds(self.graph, feed_dict), plan.names, plan.targets,
                timeout)
        if options is None or not options.trace_level or run_metadata is None:
            return plan.rebuild(runner.run(*args))
        values, nodes = runner.run_traced(*args)
        config_lib.add_trace(run_metadata, nodes)
        return plan.rebuild(values)

    def _timeout_of(self, options, run_metadata, timeout):
        """The step's timeout in seconds (0: the runner's default)."""
        config_lib.checked(options, config_lib.RunOptions, "options")
        config_lib.checked(run_metadata, config_lib.RunMetadata, "run_metadata")
        own_ms = options.timeout_in_ms if options is not None else 0
        if timeout is not None and own_ms > 0:
            raise ValueError("run() was given both timeout=%r (seconds) and "
                             "options.timeout_in_ms=%r: give one" % (timeout, own_ms))
        if timeout:
            return float(timeout)
        return config_lib.seconds(own_ms) or self._step_timeout

    def make_callable(self, fetches, feed_list=None, _input_pipeline=False):
        """A function running the same step: f(*feed_values), the values in
        feed_list's order. On a cluster the master prepares the step once
        (per connection of the session) and each call sends only the
        values; ops added to the graph later do not end it. (tfd's own
        queue runners make theirs with _input_pipeline: a checkpoint of the
        cluster does not wait for those steps.)"""
        runner = self._open_runner()
        feed_list = list(feed_list or [])
        if not hasattr(runner, "make_callable"):
            def local_step(*values):
                return self.run(fetches, dict(zip(feed_list, values)))
            return local_step
        plan = _Fetches(self.graph, fetches)
        feeds = [self.graph.get_tensor_by_name(f) if isinstance(f, str)
                 else framework._as_graph_element(f) for f in feed_list]
        handle = runner.make_callable(self.graph._builder, [t._fetch_name for t in feeds],
                                      plan.names, plan.targets, bool(_input_pipeline))

        def remote_step(*values):
            runner = self._open_runner()
            if len(values) != len(feeds):
                raise TypeError("this callable takes %d feeds, got %d" % (len(feeds), len(values)))
            arrays = [a for _, a in _feeds(self.graph, dict(zip(feeds, values)))]
            return plan.rebuild(runner.run_callable(handle, arrays, self._step_timeout))
        return remote_step

    def wait_initialized(self, var_list, timeout=30.0):
        """Waits until every variable of var_list (tfd.Variables or their
        names) is initialized on the cluster, as `tfctl wait init` does: how
        a worker waits for the chief's initializer.
        DeadlineExceededError naming them after `timeout` seconds."""
        runner = self._open_runner()
        if not hasattr(runner, "wait_initialized"):
            raise ValueError("wait_initialized needs a session on a cluster (a target)")
        names = [v if isinstance(v, str) else v.op.name for v in var_list]
        runner.wait_initialized([n.split(":")[0] for n in names], float(timeout))

    def _open_runner(self):
        # Read once: close() on another thread may clear it at any time
        # (the runner then refuses the call: FailedPreconditionError).
        runner = self._runner
        if self._closed or runner is None:
            raise RuntimeError("this session is closed")
        return runner

    def close(self):
        if self._closed:
            return
        self._closed = True
        runner, self._runner = self._runner, None
        close = getattr(runner, "close", None)
        if close is not None:
            close()

    @property
    def task(self):
        """The task whose master runs the steps ("" in process)."""
        return getattr(self._runner, "task", "")

    @contextlib.contextmanager
    def as_default(self):
        _default_sessions().append(self)
        try:
            yield self
        finally:
            _default_sessions().pop()

    def __enter__(self):
        self._default = self.as_default()
        self._default.__enter__()
        return self

    def __exit__(self, *exc):
        self._default.__exit__(*exc)
        if exc[0] is None:
            self.close()
            return False
        try:
            self.close()
        except errors.OpError:  # the block's own error is the one to see
            pass
        return False


class InteractiveSession(Session):
    """TF1's: a Session that makes itself the default session of the thread
    that made it, from construction until close(), so `t.eval()` and
    `op.run()` need no `with` block (as in a shell or a notebook)."""

    def __init__(self, target="", graph=None, config=None, **kwargs):
        super().__init__(target, graph, config, **kwargs)
        self._default_stack = _default_sessions()
        self._default_stack.append(self)

    def close(self):
        """Closes the session and stops it being the default."""
        stack = getattr(self, "_default_stack", [])
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                break
        super().close()

_state = threading.local()


def _default_sessions():
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def get_default_session():
    stack = _default_sessions()
    return stack[-1] if stack else None


def _session_or_default(session):
    s = session or get_default_session()
    if s is None:
        raise ValueError("no session: pass session=, or run inside `with tfd.Session() as sess:`")
    return s
