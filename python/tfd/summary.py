"""tf.summary.scalar: a scalar the training loop writes to TensorBoard.

    tfd.summary.scalar("loss", loss)

makes the node "summaries/loss", which the loop's summary hook fetches and
writes as the tag "loss" (MonitoredTrainingSession's summaries, `tfctl train
--logdir`): the graph API's ScalarSummary, by the same name.
"""
from . import framework, math_ops


def scalar(name, tensor, collections=None, family=None):
    """The node "summaries/<family>/<name>" (an Identity of `tensor`)."""
    tag = "%s/%s" % (family, name) if family else name
    graph = framework._as_graph_element(tensor).graph if not isinstance(
        tensor, (int, float)) else framework.get_default_graph()
    with graph.as_default(), graph.name_scope("summaries/"):
        return math_ops.identity(tensor, name=tag)
