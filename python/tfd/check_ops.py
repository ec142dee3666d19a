"""TF1's runtime checks: tf.Assert, the tf.assert_* comparisons built on it,
and tf.check_numerics / tf.verify_tensor_all_finite. Each fails the step
that runs it with InvalidArgumentError saying what it found; an assert is
an op to run before what it guards (tfd.control_dependencies):

    with tfd.control_dependencies([tfd.assert_positive(x, message="x must be > 0")]):
        y = tfd.log(x)
"""
import types

from . import framework, math_ops
from .op_gen import raw_ops


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 (TF1's name)
    """The op failing the step when condition (a bool scalar) is false:
    "assertion failed:" and each of data's first `summarize` (3) values."""
    data = [framework.convert_to_tensor(d) for d in data]
    make = getattr(raw_ops, "assert")  # a Python keyword as an attribute name
    return make(framework.convert_to_tensor(condition), data,
                           summarize=3 if summarize is None else int(summarize),
                           name=name or "Assert")


def _comparison(test, symbol, what):
    """An assert_* of x and y: the elements (broadcast) all pass `test`."""
    def check(x, y, data=None, summarize=None, message=None, name=None):
        x, y = math_ops._pair(x, y)
        with framework.name_scope(name, what):
            holds = math_ops.reduce_all(test(x, y))
            if data is None:
                data = [message or "", "Condition x %s y did not hold element-wise:" % symbol,
                        "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
            elif message:
                data = [message] + list(data)
            return Assert(holds, data, summarize=summarize)
    check.__doc__ = "TF1's tf.%s: the op failing the step unless x %s y element-wise." % (
        what, symbol)
    check.__name__ = what
    return check


assert_equal = _comparison(raw_ops.equal, "==", "assert_equal")
assert_none_equal = _comparison(raw_ops.not_equal, "!=", "assert_none_equal")
assert_less = _comparison(raw_ops.less, "<", "assert_less")
assert_less_equal = _comparison(raw_ops.less_equal, "<=", "assert_less_equal")
assert_greater = _comparison(raw_ops.greater, ">", "assert_greater")
assert_greater_equal = _comparison(raw_ops.greater_equal, ">=", "assert_greater_equal")


def _against_zero(compare, what):
    """An assert_* of x against 0 of its dtype."""
    def check(x, data=None, summarize=None, message=None, name=None):
        x = framework.convert_to_tensor(x)
        return compare(x, framework.convert_to_tensor(0, dtype=x.dtype), data=data,
                       summarize=summarize, message=message, name=name or what)
    check.__doc__ = "TF1's tf.%s (a comparison of x with 0)." % what
    check.__name__ = what
    return check


assert_positive = _against_zero(assert_greater, "assert_positive")
assert_negative = _against_zero(assert_less, "assert_negative")
assert_non_negative = _against_zero(assert_greater_equal, "assert_non_negative")
assert_non_positive = _against_zero(assert_less_equal, "assert_non_positive")


def check_numerics(tensor, message, name=None):
    """tensor, or a failed step ("message : Tensor had NaN values") when an
    element is NaN or infinite; its gradient is checked the same way."""
    return raw_ops.check_numerics(framework.convert_to_tensor(tensor), message=message,
                                  name=name)


def verify_tensor_all_finite(t, msg, name=None):
    """TF1's name for check_numerics."""
    return check_numerics(t, msg, name=name)


# tf.debugging: the same functions.
debugging = types.ModuleType("tfd.debugging", "TF1's tf.debugging: the runtime checks.")
for _f in (Assert, assert_equal, assert_none_equal, assert_less, assert_less_equal,
           assert_greater, assert_greater_equal, assert_positive, assert_negative,
           assert_non_negative, assert_non_positive, check_numerics):
    setattr(debugging, _f.__name__, _f)
