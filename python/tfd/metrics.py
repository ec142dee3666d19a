"""TF1's tf.metrics (tfd.metrics): streaming metrics. Each returns
(value, update_op): update_op adds a batch to counts kept in local
variables and returns the metric over every batch so far; value reads the
metric without adding. The counts are float32 zeros, in a variable scope
named after the metric (accuracy/total, precision/true_positives/count),
in GraphKeys.LOCAL_VARIABLES and METRIC_VARIABLES, never trainable:

    acc, update = tfd.metrics.accuracy(labels, tfd.argmax(logits, 1))
    sess.run(tfd.local_variables_initializer())   # also to start again
    for batch in batches:
        sess.run(update, feed(batch))
    print(sess.run(acc))

Being local, the counts live where the device scope puts the metric, one
set per replica, as in TF1.
"""
from . import dtypes, framework, math_ops, variables
from .framework import GraphKeys
from .losses import _check_broadcastable, _check_compatible, _squeeze_last
from .op_gen import raw_ops as _raw


def _metric_variable(name, shape=()):
    v = variables._local_zeros(name, list(shape), dtypes.float32)
    framework.add_to_collection(GraphKeys.METRIC_VARIABLES, v)
    return v


def _add_to(collections, value):
    for key in collections or ():
        framework.add_to_collection(key, value)


def _squeeze_dimensions(predictions, labels, weights):
    """TF1's metrics' _remove_squeezable_dimensions, on static ranks:
    labels and predictions differing by a last dimension of 1 lose it, and
    weights of predictions' rank plus or minus one lose or gain a last one."""
    predictions = math_ops._t(predictions)
    if labels is not None:
        labels, predictions = _squeeze_last(math_ops._t(labels), predictions)
        _check_compatible(predictions, labels)
    if weights is None:
        return predictions, labels, None
    weights = math_ops._t(weights)
    wr, pr = weights.shape.ndims, predictions.shape.ndims
    if wr and pr is not None:
        if wr - pr == 1:
            weights = math_ops.squeeze(weights, [wr - 1])
        elif pr - wr == 1:
            weights = math_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """TF1's: the (weighted) mean of every value given to update_op so far,
    0 before any: total / count, weights broadcast to values (a weight of 0
    leaves a value out)."""
    with variables.variable_scope(name, "mean"):
        values = math_ops.cast(values, dtypes.float32)
        total = _metric_variable("total")
        count = _metric_variable("count")
        if weights is None:
            num_values = math_ops.cast(_raw.size(values), dtypes.float32)
        else:
            values, _, weights = _squeeze_dimensions(values, None, weights)
            weights = math_ops.cast(weights, dtypes.float32)
            _check_broadcastable(weights, values)
            weights = math_ops.multiply(weights, math_ops.ones_like(values))
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total = total.assign_add(math_ops.reduce_sum(values))
        with framework.control_dependencies([values]):
            update_count = count.assign_add(num_values)
        value = _mean_of(total, count, "value")
        update_op = _mean_of(update_total, update_count, "update_op")
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op


def _mean_of(total, count, name):
    return math_ops.div_no_nan(total, math_ops.maximum(count, 0.0), name=name)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """TF1's: how often predictions equals labels (predictions cast to
    labels' dtype), weighted, as `mean` of the matches."""
    predictions, labels, weights = _squeeze_dimensions(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """TF1's: the (weighted) mean of (labels - predictions)^2 over every batch."""
    predictions, labels, weights = _squeeze_dimensions(predictions, labels, weights)
    squared_error = math_ops.squared_difference(math_ops.cast(labels, dtypes.float32),
                                                math_ops.cast(predictions, dtypes.float32))
    return mean(squared_error, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """TF1's: the (weighted) mean of |labels - predictions| over every batch."""
    predictions, labels, weights = _squeeze_dimensions(predictions, labels, weights)
    error = _raw.abs(math_ops.subtract(math_ops.cast(labels, dtypes.float32),
                                       math_ops.cast(predictions, dtypes.float32)))
    return mean(error, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """TF1's: the square root of mean_squared_error, value and update."""
    with framework.name_scope(name, "root_mean_squared_error"):
        mse, update = mean_squared_error(labels, predictions, weights)
        rmse, update_rmse = _raw.sqrt(mse), _raw.sqrt(update)
    _add_to(metrics_collections, rmse)
    _add_to(updates_collections, update_rmse)
    return rmse, update_rmse


# Counts of a confusion matrix ------------------------------------------------
def _as_bool(x):
    return math_ops.cast(x, dtypes.bool)


def _count(condition, weights, metrics_collections, updates_collections):
    """The (weighted) number of true elements of condition so far, as TF1's
    _count_condition: a float32 local variable `count`."""
    count = _metric_variable("count")
    values = math_ops.cast(condition, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = math_ops.identity(count)
    update_op = count.assign_add(math_ops.reduce_sum(values))
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op


def _counter(default_name, condition_of):
    """A TF1 count metric (true_positives, ...): labels and predictions are
    taken as booleans (nonzero is true), condition_of(labels, predictions)
    says what to count."""
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variables.variable_scope(name, default_name):
            predictions, labels, weights = _squeeze_dimensions(
                _as_bool(predictions), _as_bool(labels), weights)
            return _count(condition_of(labels, predictions), weights, metrics_collections,
                          updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = "TF1's tf.metrics.%s: the weighted count over every batch." % default_name
    return metric


_not = _raw.logical_not
true_positives = _counter("true_positives", lambda y, p: math_ops.logical_and(y, p))
false_positives = _counter("false_positives", lambda y, p: math_ops.logical_and(_not(y), p))
false_negatives = _counter("false_negatives", lambda y, p: math_ops.logical_and(y, _not(p)))
true_negatives = _counter("true_negatives",
                          lambda y, p: math_ops.logical_and(_not(y), _not(p)))


def _ratio(hits, misses, name):
    """hits / (hits + misses), or 0 while that sum is not positive (TF1's)."""
    total = math_ops.add(hits, misses)
    return math_ops.where(math_ops.greater(total, 0.0), math_ops.truediv(hits, total),
                          math_ops.zeros_like(total), name=name)


def _ratio_metric(default_name, hit, miss):
    """precision or recall: hit's count over hit's and miss's."""
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variables.variable_scope(name, default_name):
            predictions, labels, weights = _squeeze_dimensions(
                _as_bool(predictions), _as_bool(labels), weights)
            hits, update_hits = hit(labels, predictions, weights)
            misses, update_misses = miss(labels, predictions, weights)
            value = _ratio(hits, misses, "value")
            update_op = _ratio(update_hits, update_misses, "update_op")
        _add_to(metrics_collections, value)
        _add_to(updates_collections, update_op)
        return value, update_op
    metric.__name__ = default_name
    return metric


precision = _ratio_metric("precision", true_positives, false_positives)
precision.__doc__ = """TF1's tf.metrics.precision: true positives / (true
positives + false positives) over every batch, 0 before any positive
prediction; labels and predictions are taken as booleans (nonzero is
true)."""
recall = _ratio_metric("recall", true_positives, false_negatives)
recall.__doc__ = """TF1's tf.metrics.recall: true positives / (true
positives + false negatives) over every batch, 0 before any positive
label; labels and predictions are taken as booleans (nonzero is true)."""


# The area under a curve, from confusion matrices at thresholds ---------------
def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """TF1's streaming tf.metrics.auc: the area under the ROC (or, curve
    "PR", precision-recall) curve through the points of num_thresholds
    thresholds evenly spread over [0, 1] (or `thresholds`), each point from
    the (weighted) counts of true and false positives and negatives at it
    over every batch so far; summed as trapezoids, or with
    summation_method "minoring" or "majoring" as the lower or upper of each
    step's two values. predictions are probabilities in [0, 1]; labels are
    taken as booleans."""
    if curve not in ("ROC", "PR"):
        raise ValueError("curve must be either ROC or PR, %s unknown" % (curve,))
    if summation_method not in ("trapezoidal", "minoring", "majoring"):
        raise ValueError("Invalid summation_method: %s (careful_interpolation is not supported)"
                         % (summation_method,))
    points = _thresholds(num_thresholds, thresholds)
    with variables.variable_scope(name, "auc"):
        counts, updates = _confusion_at_thresholds(labels, predictions, points, weights)
        value = _area(counts, curve, summation_method, "value")
        update_op = _area(updates, curve, summation_method, "update_op")
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op


def _thresholds(num_thresholds, thresholds):
    """TF1's: `thresholds` with -eps and 1 + eps around them, or
    num_thresholds of them evenly spread, the first just below 0 and the
    last just above 1, so that every prediction in [0, 1] is counted."""
    eps = 1e-7
    if thresholds is not None:
        return [0.0 - eps] + [float(t) for t in thresholds] + [1.0 + eps]
    if num_thresholds < 2:
        raise ValueError("num_thresholds must be > 1, not %d" % num_thresholds)
    inside = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - eps] + inside + [1.0 + eps]


def _confusion_at_thresholds(labels, predictions, points, weights,
                             includes=("tp", "fn", "tn", "fp")):
    """For each threshold t, the counts of tp (label true, prediction > t),
    fn, tn and fp (those `includes` names) in float32 local variables
    [len(points)] named as TF1's (true_positives, ...): their values, and
    the ops adding a batch."""
    predictions, labels, weights = _squeeze_dimensions(
        math_ops.cast(predictions, dtypes.float32), _as_bool(labels), weights)
    row = math_ops.reshape(predictions, [1, -1])
    above = math_ops.greater(row, framework.constant([[t] for t in points], dtypes.float32))
    positive = math_ops.reshape(labels, [1, -1])
    w = None
    if weights is not None:
        w = math_ops.reshape(math_ops.multiply(math_ops.cast(weights, dtypes.float32),
                                               math_ops.ones_like(predictions)), [1, -1])
    cells = {"tp": ("true_positives", positive, above),
             "fn": ("false_negatives", positive, _not(above)),
             "tn": ("true_negatives", _not(positive), _not(above)),
             "fp": ("false_positives", _not(positive), above)}
    counts, updates = {}, {}
    for key in includes:
        var_name, label_side, prediction_side = cells[key]
        var = _metric_variable(var_name, [len(points)])
        hits = math_ops.cast(math_ops.logical_and(label_side, prediction_side), dtypes.float32)
        if w is not None:
            hits = math_ops.multiply(hits, w)
        counts[key] = math_ops.identity(var)
        updates[key] = var.assign_add(math_ops.reduce_sum(hits, 1))
    return counts, updates


def _area(c, curve, summation_method, name):
    """The area under the curve through the thresholds' points, from their
    counts (TF1's compute_auc, with its epsilon against dividing by 0)."""
    eps = 1.0e-6
    recall = math_ops.truediv(c["tp"] + eps, c["tp"] + c["fn"] + eps)
    if curve == "ROC":
        x, y = math_ops.truediv(c["fp"], c["fp"] + c["tn"] + eps), recall
    else:
        x, y = recall, math_ops.truediv(c["tp"] + eps, c["tp"] + c["fp"] + eps)
    width = x[:-1] - x[1:]
    if summation_method == "trapezoidal":
        height = (y[:-1] + y[1:]) / 2.0
    elif summation_method == "minoring":
        height = math_ops.minimum(y[:-1], y[1:])
    else:
        height = math_ops.maximum(y[:-1], y[1:])
    return math_ops.reduce_sum(math_ops.multiply(width, height), name=name)


def _at_thresholds(default_name, miss):
    """precision_at_thresholds (miss "fp") or recall_at_thresholds ("fn"):
    per threshold, tp / (tp + miss) over every batch so far, TF1's 1e-7
    keeping a threshold with no counts at 0."""
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variables.variable_scope(name, default_name):
            counts, updates = _confusion_at_thresholds(
                labels, predictions, [float(t) for t in thresholds], weights, ("tp", miss))
            value = math_ops.truediv(counts["tp"], 1e-7 + counts["tp"] + counts[miss],
                                     name="value")
            update_op = math_ops.truediv(updates["tp"], 1e-7 + updates["tp"] + updates[miss],
                                         name="update_op")
        _add_to(metrics_collections, value)
        _add_to(updates_collections, update_op)
        return value, update_op
    metric.__name__ = default_name
    metric.__doc__ = ("TF1's tf.metrics.%s: one value per threshold, a prediction above it "
                      "counting as positive." % default_name)
    return metric


precision_at_thresholds = _at_thresholds("precision_at_thresholds", "fp")
recall_at_thresholds = _at_thresholds("recall_at_thresholds", "fn")
