"""TF1's queue classes (tf.FIFOQueue, tf.RandomShuffleQueue, tf.queue.*)
over the registry's queue ops (kernels/data_flow/queue_ops.cc).

    q = tfd.FIFOQueue(100, [tfd.float32, tfd.int32], shapes=[[784], []], shared_name="input")
    enqueue = q.enqueue([x, y])
    images, labels = q.dequeue_many(32)     # static shapes [32, 784] and [32]

A queue lives on the task its FIFOQueue node is placed on (the tfd.device
scope around it), found there by shared_name (else its node name); every
op reading it runs on that task. Dequeued tensors carry the queue's
component shapes as their static shapes (Tensor.set_shape), so that ops
built on them (tfd.layers, tfd.train.batch) know them too, the registry's
dequeue ops knowing them only at run time.

A queue class over another queue op only says how that op is made: its
__init__ calls self._init_queue(make_op, dtypes, shapes, names, **attrs),
make_op being the raw op function, as FIFOQueue does below.
"""
import types

from . import dtypes as dtypes_lib, framework
from .random_seed import _op_seeds
from .op_gen import raw_ops


class QueueBase:
    """What every queue class shares: enqueue and dequeue of elements, each
    a tuple of tensors of `dtypes` (and `shapes`, when given), or a dict
    keyed by `names`. Build-time only: the methods add nodes to the graph
    and return them; a session runs them, from any number of threads."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        """TF1's constructor: a queue over `queue_ref`, the handle a queue op
        made; `shapes` and `names` may be None."""
        self._dtypes = [dtypes_lib.as_dtype(d) for d in dtypes]
        self._shapes = ([framework.TensorShape(s) for s in shapes] if shapes is not None
                        else [framework.TensorShape(None) for _ in self._dtypes])
        self._names = list(names) if names is not None else None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    def _init_queue(self, make_op, dtypes, shapes, names, partial_shapes=False, **attrs):
        """For subclasses: checks the component specs, makes the queue node
        with make_op(component_types=..., shapes=..., **attrs) and keeps its
        handle. partial_shapes: shapes may leave dimensions unknown."""
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, partial_shapes)
        names = _as_name_list(names, dtypes)
        shapes_attr = [] if shapes is None else shapes
        ref = make_op(component_types=dtypes, shapes=shapes_attr, **attrs)
        QueueBase.__init__(self, dtypes, shapes, names, ref)

    # What TF1's queues expose ------------------------------------------
    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        """The queue node's name."""
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes)

    @property
    def names(self):
        return None if self._names is None else list(self._names)

    # Enqueues ----------------------------------------------------------
    def enqueue(self, vals, name=None):
        """The op adding one element: `vals` a list (a tensor or value alone
        for a queue of one component; a dict for a queue with names), each
        converted to the queue's dtype. Run, it waits while the queue is
        full; CancelledError once the queue is closed."""
        tensors = self._components(vals)
        for t, shape in zip(tensors, self._shapes):
            _check_compatible(t, shape.dims, self.name)
        return raw_ops.queue_enqueue(self._queue_ref, tensors,
                                     name=name or self._name + "_enqueue")

    def enqueue_many(self, vals, name=None):
        """The op adding the rows (dimension 0) of `vals`' components as
        elements, in order."""
        tensors = self._components(vals)
        for t, shape in zip(tensors, self._shapes):
            _check_compatible(t, None if shape.dims is None else [None] + shape.dims, self.name)
        return raw_ops.queue_enqueue_many(self._queue_ref, tensors,
                                          name=name or self._name + "_EnqueueMany")

    def _components(self, vals):
        """`vals` as a list of tensors in the queue's order and dtypes."""
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("queue %s has no names: enqueue a list, not a dict" % self.name)
            if sorted(vals) != sorted(self._names):
                raise ValueError("queue %s has components %s; the dict to enqueue has keys %s"
                                 % (self.name, sorted(self._names), sorted(vals)))
            vals = [vals[k] for k in self._names]
        elif self._names is not None:
            raise ValueError("queue %s has names %s: enqueue a dict" % (self.name, self._names))
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("queue %s takes elements of %d components, got %d"
                             % (self.name, len(self._dtypes), len(vals)))
        return [framework.convert_to_tensor(v, dtype=d, name="component_%d" % i)
                for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    # Dequeues ----------------------------------------------------------
    def dequeue(self, name=None):
        """One element: a tensor for a queue of one component, else a list
        (a dict with names). Run, it waits while the queue is empty;
        OutOfRangeError once it is closed and empty."""
        out = raw_ops.queue_dequeue(self._queue_ref, component_types=self._dtypes,
                                    name=name or self._name + "_Dequeue")
        return self._result(out, [s.dims for s in self._shapes])

    def dequeue_many(self, n, name=None):
        """n elements, each component stacked along a new dimension 0 (static
        size n when n is a Python int). Needs a queue with shapes."""
        out = raw_ops.queue_dequeue_many(self._queue_ref, _count(n), component_types=self._dtypes,
                                         name=name or self._name + "_DequeueMany")
        rows = int(n) if isinstance(n, int) else None
        return self._result(out, [_batched(rows, s.dims) for s in self._shapes])

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but once the queue is closed with fewer than n
        elements left it takes those (OutOfRangeError when none are left)."""
        out = raw_ops.queue_dequeue_up_to(self._queue_ref, _count(n),
                                          component_types=self._dtypes,
                                          name=name or self._name + "_DequeueUpTo")
        return self._result(out, [_batched(None, s.dims) for s in self._shapes])

    def _result(self, tensors, shapes):
        """The dequeued components under their static shapes, in TF1's
        structure."""
        tensors = [_with_shape(t, s) for t, s in zip(tensors, shapes)]
        if self._names is not None:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    # The rest ----------------------------------------------------------
    def size(self, name=None):
        """The number of elements in the queue (an int32 scalar)."""
        return raw_ops.queue_size(self._queue_ref, name=name or self._name + "_Size")

    def is_closed(self, name=None):
        """Whether the queue is closed (a bool scalar)."""
        return raw_ops.queue_is_closed(self._queue_ref, name=name or self._name + "_IsClosed")

    def close(self, cancel_pending_enqueues=False, name=None):
        """The op closing the queue: later enqueues fail (CancelledError),
        and with cancel_pending_enqueues so do those waiting for room now;
        dequeues take what is left, then fail (OutOfRangeError)."""
        return raw_ops.queue_close(self._queue_ref,
                                   cancel_pending_enqueues=bool(cancel_pending_enqueues),
                                   name=name or self._name + "_Close")


class FIFOQueue(QueueBase):
    """Elements come out in the order they went in. capacity bounds the
    elements held (an enqueue waits for room); shapes, given, must be fully
    defined (dequeue_many needs them); shared_name lets sessions (and
    tasks' steps) find one queue."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        self._init_queue(raw_ops.fifo_queue, dtypes, shapes, names, capacity=int(capacity),
                         shared_name=shared_name or "", name=name)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose shapes (required) may leave dimensions unknown
    (None), along which elements vary: dequeue_many and dequeue_up_to pad
    each element with zeros (empty strings) to the largest size of each
    such dimension among those dequeued together, as TF1's."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        if shapes is None:
            raise ValueError("PaddingFIFOQueue needs the shapes of its components")
        self._init_queue(raw_ops.padding_fifo_queue, dtypes, shapes, names, partial_shapes=True,
                         capacity=int(capacity), shared_name=shared_name or "", name=name)


class RandomShuffleQueue(QueueBase):
    """Elements come out in a random order: each dequeue takes one of those
    held at random, and while the queue is open it keeps min_after_dequeue
    of them (a dequeue waits for more), so what comes out is well mixed;
    once closed it hands out the rest. seed, with the graph's seed
    (tfd.set_random_seed), fixes the order, as for random ops."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        seed1, seed2 = _op_seeds(seed)
        self._init_queue(raw_ops.random_shuffle_queue, dtypes, shapes, names,
                         capacity=int(capacity), min_after_dequeue=int(min_after_dequeue),
                         seed=seed1, seed2=seed2, shared_name=shared_name or "", name=name)


def _as_type_list(dtypes):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [dtypes_lib.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes, dtypes, partial=False):
    """None, or one shape (a list of ints; with `partial`, of ints and
    None) per component; a single shape is taken for a queue of one
    component, as TF1 does."""
    if shapes is None:
        return None
    if isinstance(shapes, framework.TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a list of shapes, not %r" % (shapes,))
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]
    dims = [framework._shape_arg(s) for s in shapes]
    if len(dims) != len(dtypes):
        raise ValueError("a queue of %d components was given %d shapes: %s"
                         % (len(dtypes), len(dims), shapes))
    if any(d is None for d in dims):
        raise ValueError("a queue's shapes must have a known rank: %s" % (shapes,))
    if not partial and any(None in d for d in dims):
        raise ValueError("a queue's shapes must be fully defined (a PaddingFIFOQueue takes "
                         "unknown dimensions): %s" % (shapes,))
    return dims


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("a queue of %d components was given %d names: %s"
                         % (len(dtypes), len(names), names))
    return list(names)


def _check_compatible(tensor, want, queue):
    """ValueError when what is known of tensor's shape contradicts `want`
    (a list with None for any size, or None for any shape)."""
    if not tensor.shape.is_compatible_with(want):
        raise ValueError("queue %s takes components of shape %s; %s has shape %s"
                         % (queue, want, tensor.name, tensor.shape.dims))


def _count(n):
    return framework.convert_to_tensor(n, dtype=dtypes_lib.int32, name="n")


def _batched(rows, dims):
    return None if dims is None else [rows] + list(dims)


def _with_shape(tensor, dims):
    """`tensor`, its static shape the queue's `dims` (TF1's set_shape)."""
    if dims is not None:
        tensor.set_shape(dims)
    return tensor


# TF1's tf.queue namespace (tfd.queue).
queue = types.ModuleType("tfd.queue", "TF1's tf.queue: the queue classes.")
queue.QueueBase = QueueBase
queue.FIFOQueue = FIFOQueue
queue.PaddingFIFOQueue = PaddingFIFOQueue
queue.RandomShuffleQueue = RandomShuffleQueue
