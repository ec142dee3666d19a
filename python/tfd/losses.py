"""TF1's tf.losses: loss functions that weight and reduce their per-element
losses in one shared way (compute_weighted_loss) and add the result to
GraphKeys.LOSSES, and the functions that collect them:

    xent = tfd.losses.softmax_cross_entropy(onehot, logits, weights=mask)
    loss = tfd.losses.get_total_loss()   # LOSSES + REGULARIZATION_LOSSES

TF1 computes every loss in float32 whatever its inputs; tfd computes in
the inputs' float dtype (float64 stays float64), integers in float32.
"""
from . import dtypes, framework, math_ops, nn_ops
from .framework import GraphKeys
from .op_gen import raw_ops as _raw


class Reduction:
    """TF1's reductions of the weighted losses to what a loss function
    returns; SUM_BY_NONZERO_WEIGHTS is the default."""
    NONE = "none"  # the weighted losses, of the losses' shape
    SUM = "weighted_sum"
    MEAN = "weighted_mean"  # SUM / the sum of the weights
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"  # SUM / the number of losses
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"  # SUM / the nonzero weights
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s." % (key,))


# Collections ---------------------------------------------------------------
def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to loss_collection (none when it is None or "")."""
    if loss_collection:
        framework.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses of loss_collection, in the order added; with `scope`,
    those whose name it matches at the start."""
    return framework.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The regularization losses, in the order made; with `scope`, those
    whose name it matches at the start (as tfd.get_collection)."""
    return framework.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """Their sum, a scalar; a float32 0 when there are none (TF1's)."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return framework.constant(0.0, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of get_losses(scope) and, unless told not to, the
    regularization losses: TF1's. ValueError when there is nothing to add."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("get_total_loss: no losses in GraphKeys.LOSSES%s" % (
            " or GraphKeys.REGULARIZATION_LOSSES" if add_regularization_losses else ""))
    return math_ops.add_n(losses, name=name)


# Shapes --------------------------------------------------------------------
def _check_compatible(a, b):
    """TF1's assert_is_compatible_with on the static shapes of a and b."""
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError("Shapes %s and %s are incompatible" % (a.shape.dims, b.shape.dims))


def _check_broadcastable(weights, values):
    """TF1's assert_broadcastable, on static shapes only: weights is a
    scalar, or of values' rank with each dimension 1 or values'. (Where a
    shape is not known here, a mismatch fails the step in Mul instead.)"""
    w, v = weights.shape.dims, values.shape.dims
    if w is None or v is None or not w:
        return
    if len(w) != len(v):
        raise ValueError("weights can not be broadcast to values. values.rank=%d. weights.rank=%d."
                         " values.shape=%s. weights.shape=%s." % (len(v), len(w), v, w))
    if any(i is not None and j is not None and i not in (1, j) for i, j in zip(w, v)):
        raise ValueError("weights can not be broadcast to values. values.shape=%s. "
                         "weights.shape=%s." % (v, w))


def _squeeze_last(labels, predictions, expected_rank_diff=0):
    """TF1's remove_squeezable_dimensions: drops a last dimension of size 1
    from predictions or labels when their ranks differ by one more (or one
    less) than expected_rank_diff. Static ranks only."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is None or pr is None:
        return labels, predictions
    if pr - lr == expected_rank_diff + 1 and predictions.shape.dims[-1] in (None, 1):
        predictions = math_ops.squeeze(predictions, [pr - 1])
    elif pr - lr == expected_rank_diff - 1 and labels.shape.dims[-1] in (None, 1):
        labels = math_ops.squeeze(labels, [lr - 1])
    return labels, predictions


def _float(x):
    """x as a tensor of a float dtype: its own, or float32."""
    x = math_ops._t(x)
    return x if x.dtype.is_floating else math_ops.cast(x, dtypes.float32)


def _as(x, dtype):
    """x (a tensor or a value) as a tensor of dtype."""
    if math_ops._is_tensor(x):
        return math_ops.cast(x, dtype)
    return framework.convert_to_tensor(x, dtype=dtype)


# Weighting and reduction ---------------------------------------------------
def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: losses times weights (a scalar, or broadcastable to losses:
    each dimension 1 or the losses'), reduced as `reduction` says; a
    division by a zero count or weight sum gives 0 (div_no_nan). The result
    goes to loss_collection. The gradient reaches weights too, as in TF1
    (stop_gradient them if they come from the model)."""
    Reduction.validate(reduction)
    if weights is None:
        raise ValueError("compute_weighted_loss: weights must not be None")
    with framework.name_scope(scope, "weighted_loss"):
        losses = _float(losses)
        w = _as(weights, losses.dtype)
        _check_broadcastable(w, losses)
        weighted = math_ops.multiply(losses, w)
        if reduction == Reduction.NONE:
            loss = weighted
        elif reduction == Reduction.SUM:
            loss = math_ops.reduce_sum(weighted)
        else:
            loss = math_ops.div_no_nan(math_ops.reduce_sum(weighted),
                                       _divisor(reduction, losses, weights, w), name="value")
        add_loss(loss, loss_collection)
        return loss


def _divisor(reduction, losses, weights, w):
    """What the weighted sum is divided by for a mean-like reduction."""
    if reduction == Reduction.MEAN:
        return math_ops.reduce_sum(math_ops.multiply(math_ops.ones_like(losses), w))
    if reduction == Reduction.SUM_BY_NONZERO_WEIGHTS and not (
            isinstance(weights, float) and weights != 0.0):
        # TF1's num_present: the nonzero weights, counted once per loss they cover.
        present = math_ops.cast(math_ops.not_equal(w, 0), losses.dtype)
        with framework.name_scope("num_present"):
            return math_ops.reduce_sum(math_ops.multiply(present, math_ops.ones_like(losses)))
    with framework.name_scope("num_elements"):
        return math_ops.cast(_raw.size(losses), losses.dtype)


# The loss functions --------------------------------------------------------
def _pair_of(labels, predictions, label_name="labels", prediction_name="predictions"):
    """predictions as a float tensor and labels as one of its dtype, of
    compatible shapes (TF1's checks and ValueErrors)."""
    if labels is None:
        raise ValueError("%s must not be None." % label_name)
    if predictions is None:
        raise ValueError("%s must not be None." % prediction_name)
    predictions = _float(predictions)
    labels = _as(labels, predictions.dtype)
    _check_compatible(predictions, labels)
    return labels, predictions


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: |predictions - labels|, weighted and reduced."""
    with framework.name_scope(scope, "absolute_difference") as s:
        labels, predictions = _pair_of(labels, predictions)
        losses = _raw.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: (predictions - labels)^2, weighted and reduced."""
    with framework.name_scope(scope, "mean_squared_error") as s:
        labels, predictions = _pair_of(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """TF1's: 1 - sum(predictions * labels) along `axis` (both unit-
    normalized along it already), weighted and reduced."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with framework.name_scope(scope, "cosine_distance_loss") as s:
        labels, predictions = _pair_of(labels, predictions)
        products = math_ops.multiply(predictions, labels)
        losses = 1.0 - math_ops.reduce_sum(products, [axis], keepdims=True)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """TF1's: for each example (dimension 0), the mean over pairs of its
    elements i != j of ((p_i - p_j) - (l_i - l_j))^2, an example's elements
    being those of nonzero weight; times its weight, summed over the
    batch. Worked out as TF1 does, from sums: 2 S2 / (n - 1) - 2 S1^2 /
    (n (n - 1)), S1 and S2 the sums of the differences and their squares."""
    with framework.name_scope(scope, "mean_pairwise_squared_error"):
        labels, predictions = _pair_of(labels, predictions)
        w = _as(weights, predictions.dtype)
        _check_broadcastable(w, predictions)
        diffs = math_ops.subtract(predictions, labels)
        axes = math_ops.range(1, _raw.rank(diffs))
        present = math_ops.multiply(math_ops.cast(math_ops.not_equal(w, 0), diffs.dtype),
                                    math_ops.ones_like(diffs))
        n = math_ops.reduce_sum(present, axes, keepdims=True)
        squares = math_ops.reduce_sum(_raw.square(diffs), axes, keepdims=True)
        term1 = 2.0 * math_ops.div_no_nan(squares, math_ops.maximum(n - 1, 0))
        sums = math_ops.reduce_sum(diffs, axes, keepdims=True)
        term2 = 2.0 * math_ops.div_no_nan(_raw.square(sums), math_ops.maximum(n * (n - 1), 0))
        loss = math_ops.reduce_sum(math_ops.multiply(term1 - term2, w))
        loss = math_ops.where(math_ops.reduce_sum(n) > 0, loss, math_ops.zeros_like(loss),
                              name="value")
        add_loss(loss, loss_collection)
        return loss


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: for e = |predictions - labels|, e^2 / 2 up to delta and
    delta^2 / 2 + delta (e - delta) beyond, written as TF1 writes it (with
    min(e, delta)) so the gradient is e's below delta and delta's above."""
    with framework.name_scope(scope, "huber_loss") as s:
        labels, predictions = _pair_of(labels, predictions)
        error = _raw.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(error, delta)
        linear = math_ops.subtract(error, quadratic)
        losses = math_ops.add(math_ops.multiply(0.5, math_ops.multiply(quadratic, quadratic)),
                              math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: -z log(p + epsilon) - (1 - z) log(1 - p + epsilon) for
    probabilities p and labels z."""
    with framework.name_scope(scope, "log_loss") as s:
        z, p = _pair_of(labels, predictions)
        losses = math_ops.subtract(
            math_ops.negative(math_ops.multiply(z, _raw.log(math_ops.add(p, epsilon)))),
            math_ops.multiply(math_ops.subtract(1.0, z),
                              _raw.log(math_ops.add(math_ops.subtract(1.0, p), epsilon))))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: max(0, 1 - y x) for labels 0 or 1 taken as y = -1 or 1."""
    with framework.name_scope(scope, "hinge_loss") as s:
        labels, logits = _pair_of(labels, logits, prediction_name="logits")
        signs = math_ops.subtract(math_ops.multiply(2.0, labels), 1.0)
        losses = _raw.relu(math_ops.subtract(1.0, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: tfd.nn.sigmoid_cross_entropy_with_logits per element; with
    label_smoothing s, labels z become z (1 - s) + s / 2."""
    with framework.name_scope(scope, "sigmoid_cross_entropy_loss") as s:
        labels, logits = _pair_of(multi_class_labels, logits, "multi_class_labels", "logits")
        if label_smoothing > 0:
            labels = math_ops.add(math_ops.multiply(labels, 1.0 - label_smoothing),
                                  0.5 * label_smoothing)
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: the softmax cross entropy of each row of logits [batch,
    classes]; weights are per row ([batch] or scalar). With label_smoothing
    s and k classes, labels z become z (1 - s) + s / k. No gradient reaches
    the labels, as in TF1."""
    with framework.name_scope(scope, "softmax_cross_entropy_loss") as s:
        labels, logits = _pair_of(onehot_labels, logits, "onehot_labels", "logits")
        if label_smoothing > 0:
            labels = math_ops.add(math_ops.multiply(labels, 1.0 - label_smoothing),
                                  math_ops.truediv(label_smoothing, _num_classes(labels)))
        labels = math_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def _num_classes(labels):
    """The size of labels' last dimension, in labels' dtype."""
    dims = labels.shape.dims
    if dims and dims[-1] is not None:
        return framework.convert_to_tensor(float(dims[-1]), dtype=labels.dtype)
    return math_ops.cast(_raw.shape(labels)[-1], labels.dtype)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """TF1's: the softmax cross entropy of each row of logits [batch,
    classes] for the class ids labels ([batch], or [batch, 1] squeezed, as
    weights [batch, 1] are)."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with framework.name_scope(scope, "sparse_softmax_cross_entropy_loss") as s:
        logits = _float(logits)
        labels, logits = _squeeze_last(math_ops._t(labels), logits, expected_rank_diff=1)
        w = _squeeze_weights(weights, labels, logits.dtype)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, w, s, loss_collection, reduction)


def _squeeze_weights(weights, labels, dtype):
    """weights of labels' rank plus one lose their last dimension (TF1's
    [batch, 1] for [batch] losses); a Python number is left as it is."""
    if isinstance(weights, (int, float)) or weights is None:
        return weights
    w = _as(weights, dtype)
    if None not in (w.shape.ndims, labels.shape.ndims) and \
            w.shape.ndims - labels.shape.ndims == 1:
        w = math_ops.squeeze(w, [w.shape.ndims - 1])
    return w
