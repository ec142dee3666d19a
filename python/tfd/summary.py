"""tf.summary: TensorBoard summaries, as TF1 writes them.

    tfd.summary.scalar("loss", loss)
    tfd.summary.histogram("weights", w)
    merged = tfd.summary.merge_all()
    writer = tfd.summary.FileWriter("runs/1", sess.graph)
    summary, _ = sess.run([merged, train_op])
    writer.add_summary(summary, step)

scalar and histogram return a string tensor, a serialized tf.Summary
(ScalarSummary, HistogramSummary), and add it to the SUMMARIES collection
merge_all merges (MergeSummary); the tag is the name scope's path, as TF1's
(name "loss" under name scope "train": "train/loss"). Each also makes the
node "summaries/TAG" (an Identity of the value) or "histogram_summaries/TAG"
that the training loop's summary hook writes by itself
(MonitoredTrainingSession's summaries, `tfctl train --logdir`), so a
summary reaches TensorBoard either way.
"""
import contextlib
import re
import threading

from . import _tfd, framework, math_ops
from .op_gen import raw_ops
from .summary_proto import Summary, graph_def_bytes, serialized  # noqa: F401 (tf.summary.Summary)

__all__ = ["scalar", "histogram", "image", "merge", "merge_all", "FileWriter", "FileWriterCache",
           "Summary"]


def _clean_tag(name):
    """TF1's: characters a node name cannot hold become "_"."""
    return re.sub(r"[^-/\w\.]", "_", name).lstrip("/") if name else name


@contextlib.contextmanager
def _summary_scope(graph, name, family):
    """The tag, inside the name scope of TF1's summary_scope: the tag is the
    scope's path, after "family/" when a family is given."""
    name, family = _clean_tag(name), _clean_tag(family)
    with graph.name_scope(name if family is None else "%s/%s" % (family, name)) as scope:
        tag = scope.rstrip("/")
        yield tag if family is None else "%s/%s" % (family, tag)


def _summary(op, loop_prefix, name, tensor, collections, family):
    """op(tag, value) in the summary's scope, added to `collections`; with
    `loop_prefix`, the value is the node "<loop_prefix>/TAG" the training
    loop's summary hook reads."""
    graph = getattr(tensor, "graph", None) or framework.get_default_graph()
    with graph.as_default(), _summary_scope(graph, name, family) as tag:
        value = tensor
        if loop_prefix is not None:
            with graph.name_scope(loop_prefix + "/"):
                value = math_ops.identity(tensor, name=tag)
        summary = op(tag, value)
    for key in (framework.GraphKeys.SUMMARIES,) if collections is None else collections:
        graph.add_to_collection(key, summary)
    return summary


def scalar(name, tensor, collections=None, family=None):
    """A string scalar, the serialized tf.Summary holding `tensor` (a real
    number scalar) as a float tagged by the name scope's path and `name`;
    added to `collections` (default [GraphKeys.SUMMARIES]). The node
    "summaries/TAG" holds the value for the training loop's hook."""
    return _summary(lambda tag, v: raw_ops.scalar_summary(tag, v, name="ScalarSummary"),
                    "summaries", name, tensor, collections, family)


def histogram(name, values, collections=None, family=None):
    """A string scalar, the serialized tf.Summary holding the histogram of
    `values` (a numeric tensor of any shape) over TensorFlow's buckets. As
    TF1's, a NaN or an infinity among the values fails the step
    (InvalidArgumentError). The node "histogram_summaries/TAG" holds the
    values for the training loop's hook."""
    return _summary(lambda tag, v: raw_ops.histogram_summary(tag, v, name="HistogramSummary"),
                    "histogram_summaries", name, values, collections, family)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A string scalar, the serialized tf.Summary holding the first
    `max_outputs` images of `tensor` ([batch, height, width, channels],
    channels 1, 3 or 4; uint8, float32 or float64) as PNGs, tagged
    "TAG/image" (max_outputs 1) or "TAG/image/0", ...; float images are
    scaled into [0, 255] as TF1 scales them (ImageSummary in docs/ops.md).
    It reaches TensorBoard through merge_all and a FileWriter, or a
    MonitoredTrainingSession's summaries (which add a SummarySaverHook for
    the images they find in the SUMMARIES collection)."""
    return _summary(lambda tag, v: raw_ops.image_summary(tag, v, max_images=int(max_outputs),
                                                         name="ImageSummary"),
                    None, name, tensor, collections, family)


def merge(inputs, collections=None, name=None):
    """A string scalar, the serialized tf.Summary holding the values of
    every summary in `inputs`; a tag found twice fails the step
    (InvalidArgumentError)."""
    inputs = [framework._as_graph_element(i) for i in inputs]
    if not inputs:
        raise ValueError("tfd.summary.merge takes one summary or more")
    graph = inputs[0].graph
    with graph.as_default(), graph.name_scope(name or "Merge"):
        summary = raw_ops.merge_summary(inputs, name="MergeSummary")
    for key in collections or ():
        graph.add_to_collection(key, summary)
    return summary


def merge_all(key=framework.GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of the summaries in the default graph's collection `key`
    (those whose name matches `scope`), or None when there is none, as
    TF1's."""
    summaries = framework.get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None


class FileWriter:
    """TF1's tf.summary.FileWriter: an event file in `logdir` (made with its
    parents) that TensorBoard reads, named as TensorFlow names them
    (events.out.tfevents.<time>.<host>.<pid>, then `filename_suffix`).
    `graph` (or `graph_def`) is written for TensorBoard's graph tab. Each
    event is flushed to the file as it is added, so `max_queue` and
    `flush_secs` bound nothing; flush() has nothing left to do."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise ValueError("FileWriter(session=...) (tf.contrib.summary's writer) is not "
                             "supported; give it a logdir")
        self._logdir, self._suffix = str(logdir), filename_suffix or ""
        self._file, self._closed = _tfd.EventFile(self._logdir, self._suffix), False
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    def add_summary(self, summary, global_step=None):
        """An event at `global_step` (0 when None) holding `summary`: the
        bytes sess.run of a summary op returns, or a tfd.Summary."""
        self._file.write_summary(int(global_step or 0), serialized(summary))

    def add_graph(self, graph, global_step=None, graph_def=None):
        """The graph, for TensorBoard to draw: a tfd.Graph, or `graph_def`
        as tfd.Graph.as_graph_def() returns it."""
        if graph is not None and graph_def is not None:
            raise ValueError("give add_graph a graph or a graph_def, not both")
        nodes = graph._builder.nodes() if graph is not None else [
            (n.name, n.op, n.input, n.device) for n in graph_def.node]
        self._file.write_graph(graph_def_bytes(nodes))

    def flush(self):
        """Every event is in the file already (written as it is added)."""

    def close(self):
        """Ends the file; a later add_* raises FailedPreconditionError
        unless reopen() is called first."""
        self._file.close()
        self._closed = True

    def reopen(self):
        """After close(), a new event file in the same logdir (as TF1's;
        an open writer stays as it is)."""
        if self._closed:
            self._file, self._closed = _tfd.EventFile(self._logdir, self._suffix), False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileWriterCache:
    """TF1's: one FileWriter per logdir, shared by whoever asks for it (the
    SummarySaverHooks among them)."""

    _lock = threading.Lock()
    _writers = {}

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            key = str(logdir)
            if key not in FileWriterCache._writers:
                FileWriterCache._writers[key] = FileWriter(key)
            return FileWriterCache._writers[key]

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            writers, FileWriterCache._writers = FileWriterCache._writers, {}
        for w in writers.values():
            w.close()
