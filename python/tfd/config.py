"""TF1's session configuration messages, as plain Python classes:
tfd.ConfigProto for a session, tfd.RunOptions and tfd.RunMetadata for one
run(), with the field names and defaults of TF1's protocol buffers.

    config = tfd.ConfigProto(operation_timeout_in_ms=5000)
    config.gpu_options.allow_growth = True
    sess = tfd.Session(target, config=config)
    sess.run(dequeue, options=tfd.RunOptions(timeout_in_ms=1000))

What takes effect: ConfigProto.operation_timeout_in_ms (every step's
deadline), RunOptions.timeout_in_ms (one step's) and trace_level (a step
trace in RunMetadata.step_stats). The other fields are accepted so that TF1
programs run, and change nothing; docs/python.md says why for each.
"""


class _Message:
    """A protocol-buffer-like message: the fields of _FIELDS (name: default)
    and no others. A default that is a class (a _Message, list, dict) is
    made fresh for each message, so no two messages share one."""

    _FIELDS = {}

    def __init__(self, **fields):
        for name, default in self._FIELDS.items():
            object.__setattr__(self, name, default() if isinstance(default, type) else default)
        for name, value in fields.items():
            if name not in self._FIELDS:  # protobuf's words
                raise ValueError('Protocol message %s has no "%s" field.'
                                 % (type(self).__name__, name))
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError('Assignment not allowed (no field "%s" in protocol message %s)'
                                 % (name, type(self).__name__))
        object.__setattr__(self, name, self._converted(name, value))

    def _converted(self, name, value):
        """`value` as field `name` holds it: a nested message from itself
        or a dict of its fields, a repeated field or map as a new list or
        dict."""
        kind = self._FIELDS[name]
        if isinstance(kind, type) and issubclass(kind, _Message):
            if isinstance(value, dict):
                return kind(**value)
            if not isinstance(value, kind):
                raise TypeError("%s.%s takes a %s, not %r"
                                % (type(self).__name__, name, kind.__name__, value))
            return value
        if kind in (list, dict):
            return kind(value)
        return value

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    def __repr__(self):
        """The fields set away from their defaults, as a constructor call."""
        changed = ["%s=%r" % (n, getattr(self, n)) for n, d in self._FIELDS.items()
                   if getattr(self, n) != (d() if isinstance(d, type) else d)]
        return "%s(%s)" % (type(self).__name__, ", ".join(changed))


class GPUOptions(_Message):
    _FIELDS = dict(per_process_gpu_memory_fraction=0.0, allow_growth=False, allocator_type="",
                   visible_device_list="", force_gpu_compatible=False)


class OptimizerOptions(_Message):
    L1, L0 = 0, -1                               # Level
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2       # GlobalJitLevel
    _FIELDS = dict(do_common_subexpression_elimination=False, do_constant_folding=False,
                   max_folded_constant_in_bytes=0, do_function_inlining=False, opt_level=0,
                   global_jit_level=0)


class GraphOptions(_Message):
    _FIELDS = dict(enable_recv_scheduling=False, optimizer_options=OptimizerOptions,
                   build_cost_model=0, build_cost_model_after=0, infer_shapes=False,
                   place_pruned_graph=False, enable_bfloat16_sendrecv=False, timeline_step=0)


class ConfigProto(_Message):
    """A session's configuration. operation_timeout_in_ms > 0 is the
    deadline of each of its steps that has none of its own."""

    _FIELDS = dict(device_count=dict, intra_op_parallelism_threads=0,
                   inter_op_parallelism_threads=0, use_per_session_threads=False,
                   placement_period=0, device_filters=list, gpu_options=GPUOptions,
                   allow_soft_placement=False, log_device_placement=False,
                   graph_options=GraphOptions, operation_timeout_in_ms=0,
                   isolate_session_state=False)


class RunOptions(_Message):
    """One run()'s options. timeout_in_ms > 0 is that step's deadline, in
    place of the session's; trace_level above NO_TRACE (any of them: tfd
    has one kind of trace) fills the run's RunMetadata."""

    class TraceLevel:
        NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = range(4)

    # TF1 spells them both ways: RunOptions.FULL_TRACE, RunOptions.TraceLevel.FULL_TRACE.
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = range(4)
    _FIELDS = dict(trace_level=0, timeout_in_ms=0, inter_op_thread_pool=0,
                   output_partition_graphs=False, report_tensor_allocations_upon_oom=False)


class NodeExecStats(_Message):
    """One node's run: its start in microseconds since the Unix epoch, and
    its end relative to that (tfd does not time the op apart from the
    node, so the op_* and all_* fields agree)."""

    _FIELDS = dict(node_name="", all_start_micros=0, op_start_rel_micros=0,
                   op_end_rel_micros=0, all_end_rel_micros=0, timeline_label="", thread_id=0)


class DeviceStepStats(_Message):
    _FIELDS = dict(device="", node_stats=list)


class StepStats(_Message):
    _FIELDS = dict(dev_stats=list)


class RunMetadata(_Message):
    """What a traced run() fills in: step_stats, one DeviceStepStats per
    device the step ran nodes on. partition_graphs stays empty."""

    _FIELDS = dict(step_stats=StepStats, partition_graphs=list)


def add_trace(run_metadata, nodes):
    """Adds a runner's traced nodes ((device, node, op, start, end, thread,
    thread name, label) tuples) to run_metadata.step_stats, by device."""
    by_device = {d.device: d for d in run_metadata.step_stats.dev_stats}
    for device, node, op, start, end, thread, _, label in nodes:
        if device not in by_device:
            by_device[device] = DeviceStepStats(device=device)
            run_metadata.step_stats.dev_stats.append(by_device[device])
        took = max(0, end - start)
        by_device[device].node_stats.append(NodeExecStats(
            node_name=node, all_start_micros=start, op_end_rel_micros=took,
            all_end_rel_micros=took, thread_id=thread,
            timeline_label="%s = %s()%s" % (node, op, " " + label if label else "")))


def checked(value, cls, what):
    """`value` when it is None or a `cls`; else TypeError naming what came."""
    if value is not None and not isinstance(value, cls):
        raise TypeError("%s must be a tfd.%s, not %s %r"
                        % (what, cls.__name__, type(value).__name__, value))
    return value


def seconds(ms):
    """A timeout in milliseconds as the runners take it: seconds, 0 for none."""
    return ms / 1000.0 if ms and ms > 0 else 0.0
