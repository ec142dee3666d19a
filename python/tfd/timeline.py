"""A traced step as a Chrome trace, as TF1's tensorflow.python.client.timeline:

    options = tfd.RunOptions(trace_level=tfd.RunOptions.FULL_TRACE)
    metadata = tfd.RunMetadata()
    sess.run(train_op, options=options, run_metadata=metadata)
    trace = tfd.timeline.Timeline(metadata.step_stats)
    with open("step.json", "w") as f:
        f.write(trace.generate_chrome_trace_format())

Open the file in chrome://tracing or Perfetto: a process per device, a row
per thread, a box per node.
"""
import json


class Timeline:
    """The Chrome trace of one step's StepStats (tfd.RunMetadata's)."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string. tfd records neither the tensors
        between nodes nor memory, so show_dataflow and show_memory add
        nothing."""
        events = []
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": dev.device}})
            for node in dev.node_stats:
                op = _op_of(node.timeline_label) or node.node_name
                events.append({"name": op, "cat": "Op", "ph": "X", "pid": pid,
                               "tid": node.thread_id, "ts": node.all_start_micros,
                               "dur": node.all_end_rel_micros,
                               "args": {"name": node.node_name, "op": op}})
        return json.dumps({"traceEvents": events})


def _op_of(label):
    """The op type in a timeline label ("name = Op(...) ...")."""
    _, eq, rest = label.partition(" = ")
    return rest.split("(", 1)[0] if eq else ""
