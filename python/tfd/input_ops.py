"""tf.train.batch and shuffle_batch: batches of tensors, filled by queue
runner threads.

    images, labels = tfd.train.shuffle_batch([image, label], batch_size=32, capacity=1000,
                                             min_after_dequeue=500, num_threads=2)
    coord = tfd.train.Coordinator()
    threads = tfd.train.start_queue_runners(sess, coord)   # fills the queue

As TF1's: a queue (FIFOQueue, or RandomShuffleQueue) of the tensors'
shapes, a QueueRunner of num_threads enqueues added to QUEUE_RUNNERS, and
a dequeue_many of batch_size.
"""
from . import dtypes, framework, math_ops, summary
from .data_flow_ops import FIFOQueue, RandomShuffleQueue
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

    def make_queue(listed, queue_shapes):
        return FIFOQueue(capacity, [t.dtype for t in listed], shapes=queue_shapes,
                         shared_name=shared_name, name="fifo_queue")
    return _batched(tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
                    allow_smaller_final_batch, (name, "batch"), make_queue,
                    "fraction_of_%d_full" % capacity, capacity)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """As batch, through a RandomShuffleQueue that keeps min_after_dequeue
    elements while the input lasts, so each batch is drawn from at least
    that many; seed (with the graph's) fixes the order."""
    def make_queue(listed, queue_shapes):
        return RandomShuffleQueue(capacity, min_after_dequeue, [t.dtype for t in listed],
                                  shapes=queue_shapes, seed=seed, shared_name=shared_name,
                                  name="random_shuffle_queue")
    # TF1's summary: how full the queue is beyond what it keeps.
    return _batched(tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
                    allow_smaller_final_batch, (name, "shuffle_batch"), make_queue,
                    "fraction_over_%d_of_%d_full" % (min_after_dequeue,
                                                     capacity - min_after_dequeue),
                    capacity - min_after_dequeue, kept=min_after_dequeue)


def _batched(tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
             allow_smaller_final_batch, name, make_queue, fill_name, fill_of, kept=0):
    """The batch of `tensors` through the queue make_queue(listed tensors,
    shapes) makes, its runner, and the scalar summary fill_name of how full
    it is beyond `kept`, as a fraction of fill_of; `name` is the name
    scope's (name, default)."""
    keys = sorted(tensors) if isinstance(tensors, dict) else None
    listed = [tensors[k] for k in keys] if keys is not None else (
        list(tensors) if isinstance(tensors, (list, tuple)) else [tensors])
    with framework.name_scope(*name) as scope:
        listed = [framework.convert_to_tensor(t) for t in listed]
        queue = make_queue(listed, _shapes(listed, shapes, enqueue_many))
        enqueue = queue.enqueue_many(listed) if enqueue_many else queue.enqueue(listed)
        add_queue_runner(QueueRunner(queue, [enqueue] * int(num_threads)))
        over = math_ops.cast(queue.size() - kept, dtypes.float32)
        full = math_ops.maximum(over, 0.0) * (1.0 / fill_of)
        summary.scalar(fill_name, full, family=scope.rstrip("/"))
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
