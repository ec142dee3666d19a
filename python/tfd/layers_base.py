"""tf.layers.Layer, TF 1.x's base of the layer classes (tfd.layers), the
base of those with a kernel and a bias (_Affine), and the argument checks
the layers share.

A layer object makes its variables at its first call, under a variable
scope fixed then, and every later call uses the same ones: that is how a
tower applied to two inputs shares its weights. The layer functions
(tfd.layers.dense, ...) each make one object and call it once.
"""
import numpy as np

from . import dtypes, framework, math_ops, nn_ops, variables
from .control_flow_ops import cond
from .op_gen import raw_ops


class Layer:
    """TF1's tf.layers.Layer: build(input_shape) makes the variables
    (add_weight) at the first call, call(inputs, ...) the ops, at every
    call. Build graphs with it from one thread at a time.

        tower = tfd.layers.Dense(8, activation=tfd.nn.relu)
        a, b = tower(x1), tower(x2)   # one "dense/kernel", one "dense/bias"
        tower.trainable_variables     # [dense/kernel, dense/bias]

    The scope is `name`, else the layer's default name made unique by
    tfd.variable_scope at the first call ("dense", "dense_1", ...); with
    _reuse (the functions' reuse=), TF1 takes the default name itself.
    """

    _default_name = "layer"  # the scope's default name; also names the layer in errors

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None,
                 _reuse=None):
        self.trainable = bool(trainable)
        self._given_name = name
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self.activity_regularizer = activity_regularizer
        self._reuse = _reuse
        self._scope = None
        self._graph = None
        self.built = False
        self._trainable_weights, self._non_trainable_weights = [], []
        self._updates, self._losses = [], []

    # What subclasses define -------------------------------------------------
    def build(self, input_shape):
        """Makes the variables (add_weight); runs once, at the first call."""

    def call(self, inputs):
        """The layer's ops of `inputs`, at every call."""
        return inputs

    def _check_input(self, x):
        """Raises if `x` is not an input this layer takes; runs before any op."""

    # Calling ------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        x = framework.convert_to_tensor(inputs)
        if self._graph is not None and x.graph is not self._graph:
            raise ValueError("tfd.layers.%s %r: the input %s is of another graph than the "
                             "layer's variables" % (self._default_name, self.name, x.name))
        self._check_input(x)
        first = not self.built
        self._build_once(x.graph, x.dtype, x.shape)
        with variables.variable_scope(self._scope, reuse=self._reuse if first else True):
            outputs = self.call(x, *args, **kwargs)
            self._regularize_activity(outputs)
        held = framework.get_collection(framework.GraphKeys.UPDATE_OPS)
        for update in self._updates:
            if not any(update is h for h in held):
                framework.add_to_collection(framework.GraphKeys.UPDATE_OPS, update)
        return outputs

    def apply(self, inputs, *args, **kwargs):
        """The same as calling the layer (TF1's synonym)."""
        return self(inputs, *args, **kwargs)

    def _build_once(self, graph, dtype, input_shape):
        """Fixes the scope and makes the variables (build), unless done: at
        the first call, or before it (tfd.nn.dynamic_rnn builds its cell
        before its loop)."""
        if self._scope is None:
            self._scope = self._first_scope()
        if self.built:
            return
        with variables.variable_scope(self._scope, reuse=self._reuse):
            self._graph, self.dtype = graph, self.dtype or dtype
            self.build(input_shape)
            self.built = True

    def _first_scope(self):
        """Fixed at the first call, not at construction, as TF1 does: an
        object takes the variable scope it is first called in."""
        name = self._given_name
        if name is None and self._reuse:
            name = self._default_name
        with variables.variable_scope(name, default_name=self._default_name,
                                      reuse=self._reuse) as scope:
            return scope

    def _regularize_activity(self, outputs):
        """TF 1.15's: activity_regularizer(output) / the batch size, a loss
        of each call (it depends on the input)."""
        if self.activity_regularizer is None:
            return
        with framework.name_scope("ActivityRegularizer"):
            for out in (outputs if isinstance(outputs, (list, tuple)) else [outputs]):
                loss = self.activity_regularizer(out)
                if loss is not None:
                    batch = math_ops.cast(raw_ops.shape(out)[0], loss.dtype)
                    self.add_loss(loss / batch)

    # Variables, updates and losses ------------------------------------------
    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None, partitioner=None):
        """tfd.get_variable in the layer's scope, kept in the layer's lists;
        trainable only if the layer is. A regularizer's loss (of a variable
        made here, not of one reused) goes to the layer's losses and to
        REGULARIZATION_LOSSES."""
        refuse(self._default_name, constraint=constraint)
        key = framework.GraphKeys.REGULARIZATION_LOSSES
        made_before = len(framework.get_collection(key))
        trained = bool(trainable) and self.trainable
        var = variables.get_variable(name, shape, dtype=dtype or self.dtype or dtypes.float32,
                                     initializer=initializer, regularizer=regularizer,
                                     trainable=trained, partitioner=partitioner)
        self._losses += framework.get_collection(key)[made_before:]
        parts = var._get_variable_list() if hasattr(var, "_get_variable_list") else [var]
        (self._trainable_weights if trained else self._non_trainable_weights).extend(parts)
        return var

    def add_update(self, updates, inputs=None):
        """Ops to run with the train op (a moving average's assign): the
        layer's calls add them to GraphKeys.UPDATE_OPS."""
        self._updates += list(updates) if isinstance(updates, (list, tuple)) else [updates]

    def add_loss(self, losses, inputs=None):
        """Losses of the layer, also put in REGULARIZATION_LOSSES (TF1's)."""
        for loss in (losses if isinstance(losses, (list, tuple)) else [losses]):
            if loss is not None:
                self._losses.append(loss)
                framework.add_to_collection(framework.GraphKeys.REGULARIZATION_LOSSES, loss)

    # What the layer holds -----------------------------------------------------
    @property
    def name(self):
        """The name given, else (once called) its scope's last part."""
        if isinstance(self._given_name, str):
            return self._given_name
        if self._scope is not None:
            return self._scope.name.rsplit("/", 1)[-1]
        return self._default_name

    @property
    def scope_name(self):
        if self._scope is None:
            raise ValueError("tfd.layers.%s %r has no scope until its first call"
                             % (self._default_name, self.name))
        return self._scope.name

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    # TF1's other names, looked up on the object so that a subclass that
    # overrides the lists above (a cell wrapper) overrides these too.
    trainable_variables = property(lambda self: self.trainable_weights)
    non_trainable_variables = property(lambda self: self.non_trainable_weights)
    variables = property(lambda self: self.weights)

    @property
    def updates(self):
        return list(self._updates)

    @property
    def losses(self):
        return list(self._losses)

    def __repr__(self):
        return "<tfd.layers.%s %r>" % (type(self).__name__, self.name)


class _Affine(Layer):
    """What Dense and Conv2D share: a kernel whose input axis is its second
    last, an optional bias, then the activation."""

    # The variables' names: tf.contrib.layers' are "weights" and "biases".
    _kernel_name, _bias_name = "kernel", "bias"

    def __init__(self, activation, use_bias, kernel_initializer, bias_initializer,
                 kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                 bias_constraint, trainable, name, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        refuse(self._default_name, kernel_constraint=kernel_constraint,
               bias_constraint=bias_constraint)
        self.activation, self.use_bias = activation, bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel = self.bias = None

    def _check_input(self, x):
        in_dim = last_dim(self._default_name, x)
        if self.kernel is not None and in_dim != self.kernel.shape.dims[-2]:
            raise ValueError("tfd.layers.%s %r: built for inputs of last dimension %d, got %s "
                             "of shape %s" % (self._default_name, self.name,
                                              self.kernel.shape.dims[-2], x.name, x.shape))

    def _build_weights(self, kernel_shape):
        self.kernel = self.add_weight(self._kernel_name, kernel_shape,
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.bias = self.add_weight(self._bias_name, kernel_shape[-1:],
                                        initializer=self.bias_initializer or
                                        variables.zeros_initializer(),
                                        regularizer=self.bias_regularizer)

    def _finish(self, y):
        if self.bias is not None:
            y = nn_ops.bias_add(y, self.bias)
        return self.activation(y) if self.activation is not None else y


# Checks of the layers' arguments ---------------------------------------------
def refuse(layer, **given):
    """TF1's arguments tfd's layers do not take: a TypeError naming the
    one given a value (None is what leaving it out gives)."""
    for key, value in given.items():
        if value is not None:
            raise TypeError("tfd.layers.%s: %s is not supported (docs/python.md, "
                            "'Not there yet')" % (layer, key))


def pair(layer, what, value):
    """An int or a pair of ints as a pair."""
    both = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(both) != 2 or not all(isinstance(v, (int, np.integer)) and v > 0 for v in both):
        raise ValueError("tfd.layers.%s: %s must be a positive int or two of them, got %r"
                         % (layer, what, value))
    return int(both[0]), int(both[1])


def padding(layer, value):
    if not isinstance(value, str) or value.lower() not in ("valid", "same"):
        raise ValueError("tfd.layers.%s: padding must be 'valid' or 'same', got %r"
                         % (layer, value))
    return value.upper()


def channels_last(layer, data_format):
    if data_format != "channels_last":
        raise ValueError("tfd.layers.%s: data_format %r is not supported; tfd's kernels are "
                         "NHWC ('channels_last')" % (layer, data_format))


def chosen(training, if_training, otherwise):
    """if_training() or otherwise(), by a Python bool or at each step by a
    boolean tensor (tfd.cond): what Dropout and BatchNormalization do with
    their call's `training`."""
    if training is True:
        return if_training()
    if training is False or training is None:
        return otherwise()
    return cond(training, if_training, otherwise)


def last_dim(layer, x):
    dims = x.shape.dims
    if dims is None or not dims or dims[-1] is None:
        raise ValueError("tfd.layers.%s: the last dimension of the input %s must be known, got "
                         "shape %s" % (layer, x.name, x.shape))
    return int(dims[-1])
