"""tf.train.ExponentialMovingAverage: a shadow variable per variable (or
tensor) that an update op moves toward its value, for evaluating with
averaged weights:

    ema = tfd.train.ExponentialMovingAverage(0.999, num_updates=global_step)
    with tfd.control_dependencies([train_op]):
        train_op = ema.apply(tfd.trainable_variables())   # after each step
    eval_saver_names = ema.variables_to_restore()

Each shadow is a non-trainable global variable named
"<variable>/ExponentialMovingAverage", in MOVING_AVERAGE_VARIABLES, made
beside what it averages (on its device) from its initial value; a
tensor's shadow starts at zero.
"""
from . import dtypes, framework, math_ops, variables


class ExponentialMovingAverage:
    """shadow -= (1 - decay) * (shadow - value) at each run of apply()'s op;
    with num_updates, decay is min(decay, (1 + n) / (10 + n)), so early
    averages follow the values closely, as TF1's."""

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        if zero_debias:
            raise NotImplementedError("ExponentialMovingAverage: zero_debias=True is not "
                                      "supported (its bias correction is TF1's, for tensors)")
        self._decay = decay
        self._num_updates = num_updates
        self._name = name
        self._averages = {}  # the averaged tensor's name -> its shadow variable

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Makes the shadows of var_list (the trainable variables when
        None) not made yet, and returns the op updating all of var_list's."""
        var_list = variables.trainable_variables() if var_list is None else list(var_list)
        for v in var_list:
            if not v.dtype.is_floating:
                raise TypeError("ExponentialMovingAverage averages float values; %s is %s"
                                % (v.name, v.dtype.name))
            if _key(v) not in self._averages:
                self._averages[_key(v)] = self._shadow(v)
        with framework.name_scope(self._name):
            decay = self._decay_tensor()
            updates = [self._update(self._averages[_key(v)], v, decay) for v in var_list]
            return math_ops.group(*updates, name="update")

    def _shadow(self, v):
        g = framework.get_default_graph()
        is_variable = isinstance(v, variables.Variable)
        tensor = v.value() if is_variable else framework.convert_to_tensor(v)
        base = _op_name(v)
        with g.name_scope(None), g.control_dependencies(None), g.device(None), \
                g.device(getattr(v, "device", None) or None), g.name_scope(base + "/"):
            if is_variable:
                initial = v.initialized_value()
            else:
                if not tensor.shape.is_fully_defined():
                    raise ValueError("ExponentialMovingAverage: the shadow of %s needs a fully "
                                     "known shape, not %s" % (tensor.name, tensor.shape))
                initial = math_ops.zeros(tensor.shape.as_list(), tensor.dtype)
            shadow = variables.Variable(initial, trainable=False, name=self._name)
        framework.add_to_collection(framework.GraphKeys.MOVING_AVERAGE_VARIABLES, v)
        return shadow

    def _decay_tensor(self):
        decay = framework.convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
        if self._num_updates is None:
            return decay
        n = math_ops.cast(self._num_updates, dtypes.float32)
        return math_ops.minimum(decay, (1.0 + n) / (10.0 + n), name="decay")

    @staticmethod
    def _update(shadow, v, decay):
        value = v.value() if isinstance(v, variables.Variable) else framework.convert_to_tensor(v)
        g = framework.get_default_graph()
        with g.device(None), g.device(shadow.device or None):
            step = (shadow.value() - value) * (1.0 - math_ops.cast(decay, shadow.dtype))
            return shadow.assign_sub(step)

    def average(self, var):
        """The shadow of `var`, or None when apply() was not given it."""
        return self._averages.get(_key(var))

    def average_name(self, var):
        """The name of var's shadow: "<var>/ExponentialMovingAverage"."""
        return _op_name(var) + "/" + self._name

    def variables_to_restore(self, moving_avg_variables=None):
        """For a Saver of an evaluation graph: each global variable by name,
        the averaged ones (moving_avg_variables, else MOVING_AVERAGE_VARIABLES
        and the trainable ones) under their shadow's name, so restoring
        loads the averages into the variables."""
        averaged = (moving_avg_variables if moving_avg_variables is not None else
                    framework.get_collection(framework.GraphKeys.MOVING_AVERAGE_VARIABLES)
                    + variables.trainable_variables())
        averaged_names = {_key(v) for v in averaged}
        shadows = {_key(s) for s in self._averages.values()}
        out = {}
        for v in variables.global_variables():
            if _key(v) in shadows:
                continue
            out[self.average_name(v) if _key(v) in averaged_names else _op_name(v)] = v
        return out


def _op_name(v):
    return v.op.name


def _key(v):
    return v.name
