"""tf.nn.rnn_cell, TF 1.15's recurrent cells: BasicRNNCell, BasicLSTMCell,
LSTMCell, GRUCell, MultiRNNCell, their base RNNCell and LSTMStateTuple.

A cell is a tfd.layers.Layer that computes one time step:
`output, new_state = cell(inputs, state)`, inputs [batch, depth]. Its
variables are made at the first call (or by dynamic_rnn before its loop),
named as TF1's so that its checkpoints' names line up
("rnn/basic_lstm_cell/kernel", "rnn/gru_cell/gates/bias"), and every later
call (every time step) uses the same ones.

    cell = tfd.nn.rnn_cell.BasicLSTMCell(32)
    state = cell.zero_state(batch_size, tfd.float32)
    output, state = cell(x_t, state)          # state is an LSTMStateTuple(c, h)
"""
import collections

import numpy as np

from . import dtypes, framework, math_ops, variables
from . import layers_base as base
from .control_flow_ops import _flatten, _pack
from .layers_base import Layer
from .nn_ops import nn
from .op_gen import raw_ops

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "LSTMStateTuple"]

# What TF1's cells take by name for `activation` (Keras' names).
_ACTIVATIONS = {"tanh": raw_ops.tanh, "sigmoid": raw_ops.sigmoid, "relu": raw_ops.relu,
                "relu6": raw_ops.relu6, "elu": raw_ops.elu, "selu": raw_ops.selu,
                "softplus": raw_ops.softplus, "linear": math_ops.identity}


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: c, the memory, and h, the output (TF1's order)."""
    __slots__ = ()

    @property
    def dtype(self):
        if self.c.dtype != self.h.dtype:
            raise TypeError("LSTMStateTuple: c is %s and h is %s" % (self.c.dtype.name,
                                                                      self.h.dtype.name))
        return self.c.dtype


def zeros(prefix, size, dtype):
    """Zeros of shape prefix + [size], prefix a list of ints and scalar
    tensors. With a tensor there, the static shape still knows `size`
    (Fill alone would know no dimension) and nothing of the prefix."""
    dtype = dtypes.as_dtype(dtype)
    if all(isinstance(p, (int, np.integer)) for p in prefix):
        return math_ops.zeros([int(p) for p in prefix] + [size], dtype)
    dynamic = math_ops.zeros(math_ops.stack(list(prefix) + [1]), dtype)
    return dynamic + math_ops.zeros([size], dtype)  # broadcasts: [..., 1] + [size]


def _activation(cell, activation):
    if activation is None:
        return raw_ops.tanh
    if callable(activation):
        return activation
    if activation in _ACTIVATIONS:
        return _ACTIVATIONS[activation]
    raise ValueError("tfd.nn.rnn_cell.%s: activation must be a function or one of %s, got %r"
                     % (cell, sorted(_ACTIVATIONS), activation))


class RNNCell(Layer):
    """TF1's tf.nn.rnn_cell.RNNCell: a layer called as cell(inputs, state)
    that returns (output, new_state). A subclass defines state_size (an int
    or a nested tuple of ints), output_size, build(inputs_shape) and
    call(inputs, state)."""

    _default_name = "rnn_cell"

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None):
        super().__init__(trainable=trainable, name=name, dtype=dtype, _reuse=_reuse)

    @property
    def state_size(self):
        raise NotImplementedError("%s defines no state_size" % type(self).__name__)

    @property
    def output_size(self):
        raise NotImplementedError("%s defines no output_size" % type(self).__name__)

    def __call__(self, inputs, state, scope=None):
        """One step. `scope`, as TF1's, names the variable scope the first
        call makes the variables in (instead of the cell's name); a later
        call's scope changes nothing, the variables being made."""
        if scope is not None and self._scope is None:
            with variables.variable_scope(scope, reuse=self._reuse) as fixed:
                self._scope = fixed
        return super().__call__(inputs, state)

    def _check_input(self, x):
        name = type(self).__name__
        if x.shape.ndims != 2:
            raise ValueError("tfd.nn.rnn_cell.%s: inputs must be [batch, depth], got %s of shape "
                             "%s" % (name, x.name, x.shape))
        depth = base.last_dim(name, x)
        if not x.dtype.is_floating:
            raise ValueError("tfd.nn.rnn_cell.%s: inputs must be floating point, got %s"
                             % (name, x.dtype.name))
        built_for = getattr(self, "_input_depth", None)
        if built_for is not None and depth != built_for:
            raise ValueError("tfd.nn.rnn_cell.%s %r: built for inputs of depth %d, got %s of "
                             "shape %s" % (name, self.name, built_for, x.name, x.shape))

    def zero_state(self, batch_size, dtype):
        """Zeros in state_size's structure, each [batch_size, size];
        batch_size an int or a scalar int32 tensor."""
        with framework.name_scope(type(self).__name__ + "ZeroState"):
            return _pack(self.state_size,
                         [zeros([batch_size], s, dtype) for s in _flatten(self.state_size)])

    def _kernel_and_bias(self, prefix, input_depth, units, kernel_initializer=None,
                         bias_initializer=None):
        """TF1's "<prefix>kernel" [input_depth + state, units] and
        "<prefix>bias" [units] (zeros unless given)."""
        self._input_depth = input_depth
        kernel = self.add_weight(prefix + "kernel", [input_depth + self._h_depth, units],
                                 initializer=kernel_initializer)
        bias = self.add_weight(prefix + "bias", [units],
                               initializer=bias_initializer or variables.zeros_initializer())
        return kernel, bias

    @property
    def _h_depth(self):
        """The width of the state part that joins the inputs in the matmul."""
        return self._num_units


def _affine(inputs, h, kernel, bias):
    return nn.bias_add(math_ops.matmul(math_ops.concat([inputs, h], 1), kernel), bias)


class BasicRNNCell(RNNCell):
    """output = new_state = activation([inputs, state] @ kernel + bias)."""

    _default_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 trainable=True):
        super().__init__(trainable=trainable, name=name, dtype=dtype, _reuse=reuse)
        self._num_units = int(num_units)
        self._activation = _activation("BasicRNNCell", activation)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        self._kernel, self._bias = self._kernel_and_bias("", inputs_shape[-1], self._num_units)

    def call(self, inputs, state):
        output = self._activation(_affine(inputs, state, self._kernel, self._bias))
        return output, output


class GRUCell(RNNCell):
    """TF1's GRU: gates r, u = sigmoid([inputs, state] @ gates/kernel +
    gates/bias) (bias 1.0 by default), candidate c = activation([inputs,
    r * state] @ candidate/kernel + candidate/bias); new state u * state +
    (1 - u) * c, also the output."""

    _default_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, trainable=True):
        super().__init__(trainable=trainable, name=name, dtype=dtype, _reuse=reuse)
        self._num_units = int(num_units)
        self._activation = _activation("GRUCell", activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth, n = inputs_shape[-1], self._num_units
        self._gate_kernel, self._gate_bias = self._kernel_and_bias(
            "gates/", depth, 2 * n, self._kernel_initializer,
            self._bias_initializer or variables.constant_initializer(1.0))
        self._candidate_kernel, self._candidate_bias = self._kernel_and_bias(
            "candidate/", depth, n, self._kernel_initializer, self._bias_initializer)

    def call(self, inputs, state):
        gates = raw_ops.sigmoid(_affine(inputs, state, self._gate_kernel, self._gate_bias))
        r, u = math_ops.split(gates, 2, axis=1)
        c = self._activation(_affine(inputs, r * state, self._candidate_kernel,
                                     self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class _LSTMBase(RNNCell):
    """What both LSTMs share: the state, as an LSTMStateTuple(c, h) or (not
    state_is_tuple) one tensor [c, h] along axis 1, and the gates i, j, f, o
    of one matmul, forget_bias added to f."""

    def __init__(self, num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype,
                 trainable, num_proj=None):
        super().__init__(trainable=trainable, name=name, dtype=dtype, _reuse=reuse)
        self._num_units = int(num_units)
        self._num_proj = None if num_proj is None else int(num_proj)
        self._forget_bias = forget_bias
        self._state_is_tuple = bool(state_is_tuple)
        self._activation = _activation(type(self).__name__, activation)

    @property
    def _h_depth(self):
        return self._num_units if self._num_proj is None else self._num_proj

    @property
    def state_size(self):
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, self._h_depth)
        return self._num_units + self._h_depth

    @property
    def output_size(self):
        return self._h_depth

    def _split_state(self, state):
        if self._state_is_tuple:
            return state
        return math_ops.split(state, [self._num_units, self._h_depth], axis=1)

    def _join_state(self, c, h):
        return LSTMStateTuple(c, h) if self._state_is_tuple else math_ops.concat([c, h], 1)

    def _gates(self, inputs, h):
        i, j, f, o = math_ops.split(_affine(inputs, h, self._kernel, self._bias), 4, axis=1)
        return i, j, f + self._forget_bias, o


class BasicLSTMCell(_LSTMBase):
    """TF1's basic LSTM: c' = c * sigmoid(f + forget_bias) + sigmoid(i) *
    activation(j), h' = activation(c') * sigmoid(o); variables kernel
    [depth + n, 4n] and bias [4n] (zeros)."""

    _default_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, trainable=True):
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype,
                         trainable)

    def build(self, inputs_shape):
        self._kernel, self._bias = self._kernel_and_bias("", inputs_shape[-1],
                                                         4 * self._num_units)

    def call(self, inputs, state):
        c, h = self._split_state(state)
        i, j, f, o = self._gates(inputs, h)
        sigmoid = raw_ops.sigmoid
        new_c = c * sigmoid(f) + sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * sigmoid(o)
        return new_h, self._join_state(new_c, new_h)


class LSTMCell(_LSTMBase):
    """TF1's LSTM with its options: use_peepholes (w_f_diag, w_i_diag,
    w_o_diag: c enters the f and i gates, the new c the o gate), cell_clip
    (c clipped to [-cell_clip, cell_clip]), num_proj (the output h =
    m @ projection/kernel [n, num_proj], clipped by proj_clip). The kernel
    is [depth + h, 4n], `initializer` its (and the peepholes' and the
    projection's) initializer."""

    _default_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, trainable=True):
        # Deprecated in TF1 already (a partitioner of the scope does it there).
        base.refuse("LSTMCell", num_unit_shards=num_unit_shards,
                    num_proj_shards=num_proj_shards)
        if proj_clip is not None and num_proj is None:
            raise ValueError("tfd.nn.rnn_cell.LSTMCell: proj_clip clips the projection; it "
                             "needs num_proj")
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype,
                         trainable, num_proj=num_proj)
        self._use_peepholes = bool(use_peepholes)
        self._cell_clip, self._proj_clip = cell_clip, proj_clip
        self._initializer = initializer

    def build(self, inputs_shape):
        n, init = self._num_units, self._initializer
        self._kernel, self._bias = self._kernel_and_bias("", inputs_shape[-1], 4 * n, init)
        if self._use_peepholes:
            self._w_f_diag, self._w_i_diag, self._w_o_diag = (
                self.add_weight(w, [n], initializer=init)
                for w in ("w_f_diag", "w_i_diag", "w_o_diag"))
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight("projection/kernel", [n, self._num_proj],
                                                initializer=init)

    def call(self, inputs, state):
        c_prev, h_prev = self._split_state(state)
        i, j, f, o = self._gates(inputs, h_prev)
        sigmoid = raw_ops.sigmoid
        if self._use_peepholes:
            f, i = f + self._w_f_diag * c_prev, i + self._w_i_diag * c_prev
        c = sigmoid(f) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            o = o + self._w_o_diag * c
        h = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            h = math_ops.matmul(h, self._proj_kernel)
            if self._proj_clip is not None:
                h = math_ops.clip_by_value(h, -self._proj_clip, self._proj_clip)
        return h, self._join_state(c, h)


class MultiRNNCell(RNNCell):
    """Cells stacked: cell k's output is cell k+1's input, the last one's
    the output; the state is the tuple of theirs (or, not state_is_tuple,
    one tensor of theirs along axis 1). Cell k's variables are under
    "cell_<k>/" of the stack's scope: "rnn/multi_rnn_cell/cell_0/lstm_cell/kernel"."""

    _default_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not isinstance(cells, (list, tuple)):
            raise TypeError("tfd.nn.rnn_cell.MultiRNNCell: cells must be a list or tuple, got %r"
                            % (cells,))
        if not cells:
            raise ValueError("tfd.nn.rnn_cell.MultiRNNCell: no cells given")
        self._cells, self._state_is_tuple = list(cells), bool(state_is_tuple)
        if not self._state_is_tuple and any(isinstance(c.state_size, tuple) for c in cells):
            raise ValueError("tfd.nn.rnn_cell.MultiRNNCell: state_is_tuple=False needs cells "
                             "whose states are single tensors; their state sizes are %s"
                             % [c.state_size for c in cells])

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        if not self._state_is_tuple:
            return super().zero_state(batch_size, dtype)
        with framework.name_scope("MultiRNNCellZeroState"):
            return tuple(c.zero_state(batch_size, dtype) for c in self._cells)

    def _check_input(self, x):
        if x.shape.ndims != 2 or x.shape[-1] is None:
            raise ValueError("tfd.nn.rnn_cell.MultiRNNCell: inputs must be [batch, depth] with "
                             "the depth known, got %s of shape %s" % (x.name, x.shape))

    def build(self, inputs_shape):
        """Builds the cells too, in their scopes, so that building the stack
        (dynamic_rnn does, before its loop) makes all its variables."""
        depth = inputs_shape[-1]
        for k, cell in enumerate(self._cells):
            if isinstance(cell, Layer):
                with variables.variable_scope("cell_%d" % k):
                    cell._build_once(self._graph, self.dtype,
                                     framework.TensorShape([None, depth]))
                self._trainable_weights += cell.trainable_weights
                self._non_trainable_weights += cell.non_trainable_weights
            depth = cell.output_size

    def call(self, inputs, state):
        states = self._cell_states(state)
        new_states = []
        for k, cell in enumerate(self._cells):
            with variables.variable_scope("cell_%d" % k):
                inputs, new_state = cell(inputs, states[k])
            new_states.append(new_state)
        if self._state_is_tuple:
            return inputs, tuple(new_states)
        return inputs, math_ops.concat(new_states, 1)

    def _cell_states(self, state):
        if not self._state_is_tuple:
            return math_ops.split(state, [c.state_size for c in self._cells], axis=1)
        if not isinstance(state, (list, tuple)) or len(state) != len(self._cells):
            raise ValueError("tfd.nn.rnn_cell.MultiRNNCell: the state must be a tuple of %d "
                             "states (one a cell), got %r" % (len(self._cells), state))
        return state
