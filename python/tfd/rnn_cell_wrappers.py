"""TF 1.15's RNN cell wrappers (tf.nn.rnn_cell.DropoutWrapper,
ResidualWrapper, DeviceWrapper): a cell that changes what goes into and out
of the cell it wraps, and makes no variables of its own. The wrapped cell's
variables keep the names they have unwrapped ("rnn/lstm_cell/kernel"), so
checkpoints line up with TF1's either way.

    cell = tfd.nn.rnn_cell.DropoutWrapper(tfd.nn.rnn_cell.LSTMCell(64), output_keep_prob=0.5)
    outputs, state = tfd.nn.dynamic_rnn(cell, x, dtype=tfd.float32)
"""
import itertools
import numbers

from . import framework
from .control_flow_ops import _flatten, _pack
from .layers_base import Layer
from .nn_ops import dropout
from .rnn_cell import LSTMStateTuple, RNNCell

__all__ = ["DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


class _Wrapper(RNNCell):
    """What the wrappers share: the wrapped cell's sizes, zero state and
    variables; each defines _wrapped_call(inputs, state, call), `call` being
    the wrapped cell's call."""

    def __init__(self, cell):
        super().__init__()
        if not all(hasattr(cell, a) for a in ("state_size", "output_size", "zero_state")) \
                or not callable(cell):
            raise TypeError("tfd.nn.rnn_cell.%s wraps an RNN cell, not %r"
                            % (type(self).__name__, cell))
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        with framework.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def _build_once(self, graph, dtype, input_shape):
        """Builds the wrapped cell, in the scope it would take unwrapped."""
        if isinstance(self._cell, Layer):
            self._cell._build_once(graph, dtype, input_shape)
        self._graph, self.dtype, self.built = graph, self.dtype or dtype, True

    def __call__(self, inputs, state, scope=None):
        def call(x, s):
            if isinstance(self._cell, RNNCell):
                return self._cell(x, s, scope=scope)
            return self._cell(x, s)
        return self._wrapped_call(framework.convert_to_tensor(inputs), state, call)

    @property
    def trainable_weights(self):
        return getattr(self._cell, "trainable_weights", [])

    @property
    def non_trainable_weights(self):
        return getattr(self._cell, "non_trainable_weights", [])


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and new state, each element
    kept with its keep probability (a number in (0, 1], or a scalar tensor,
    a placeholder fed 1.0 at evaluation, say) and scaled by its inverse; a
    new mask every step. As TF1's default, an LSTM state's c is not
    dropped, only its h. seed, with the graph's, makes the masks
    reproducible. variational_recurrent (one mask for every step) and a
    dropout_state_filter_visitor are a ValueError."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if variational_recurrent or dropout_state_filter_visitor is not None:
            raise ValueError("tfd.nn.rnn_cell.DropoutWrapper: variational_recurrent and "
                             "dropout_state_filter_visitor are not supported")
        self._keep = {}
        for what, p in (("input", input_keep_prob), ("output", output_keep_prob),
                        ("state", state_keep_prob)):
            if isinstance(p, numbers.Real) and not 0 < p <= 1:
                raise ValueError("Parameter %s_keep_prob must be between 0 and 1: %r" % (what, p))
            self._keep[what] = p
        self._seed = seed

    def _dropout(self, what, x, salt):
        """x with dropout at `what`'s keep probability, when it can drop."""
        p = self._keep[what]
        if isinstance(p, numbers.Real) and p == 1:
            return x
        seed = None if self._seed is None else self._seed + salt
        return dropout(x, keep_prob=p, seed=seed, name="%s_dropout" % what)

    def _wrapped_call(self, inputs, state, call):
        inputs = self._dropout("input", inputs, 0)
        output, new_state = call(inputs, state)
        new_state = self._drop_state(new_state)
        return self._dropout("output", output, 1), new_state

    def _drop_state(self, state):
        salts = itertools.count(2)  # each mask a seed of its own

        def drop(s):
            if isinstance(s, LSTMStateTuple):
                return LSTMStateTuple(s.c, self._dropout("state", s.h, next(salts)))
            if isinstance(s, (list, tuple)) and not hasattr(s, "_fields"):
                return type(s)(drop(x) for x in s)
            return _pack(s, [self._dropout("state", x, next(salts)) for x in _flatten(s)])
        return drop(state)


class ResidualWrapper(_Wrapper):
    """output = residual_fn(inputs, cell's output), inputs + output by
    default (their shapes must match); the state is the cell's."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn or (lambda x, y: x + y)

    def _wrapped_call(self, inputs, state, call):
        output, new_state = call(inputs, state)
        if not inputs.shape.is_compatible_with(output.shape):
            raise ValueError("tfd.nn.rnn_cell.ResidualWrapper: the inputs (%s) and the cell's "
                             "output (%s) must have one shape" % (inputs.shape, output.shape))
        return self._residual_fn(inputs, output), new_state


class DeviceWrapper(_Wrapper):
    """The cell's ops (and its zero state) on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with framework.device(self._device):
            return super().zero_state(batch_size, dtype)

    def _wrapped_call(self, inputs, state, call):
        with framework.device(self._device):
            return call(inputs, state)
