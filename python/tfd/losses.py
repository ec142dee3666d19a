"""tf.losses' functions of the regularization losses: what regularizers
given to get_variable and the layers put in
GraphKeys.REGULARIZATION_LOSSES (tfd.regularizers), to add to a model's
loss:

    loss = cross_entropy + tfd.losses.get_regularization_loss()
"""
from . import framework, math_ops


def get_regularization_losses(scope=None):
    """The regularization losses, in the order made; with `scope`, those
    whose name it matches at the start (as tfd.get_collection)."""
    return framework.get_collection(framework.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """Their sum, a scalar; a float32 0 when there are none (TF1's)."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return framework.constant(0.0, name=name)
