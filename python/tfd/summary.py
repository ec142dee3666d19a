"""tf.summary.scalar and tf.summary.histogram: what the training loop
writes to TensorBoard.

    tfd.summary.scalar("loss", loss)
    tfd.summary.histogram("weights", w)

make the nodes "summaries/loss" and "histogram_summaries/weights", which
the loop's summary hook fetches and writes as the tags "loss" and
"weights" (MonitoredTrainingSession's summaries, `tfctl train --logdir`):
the graph API's ScalarSummary, by the same name, and a histogram over
TensorFlow's buckets, made on the trainer from the tensor's values when a
write is due (daemon/client/training/summaries.h).
"""
from . import framework, math_ops


def _summary_node(prefix, name, tensor, family):
    tag = "%s/%s" % (family, name) if family else name
    graph = framework._as_graph_element(tensor).graph if not isinstance(
        tensor, (int, float)) else framework.get_default_graph()
    with graph.as_default(), graph.name_scope(prefix + "/"):
        return math_ops.identity(tensor, name=tag)


def scalar(name, tensor, collections=None, family=None):
    """The node "summaries/<family>/<name>" (an Identity of `tensor`)."""
    return _summary_node("summaries", name, tensor, family)


def histogram(name, values, collections=None, family=None):
    """The node "histogram_summaries/<family>/<name>" (an Identity of
    `values`, a numeric tensor of any shape). As TF1's, a NaN or an
    infinity among the values fails the write (InvalidArgumentError)."""
    return _summary_node("histogram_summaries", name, values, family)
