"""TF1's queue-based input pipeline (its tf.train input.py): input
producers, which keep a queue of the input's elements full epoch after
epoch, and batch and shuffle_batch, which make batches of tensors; queue
runner threads fill both.

    image, label = tfd.train.slice_input_producer([images, labels], num_epochs=10)
    images, labels = tfd.train.shuffle_batch([image, label], batch_size=32, capacity=1000,
                                             min_after_dequeue=500, num_threads=2)
    coord = tfd.train.Coordinator()
    threads = tfd.train.start_queue_runners(sess, coord)   # fills the queues

As TF1's: a producer is a FIFOQueue that a QueueRunner fills with the
input (reshuffled each epoch) until num_epochs have gone in; a batch is a
queue (FIFOQueue, or RandomShuffleQueue) of the tensors' shapes, a
QueueRunner of num_threads enqueues added to QUEUE_RUNNERS, and a
dequeue_many of batch_size.
"""
from . import dtypes, framework, io_ops, math_ops, summary, variables
from .check_ops import Assert
from .data_flow_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from .op_gen import raw_ops as _raw
from .queue_runner import QueueRunner, add_queue_runner


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, whose evaluations end after num_epochs of them with
    OutOfRangeError (None: never), counted by a local variable "epochs"
    (initialize it with local_variables_initializer, or let a
    MonitoredTrainingSession do it)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    with framework.name_scope(name or "limit_epochs") as scope:
        epochs = variables._local_zeros("epochs", [], dtypes.int64)
        with framework.control_dependencies([epochs.count_up_to(num_epochs)]):
            return math_ops.identity(tensor, name=scope.rstrip("/").rpartition("/")[2])


def match_filenames_once(pattern, name=None):
    """TF1's: a local variable holding the names of the files matching the
    glob `pattern` (tfd.matching_files), listed when local variables are
    initialized (a MonitoredTrainingSession does it), where the variable
    lives; string_input_producer takes it as its list of files."""
    with framework.name_scope(name or "matching_filenames") as scope:
        files = io_ops.matching_files(pattern)
    return variables.Variable(files, trainable=False, validate_shape=False,
                              collections=[framework.GraphKeys.LOCAL_VARIABLES],
                              name=scope.rstrip("/").rpartition("/")[2])


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A FIFOQueue of input_tensor's rows (of element_shape, or its static
    one, which must then be fully defined), which a QueueRunner refills
    with all of them, shuffled anew each time when `shuffle`, num_epochs
    times (None: without end); then it closes."""
    with framework.name_scope(name or "input_producer"):
        input_tensor = framework.convert_to_tensor(input_tensor)
        rows = input_tensor.shape
        known = framework.TensorShape(None if rows.ndims is None else rows.dims[1:])
        element_shape = known if element_shape is None else known.merge_with(element_shape)
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = math_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity, [input_tensor.dtype], shapes=[element_shape.dims],
                          shared_name=shared_name, name="fifo_queue")
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            fill = math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity)
            summary.scalar(summary_name, fill)
    return queue


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """An input_producer of the int32 scalars 0 .. limit-1."""
    with framework.name_scope(name or "input_producer"):
        return input_producer(math_ops.range(limit), [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of each tensor of tensor_list per dequeue, the same row of
    each (the tensors have as many rows), in an order shuffled each epoch
    when `shuffle`; a list of tensors."""
    with framework.name_scope(name or "input_producer"):
        tensor_list = [framework.convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        rows = _raw.shape(tensor_list[0])[0]
        queue = range_input_producer(rows, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [math_ops.gather(t, index) for t in tensor_list]


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """An input_producer of strings (file names, say: a list, a tensor or
    a variable such as match_filenames_once's); an empty list is a
    ValueError, an empty tensor an InvalidArgumentError when it runs."""
    message = "string_input_producer requires a non-null input tensor"
    graph_value = isinstance(string_tensor, framework.Tensor) or hasattr(string_tensor,
                                                                         "_as_tensor")
    if not graph_value and not len(string_tensor):
        raise ValueError(message)
    with framework.name_scope(name or "input_producer"):
        string_tensor = framework.convert_to_tensor(string_tensor, dtype=dtypes.string)
        nonempty = Assert(_raw.size(string_tensor) > 0, [message])
        with framework.control_dependencies([nonempty]):
            string_tensor = math_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity, cancel_op=cancel_op)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `tensors` (a list, a tuple or a dict of tensors; the
    result has its structure, and a list of one tensor gives a tensor, as
    TF1's). With enqueue_many, each tensor is a batch already, enqueued row
    by row. Shapes are the tensors' static ones unless `shapes` is given,
    and must be fully defined. allow_smaller_final_batch: once the input
    ends, a last batch of what is left (else those rows are dropped).
    dynamic_pad: the shapes may leave dimensions unknown, along which each
    batch is padded with zeros to its longest (a PaddingFIFOQueue)."""
    return _batched([tensors], batch_size, num_threads, enqueue_many, shapes,
                    allow_smaller_final_batch, (name, "batch"),
                    _fifo_queue(capacity, shared_name, dynamic_pad),
                    "fraction_of_%d_full" % capacity, capacity, dynamic_pad=dynamic_pad)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """As batch, through a RandomShuffleQueue that keeps min_after_dequeue
    elements while the input lasts, so each batch is drawn from at least
    that many; seed (with the graph's) fixes the order."""
    return _batched([tensors], batch_size, num_threads, enqueue_many, shapes,
                    allow_smaller_final_batch, (name, "shuffle_batch"),
                    _shuffle_queue(capacity, min_after_dequeue, seed, shared_name),
                    *_shuffle_fill(capacity, min_after_dequeue))


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """As batch, from several lists (or dicts) of tensors of one structure
    and dtypes, each enqueued by a thread of its own (readers of different
    files, say); shapes are the first list's."""
    return _batched(tensors_list, batch_size, 1, enqueue_many, shapes,
                    allow_smaller_final_batch, (name, "batch_join"),
                    _fifo_queue(capacity, shared_name, dynamic_pad),
                    "fraction_of_%d_full" % capacity, capacity, dynamic_pad=dynamic_pad)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """As shuffle_batch, from several lists of tensors, a thread each."""
    return _batched(tensors_list, batch_size, 1, enqueue_many, shapes,
                    allow_smaller_final_batch, (name, "shuffle_batch_join"),
                    _shuffle_queue(capacity, min_after_dequeue, seed, shared_name),
                    *_shuffle_fill(capacity, min_after_dequeue))


def _fifo_queue(capacity, shared_name, dynamic_pad):
    def make_queue(listed, queue_shapes):
        types = [t.dtype for t in listed]
        if dynamic_pad:
            return PaddingFIFOQueue(capacity, types, shapes=queue_shapes,
                                    shared_name=shared_name, name="padding_fifo_queue")
        return FIFOQueue(capacity, types, shapes=queue_shapes, shared_name=shared_name,
                         name="fifo_queue")
    return make_queue


def _shuffle_queue(capacity, min_after_dequeue, seed, shared_name):
    def make_queue(listed, queue_shapes):
        return RandomShuffleQueue(capacity, min_after_dequeue, [t.dtype for t in listed],
                                  shapes=queue_shapes, seed=seed, shared_name=shared_name,
                                  name="random_shuffle_queue")
    return make_queue


def _shuffle_fill(capacity, min_after_dequeue):
    """TF1's summary of a shuffling queue: its name, and how full it is
    beyond what it keeps."""
    return ("fraction_over_%d_of_%d_full" % (min_after_dequeue, capacity - min_after_dequeue),
            capacity - min_after_dequeue, min_after_dequeue)


def _batched(tensors_list, batch_size, threads_each, enqueue_many, shapes,
             allow_smaller_final_batch, name, make_queue, fill_name, fill_of, kept=0,
             dynamic_pad=False):
    """The batch through the queue make_queue(listed tensors, shapes)
    makes, of the structures in tensors_list (one structure: a list, a
    tuple, a dict or a tensor), each enqueued by threads_each threads of
    one runner; and the scalar summary fill_name of how full it is beyond
    `kept`, as a fraction of fill_of. `name`: the name scope's (name,
    default). dynamic_pad: the shapes may leave dimensions unknown."""
    structure = tensors_list[0]
    keys = sorted(structure) if isinstance(structure, dict) else None
    with framework.name_scope(*name):
        lists = [[framework.convert_to_tensor(t) for t in _listed(ts, keys)]
                 for ts in tensors_list]
        for other in lists[1:]:
            if [t.dtype for t in other] != [t.dtype for t in lists[0]]:
                raise ValueError("the tensor lists to join differ: %s and %s"
                                 % ([t.name for t in lists[0]], [t.name for t in other]))
        queue = make_queue(lists[0], _shapes(lists[0], shapes, enqueue_many, dynamic_pad))
        enqueues = [queue.enqueue_many(ts) if enqueue_many else queue.enqueue(ts)
                    for ts in lists]
        add_queue_runner(QueueRunner(queue, enqueues * int(threads_each)))
        over = math_ops.cast(queue.size() - kept, dtypes.float32)
        full = math_ops.maximum(over, 0.0) * (1.0 / fill_of)
        summary.scalar(fill_name, full)  # tagged by the scope, as TF1
        take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
        batched = take(batch_size)
    return _as_structure(structure, keys, batched)


def _listed(tensors, keys):
    """A structure's tensors as a list, a dict's in `keys`' order."""
    if keys is not None:
        if not isinstance(tensors, dict) or sorted(tensors) != keys:
            raise ValueError("the dicts of tensors to join have different keys: %s and %s"
                             % (keys, sorted(tensors) if isinstance(tensors, dict) else tensors))
        return [tensors[k] for k in keys]
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _shapes(tensors, shapes, enqueue_many, partial):
    """The queue's shapes: `shapes`, or the tensors' static ones (less the
    batch dimension with enqueue_many), which must be fully defined; with
    `partial` (dynamic_pad), of known rank."""
    if shapes is not None:
        return shapes
    found = []
    for t in tensors:
        dims = t.shape.dims
        if dims is not None and enqueue_many:
            dims = dims[1:] if dims else None  # a scalar has no rows to enqueue
        if dims is None or (None in dims and not partial):
            raise ValueError("tfd.train.batch needs %s shapes: %s has shape %s%s; pass shapes="
                             % ("known ranks of" if partial else "fully defined", t.name,
                                t.shape.dims, " (rows of it enqueued)" if enqueue_many else ""))
        found.append(dims)
    return found


def _as_structure(original, keys, batched):
    """The batch in the structure of the tensors given."""
    if keys is not None:
        parts = [batched] if len(keys) == 1 else batched
        return dict(zip(keys, parts))
    return batched  # a list for a list or a tuple, as TF1's
