"""TF1's tf.TensorArray over the registry's TensorArray ops
(kernels/data_flow/tensor_array_ops.cc): an array of tensors made anew in
each run of the graph, written and read one element at a time, which is
what a tf.while_loop reads its inputs from and writes its outputs to.

    ta = tfd.TensorArray(tfd.float32, size=n)
    i, ta = tfd.while_loop(lambda i, ta: i < n,
                           lambda i, ta: (i + 1, ta.write(i, x[i] * 2.0)), [0, ta])
    y = ta.stack()            # [n, ...]

As in TF1, an array is a value: write, scatter, unstack and split return a
new TensorArray on the same array whose flow follows the write, and the
reads made from it wait for that write; a while_loop or cond carries an
array as one of its variables (its flow). Each element is written once
(a gradient array's writes add up); with clear_after_read (the default) it
is read once. tfd.gradients goes through every op: the gradient of an
array is an array of the gradients of its elements.
"""
from . import dtypes, errors, framework, math_ops
from .op_gen import raw_ops

__all__ = ["TensorArray"]


class TensorArray:
    """TF1's tf.TensorArray (graph mode). `size` elements of `dtype`
    (dynamic_size: it grows to the highest index written); element_shape,
    when given, is what every element must fit and what reads are known to
    be; else, with infer_shape, the shapes written so far tell it. With
    `handle` and `flow`, the object stands for an array already made (what
    a loop body is given). colocate_with_first_write_call is TF1's and
    changes nothing: every op on an array runs where the array was made."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        del colocate_with_first_write_call  # see the docstring
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            if size is not None:
                raise ValueError("Cannot provide both a handle and size at the same time")
            if dynamic_size is not None or clear_after_read is not None:
                raise ValueError("Cannot provide both a handle and dynamic_size or "
                                 "clear_after_read at the same time")
            self._handle, self._flow = handle, framework.convert_to_tensor(flow)
        else:
            if size is None:
                raise ValueError("Size must be provided if handle is not provided")
            if flow is not None:
                raise ValueError("Cannot provide both a flow and size at the same time")
            self._handle, self._flow = raw_ops.tensor_array_v3(
                size, dtype=self._dtype, element_shape=framework._shape_arg(element_shape),
                dynamic_size=self._dynamic_size,
                clear_after_read=True if clear_after_read is None else bool(clear_after_read),
                tensor_array_name=tensor_array_name or "", name=name or "TensorArray")
        self._infer_shape = True if element_shape is not None else bool(infer_shape)
        # Shared by every TensorArray on this array: what is known of its elements.
        self._element_shape = ([] if element_shape is None
                               else [framework.TensorShape(framework._shape_arg(element_shape))])

    # What TF1's TensorArray exposes ---------------------------------------
    @property
    def flow(self):
        """The float scalar that orders this array's ops."""
        return self._flow

    @property
    def handle(self):
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def element_shape(self):
        return self._element_shape[0] if self._element_shape else framework.TensorShape(None)

    def _with_flow(self, flow):
        """This array after `flow`: what a write returns, and what a loop or
        cond gives back for an array it carried."""
        return self._like(self._handle, flow)

    def _like(self, handle, flow):
        """A TensorArray on `handle` after `flow` that knows what this one
        knows of its elements (this array's, or its gradient's)."""
        ta = TensorArray(self._dtype, handle=handle, flow=flow)
        ta._dynamic_size = self._dynamic_size
        ta._infer_shape = self._infer_shape
        ta._element_shape = self._element_shape
        return ta

    def _merge_element_shape(self, shape):
        if not self._infer_shape:
            return
        if self._element_shape:
            if not shape.is_compatible_with(self._element_shape[0]):
                raise ValueError("Inconsistent shapes: saw %s but expected %s (and "
                                 "infer_shape=True)" % (shape, self._element_shape[0]))
            self._element_shape[0] = self._element_shape[0].merge_with(shape)
        else:
            self._element_shape.append(shape)

    def _value(self, value):
        is_tensor = isinstance(value, framework.Tensor) or hasattr(value, "_as_tensor")
        value = framework.convert_to_tensor(value, dtype=None if is_tensor else self._dtype)
        if value.dtype != self._dtype:
            raise errors.InvalidArgumentError(
                "TensorArray dtype is %s but Op is trying to write dtype %s"
                % (self._dtype.name, value.dtype.name))
        return value

    def _known_shape(self):
        shape = self.element_shape
        return None if shape.dims is None else shape.dims

    # Reads ----------------------------------------------------------------
    def read(self, index, name=None):
        """The element at `index` (a scalar int32)."""
        return raw_ops.tensor_array_read_v3(self._handle, index, self._flow, dtype=self._dtype,
                                            element_shape=self._known_shape(),
                                            name=name or "TensorArrayReadV3")

    def gather(self, indices, name=None):
        """The elements at `indices` (an int32 vector), stacked."""
        return raw_ops.tensor_array_gather_v3(self._handle, indices, self._flow,
                                              dtype=self._dtype,
                                              element_shape=self._known_shape(),
                                              name=name or "TensorArrayGatherV3")

    def stack(self, name=None):
        """Every element, in order, stacked along a new dimension 0."""
        with framework.name_scope(name, "TensorArrayStack"):
            return self.gather(math_ops.range(0, self.size()))

    def concat(self, name=None):
        """Every element, in order, concatenated along dimension 0."""
        shape = self.element_shape
        rest = None if shape.dims is None or not shape.dims else shape.dims[1:]
        value, _ = raw_ops.tensor_array_concat_v3(self._handle, self._flow, dtype=self._dtype,
                                                  element_shape_except0=rest,
                                                  name=name or "TensorArrayConcatV3")
        return value

    def size(self, name=None):
        """The number of elements (int32 scalar): a dynamic array's grows."""
        return raw_ops.tensor_array_size_v3(self._handle, self._flow,
                                            name=name or "TensorArraySizeV3")

    # Writes ---------------------------------------------------------------
    def write(self, index, value, name=None):
        """This array with `value` at `index`."""
        with framework.name_scope(name, "TensorArrayWrite"):
            value = self._value(value)
            self._merge_element_shape(value.shape)
            flow = raw_ops.tensor_array_write_v3(self._handle, index, value, self._flow)
        return self._with_flow(flow)

    def scatter(self, indices, value, name=None):
        """This array with value[i] at indices[i]."""
        with framework.name_scope(name, "TensorArrayScatter"):
            value = self._value(value)
            if value.shape.dims:
                self._merge_element_shape(framework.TensorShape(value.shape.dims[1:]))
            flow = raw_ops.tensor_array_scatter_v3(self._handle, indices, value, self._flow)
        return self._with_flow(flow)

    def unstack(self, value, name=None):
        """This array with value[i] at i, for each row of `value`."""
        with framework.name_scope(name, "TensorArrayUnstack"):
            value = self._value(value)
            rows = raw_ops.shape(value)[0]
            return self.scatter(math_ops.range(0, rows), value)

    def split(self, value, lengths, name=None):
        """This array with consecutive pieces of `value` along dimension 0,
        of `lengths` (int64 vector), at 0, 1, ..."""
        with framework.name_scope(name, "TensorArraySplit"):
            value = self._value(value)
            lengths = math_ops.cast(lengths, dtypes.int64)
            if value.shape.dims:
                self._merge_element_shape(framework.TensorShape([None] + value.shape.dims[1:]))
            flow = raw_ops.tensor_array_split_v3(self._handle, value, lengths, self._flow)
        return self._with_flow(flow)

    # The rest -------------------------------------------------------------
    def identity(self):
        """This array with a flow of its own (TF1's, for control
        dependencies taking effect on later reads)."""
        return self._with_flow(math_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        """The gradient array for gradients named `source`."""
        flow = self._flow if flow is None else flow
        with framework.name_scope(name, "TensorArrayGrad"):
            handle, _ = raw_ops.tensor_array_grad_v3(self._handle, flow, source=source)
            with framework.control_dependencies([handle.op]):
                flow = math_ops.identity(flow, name="gradient_flow")
        return self._like(handle, flow)

    def close(self, name=None):
        """Frees the elements; later ops on the array fail."""
        return raw_ops.tensor_array_close_v3(self._handle, name=name or "TensorArrayCloseV3")

    def __repr__(self):
        return "<tfd.TensorArray %s dtype=%s>" % (self._handle.op.name, self._dtype.name)
