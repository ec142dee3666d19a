"""tf.train.batch: batches of tensors, filled by queue runner threads.

    images, labels = tfd.train.batch([image, label], batch_size=32, num_threads=2)
    coord = tfd.train.Coordinator()
    threads = tfd.train.start_queue_runners(sess, coord)   # fills the queue

As TF1's: a FIFOQueue of the tensors' shapes, a QueueRunner of num_threads
enqueues added to QUEUE_RUNNERS, and a dequeue_many of batch_size.
"""
from . import dtypes, framework, math_ops, summary
from .data_flow_ops import FIFOQueue
from .queue_runner import QueueRunner, add_queue_runner


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `tensors` (a list, a tuple or a dict of tensors; the
    result has its structure, and a list of one tensor gives a tensor, as
    TF1's). With enqueue_many, each tensor is a batch already, enqueued row
    by row. Shapes are the tensors' static ones unless `shapes` is given,
    and must be fully defined. allow_smaller_final_batch: once the input
    ends, a last batch of what is left (else those rows are dropped)."""
    if dynamic_pad:
        raise NotImplementedError("tfd.train.batch: dynamic_pad=True needs a PaddingFIFOQueue, "
                                  "which tfd does not have; give every tensor a fixed shape")
    keys = sorted(tensors) if isinstance(tensors, dict) else None
    listed = [tensors[k] for k in keys] if keys is not None else (
        list(tensors) if isinstance(tensors, (list, tuple)) else [tensors])
    with framework.name_scope(name, "batch") as scope:
        listed = [framework.convert_to_tensor(t) for t in listed]
        queue = FIFOQueue(capacity, [t.dtype for t in listed],
                          shapes=_shapes(listed, shapes, enqueue_many), shared_name=shared_name,
                          name="fifo_queue")
        enqueue = queue.enqueue_many(listed) if enqueue_many else queue.enqueue(listed)
        add_queue_runner(QueueRunner(queue, [enqueue] * int(num_threads)))
        full = math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity)
        summary.scalar("fraction_of_%d_full" % capacity, full, family=scope.rstrip("/"))
        take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
        batched = take(batch_size)
    return _as_structure(tensors, keys, batched)


def _shapes(tensors, shapes, enqueue_many):
    """The queue's shapes: `shapes`, or the tensors' static ones (less the
    batch dimension with enqueue_many), which must be fully defined."""
    if shapes is not None:
        return shapes
    found = []
    for t in tensors:
        dims = t.shape.dims
        if dims is not None and enqueue_many:
            dims = dims[1:] if dims else None  # a scalar has no rows to enqueue
        if dims is None or None in dims:
            raise ValueError("tfd.train.batch needs fully defined shapes: %s has shape %s%s; "
                             "pass shapes=" % (t.name, t.shape.dims,
                                               " (rows of it enqueued)" if enqueue_many else ""))
        found.append(dims)
    return found


def _as_structure(original, keys, batched):
    """The batch in the structure of the tensors given."""
    if keys is not None:
        parts = [batched] if len(keys) == 1 else batched
        return dict(zip(keys, parts))
    return batched  # a list for a list or a tuple, as TF1's
