"""tf.nn.dynamic_rnn, static_rnn and bidirectional_dynamic_rnn, TF 1.15's
ways to run a cell (tfd.nn.rnn_cell) over sequences, and the namespaces
that hold them: tfd.nn.rnn_cell (with the cell wrappers), tfd.nn.*_rnn,
tfd.contrib.rnn.

    cell = tfd.nn.rnn_cell.LSTMCell(64)
    outputs, state = tfd.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tfd.float32)
    # x [batch, time, depth] -> outputs [batch, time, 64]; state an LSTMStateTuple

dynamic_rnn runs the steps in a tfd.while_loop, as many as the inputs have
at run time; static_rnn unrolls them into the graph. Both name their
variables under the variable scope "rnn" (or `scope`), as TF1's:
"rnn/lstm_cell/kernel".
"""
import types

from . import control_flow_ops, dtypes, framework, math_ops, regularizers, variables
from .control_flow_ops import _flatten, _pack
from .layers_base import Layer
from .nn_ops import nn
from .op_gen import raw_ops
from .rnn_cell import (BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple,
                       MultiRNNCell, RNNCell)
from .rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper
from .tensor_array_ops import TensorArray

__all__ = ["dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn", "static_bidirectional_rnn"]


def _check_cell(fn, cell):
    """TF1's assert_like_rnncell: what a runner needs of a cell."""
    missing = [what for what, ok in (
        ("output_size", hasattr(cell, "output_size")),
        ("state_size", hasattr(cell, "state_size")),
        ("zero_state", hasattr(cell, "zero_state")),
        ("__call__", callable(cell))) if not ok]
    if missing:
        raise TypeError("tfd.nn.%s: cell %r is not an RNN cell: it has no %s"
                        % (fn, cell, ", ".join(missing)))
    if len(_flatten(cell.output_size)) != 1:
        raise TypeError("tfd.nn.%s: cells with nested outputs (output_size %r) are not "
                        "supported" % (fn, cell.output_size))


def _first_state(fn, cell, initial_state, dtype, batch):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("tfd.nn.%s: without initial_state, dtype (the zero state's) must be "
                         "given" % fn)
    return cell.zero_state(batch, dtype)


def _lengths(fn, sequence_length):
    if sequence_length is None:
        return None
    lengths = framework.convert_to_tensor(sequence_length)
    if lengths.shape.ndims not in (None, 1) or not lengths.dtype.is_integer:
        raise ValueError("tfd.nn.%s: sequence_length must be an int vector [batch], got %s of "
                         "shape %s" % (fn, lengths.dtype.name, lengths.shape))
    return math_ops.cast(lengths, dtypes.int32, name="sequence_length")


def _step(cell, inputs, state, time, lengths):
    """One call of the cell; with lengths, the rows whose sequence has ended
    by `time` get a zero output and keep their state (TF1's _rnn_step), so
    the final state is each sequence's state at its own last step."""
    output, new_state = cell(inputs, state)
    if lengths is None:
        return output, new_state
    ended = lengths <= time  # [batch]: Select takes a row per element
    output = math_ops.where(ended, math_ops.zeros_like(output), output)
    kept = [math_ops.where(ended, old, new)
            for old, new in zip(_flatten(state), _flatten(new_state))]
    return output, _pack(new_state, kept)


def _with_static_shape(t, dims):
    """`t`, its static shape merged with `dims` (what the loop cannot say)."""
    t.set_shape(dims)
    return t


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """TF1's tf.nn.dynamic_rnn: `cell` over the time steps of `inputs`
    ([batch, time, depth], or [time, batch, depth] when time_major), in a
    tfd.while_loop running as many steps as the inputs have at run time.
    Returns (outputs, final state): outputs [batch, time, output_size] (or
    time-major); with sequence_length ([batch] ints), a row's outputs past
    its length are zeros and its final state is the one at its length.
    The state starts at initial_state, else at cell.zero_state(batch,
    dtype). swap_memory is TF1's and changes nothing here.

    As TF1's, the loop reads each step's inputs from a tfd.TensorArray
    and writes each step's output to another, stacked after the loop, so
    a step copies only its own rows, forward and backward. Inputs of no
    time steps need a known batch size and depth (TF1's limit too: an
    empty array stacks only to a known shape)."""
    _check_cell("dynamic_rnn", cell)
    inputs = framework.convert_to_tensor(inputs)
    if inputs.shape.ndims != 3:
        raise ValueError("tfd.nn.dynamic_rnn: inputs must be [batch, time, depth] (or time-major), "
                         "got %s of shape %s" % (inputs.name, inputs.shape))
    with variables.variable_scope(scope or "rnn"):
        steps = inputs if time_major else math_ops.transpose(inputs, [1, 0, 2])
        static_time, static_batch, depth = steps.shape.dims
        shape = raw_ops.shape(steps)
        batch = static_batch if static_batch is not None else shape[1]
        state = _first_state("dynamic_rnn", cell, initial_state, dtype, batch)
        lengths = _lengths("dynamic_rnn", sequence_length)
        if isinstance(cell, Layer):
            # Built where TF1's first call in the loop's body would build
            # it: its variables, made outside the loop, under this scope.
            cell._build_once(steps.graph, steps.dtype,
                             framework.TensorShape([static_batch, depth]))
        size = cell.output_size
        step_inputs = TensorArray(steps.dtype, size=shape[0], element_shape=[static_batch, depth],
                                  name="input_ta").unstack(steps)
        step_outputs = TensorArray(steps.dtype, size=shape[0],
                                   element_shape=[static_batch, size], name="output_ta")

        def body(time, state, step_outputs):
            output, state = _step(cell, step_inputs.read(time), state, time, lengths)
            return time + 1, state, step_outputs.write(time, output)

        _, state, step_outputs = control_flow_ops.while_loop(
            lambda time, state, step_outputs: time < shape[0], body, [0, state, step_outputs],
            shape_invariants=[framework.TensorShape([]),
                              _pack(state, [s.shape for s in _flatten(state)]), None],
            parallel_iterations=parallel_iterations or 32, swap_memory=swap_memory)
        outputs = _with_static_shape(step_outputs.stack(), [static_time, static_batch, size])
        if not time_major:
            outputs = math_ops.transpose(outputs, [1, 0, 2])
    return outputs, state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """TF1's tf.nn.static_rnn: `cell` over `inputs`, a list of [batch,
    depth] tensors (one a step), unrolled into the graph: returns (the list
    of outputs, the final state), with sequence_length as dynamic_rnn's."""
    _check_cell("static_rnn", cell)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("tfd.nn.static_rnn: inputs must be a list of tensors (one a step), got "
                        "%r" % (inputs,))
    if not inputs:
        raise ValueError("tfd.nn.static_rnn: inputs is empty")
    inputs = [framework.convert_to_tensor(x) for x in inputs]
    with variables.variable_scope(scope or "rnn"):
        first = inputs[0]
        batch = first.shape.dims[0] if first.shape.ndims else None
        batch = batch if batch is not None else raw_ops.shape(first)[0]
        state = _first_state("static_rnn", cell, initial_state, dtype, batch)
        lengths = _lengths("static_rnn", sequence_length)
        outputs = []
        for time, x in enumerate(inputs):
            output, state = _step(cell, x, state, time, lengths)
            outputs.append(output)
    return outputs, state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """TF1's: dynamic_rnn of cell_fw over `inputs` and of cell_bw over them
    reversed in time (each row's first sequence_length steps, the rest left
    in place), under "<scope or bidirectional_rnn>/fw" and "/bw"; returns
    ((outputs_fw, outputs_bw), (state_fw, state_bw)), outputs_bw reversed
    back so that step t of both is about input step t."""
    _check_cell("bidirectional_dynamic_rnn", cell_fw)
    _check_cell("bidirectional_dynamic_rnn", cell_bw)
    inputs = framework.convert_to_tensor(inputs)
    if inputs.shape.ndims != 3:
        raise ValueError("tfd.nn.bidirectional_dynamic_rnn: inputs must be [batch, time, depth] "
                         "(or time-major), got %s of shape %s" % (inputs.name, inputs.shape))
    lengths = _lengths("bidirectional_dynamic_rnn", sequence_length)
    run = dict(sequence_length=lengths, dtype=dtype, parallel_iterations=parallel_iterations,
               swap_memory=swap_memory, time_major=True)
    with variables.variable_scope(scope or "bidirectional_rnn"):
        steps = inputs if time_major else math_ops.transpose(inputs, [1, 0, 2])
        with variables.variable_scope("fw") as fw:
            out_fw, state_fw = dynamic_rnn(cell_fw, steps, initial_state=initial_state_fw,
                                           scope=fw, **run)
        with variables.variable_scope("bw") as bw:
            out_bw, state_bw = dynamic_rnn(cell_bw, _reversed(steps, lengths),
                                           initial_state=initial_state_bw, scope=bw, **run)
            out_bw = _reversed(out_bw, lengths)
    if not time_major:
        out_fw, out_bw = (math_ops.transpose(o, [1, 0, 2]) for o in (out_fw, out_bw))
    return (out_fw, out_bw), (state_fw, state_bw)


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """TF1's: static_rnn of cell_fw over `inputs` (a list of [batch, depth]
    tensors) and of cell_bw over them reversed as bidirectional_dynamic_rnn
    does, under "<scope or bidirectional_rnn>/fw" and "/bw"; returns (the
    list of each step's outputs, the two concatenated along depth, as
    TF1's), state_fw, state_bw."""
    _check_cell("static_bidirectional_rnn", cell_fw)
    _check_cell("static_bidirectional_rnn", cell_bw)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("tfd.nn.static_bidirectional_rnn: inputs must be a non-empty list of "
                        "tensors (one a step), got %r" % (inputs,))
    inputs = [framework.convert_to_tensor(x) for x in inputs]
    lengths = _lengths("static_bidirectional_rnn", sequence_length)
    run = dict(dtype=dtype, sequence_length=lengths)
    with variables.variable_scope(scope or "bidirectional_rnn"):
        with variables.variable_scope("fw") as fw:
            out_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, scope=fw, **run)
        with variables.variable_scope("bw") as bw:
            backwards = math_ops.unstack(_reversed(math_ops.stack(inputs), lengths))
            out_bw, state_bw = static_rnn(cell_bw, backwards, initial_state_bw, scope=bw, **run)
            out_bw = math_ops.unstack(_reversed(math_ops.stack(out_bw), lengths))
    outputs = [math_ops.concat([f, b], 1) for f, b in zip(out_fw, out_bw)]
    return outputs, state_fw, state_bw


def _reversed(steps, lengths):
    """Time-major `steps` [time, batch, depth] reversed in time: each row's
    first lengths[b] steps (all, without lengths), the rest where they are
    (TF1's reverse_sequence), by a GatherNd whose gradient reverses back."""
    shape = raw_ops.shape(steps)
    t = math_ops.expand_dims(math_ops.range(shape[0]), 1)  # [time, 1]
    if lengths is None:
        return math_ops.gather(steps, shape[0] - 1 - t[:, 0])
    n = math_ops.expand_dims(lengths, 0)  # [1, batch]
    inside = math_ops.cast(t < n, dtypes.int32)
    source = inside * (n - 1 - t) + (1 - inside) * t  # [time, batch]
    rows = raw_ops.tile(math_ops.expand_dims(math_ops.range(shape[1]), 0),
                        math_ops.stack([shape[0], 1]))
    out = raw_ops.gather_nd(steps, math_ops.stack([source, rows], axis=2))
    out.set_shape(steps.shape)
    return out


# TF1's names: tf.nn.rnn_cell.*, tf.nn.dynamic_rnn, tf.nn.static_rnn,
# tf.nn.bidirectional_dynamic_rnn and the cells' aliases in tf.contrib.rnn.
_cells = dict(RNNCell=RNNCell, BasicRNNCell=BasicRNNCell, BasicLSTMCell=BasicLSTMCell,
              LSTMCell=LSTMCell, GRUCell=GRUCell, MultiRNNCell=MultiRNNCell,
              LSTMStateTuple=LSTMStateTuple, DropoutWrapper=DropoutWrapper,
              ResidualWrapper=ResidualWrapper, DeviceWrapper=DeviceWrapper)
nn.rnn_cell = types.SimpleNamespace(**_cells)
nn.dynamic_rnn, nn.static_rnn = dynamic_rnn, static_rnn
nn.bidirectional_dynamic_rnn = bidirectional_dynamic_rnn
nn.static_bidirectional_rnn = static_bidirectional_rnn
regularizers.contrib.rnn = types.SimpleNamespace(
    static_rnn=static_rnn, static_bidirectional_rnn=static_bidirectional_rnn, **_cells)
