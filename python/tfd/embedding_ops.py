"""Tables larger than one task, in TF1's words: tfd.get_variable(...,
partitioner=tfd.fixed_size_partitioner(n)) makes a PartitionedVariable whose
shards a replica_device_setter spreads over the ps tasks;
tfd.nn.embedding_lookup / embedding_lookup_sparse read rows of it where they
live; tfd.strings.to_hash_bucket_fast turns strings into ids. The graphs are
api/partitioned_variables.h's and api/embedding_ops.h's: a lookup's gradient
stays sparse (the rows it read) down to the optimizers' sparse updates.

    with tfd.device(tfd.train.replica_device_setter(ps_tasks=2)):
        emb = tfd.get_variable("emb", [1000, 16],
                               partitioner=tfd.fixed_size_partitioner(2))
    rows = tfd.nn.embedding_lookup(emb, ids, partition_strategy="div")
"""
import collections
import types

from . import _tfd, dtypes, framework, math_ops
from .op_gen import raw_ops as _raw


class PartitionedVariable:
    """One logical variable split along axis 0 into shards, each a
    tfd.Variable named NAME/part_<i> holding a contiguous block of rows
    (TF's split: the first R % n shards one row longer). Iterating gives
    the shards; as_tensor() the whole value."""

    def __init__(self, graph, name, shape, dtype, shards, rows):
        self.graph = graph
        self.name = name
        self._shape = framework.TensorShape(list(shape))
        self.dtype = dtypes.as_dtype(dtype)
        self._shards = list(shards)
        self._rows = list(rows)
        self._whole = None

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def __iter__(self):
        return iter(self._shards)

    def __len__(self):
        return len(self._shards)

    def _get_variable_list(self):
        return list(self._shards)

    def _get_partitions(self):
        """Shards along each axis, as TF reports them: [n, 1, ...]."""
        return [len(self._shards)] + [1] * (len(self._shape.dims) - 1)

    @property
    def row_ranges(self):
        """[(first_row, rows)] of each shard, in order."""
        return list(self._rows)

    def as_tensor(self):
        """The shards' values concatenated along axis 0 (made once)."""
        if self._whole is None:
            with self.graph.as_default():
                self._whole = math_ops.concat([s.value() for s in self._shards], 0,
                                              name=self.name + "/as_tensor")
        return self._whole

    _as_tensor = as_tensor

    def __repr__(self):
        return "<tfd.PartitionedVariable '%s' shape=%s dtype=%s shards=%d>" % (
            self.name, self._shape.dims, self.dtype.name, len(self._shards))


class _Partitioner:
    """What get_variable's partitioner= takes; `spec` is what the C++
    binding builds (python/src/embedding_bindings.cc)."""

    def __init__(self, spec):
        self.spec = spec

    def __repr__(self):
        return "<tfd partitioner %s>" % (self.spec,)


def fixed_size_partitioner(num_shards, axis=0):
    """Always num_shards shards along axis 0 (the only axis split here)."""
    _axis_zero(axis)
    if int(num_shards) < 1:
        raise ValueError("fixed_size_partitioner needs num_shards >= 1, not %s" % num_shards)
    return _Partitioner(("fixed", int(num_shards)))


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """As many shards as make each at least min_slice_size bytes, at most
    max_partitions (and the number of rows)."""
    _axis_zero(axis)
    if int(max_partitions) < 1:
        raise ValueError("min_max_variable_partitioner needs max_partitions >= 1, not %s"
                         % max_partitions)
    return _Partitioner(("min_max", int(max_partitions), int(min_slice_size),
                         int(bytes_per_string_element)))


def _axis_zero(axis):
    if axis != 0:
        raise ValueError("tfd partitions variables along axis 0 only, not axis %s" % axis)


def partitioned_variable(graph, name, full_name, shape, dtype, initializer, partitioner,
                         trainable):
    """get_variable's partitioned branch: the shards made, the object kept
    on the graph under `full_name` for reuse."""
    if not isinstance(partitioner, _Partitioner):
        raise TypeError("partitioner must come from tfd.fixed_size_partitioner or "
                        "tfd.min_max_variable_partitioner, not %r" % (partitioner,))
    spec = initializer.spec(shape, dtype, full_name)
    logical, infos, rows = _tfd.partitioned_variable(graph._builder, graph._context(), name,
                                                     shape, dtype.name, spec, partitioner.spec,
                                                     bool(trainable))
    from . import variables
    shards = variables._wrap(graph, infos)
    pv = PartitionedVariable(graph, logical, shape, dtype, shards, rows)
    graph._partitioned = getattr(graph, "_partitioned", {})
    graph._partitioned[full_name] = pv
    return pv


# Lookups -----------------------------------------------------------------
class SparseTensor:
    """TF's SparseTensor: entry i is values[i] at indices[i] of a dense
    tensor of shape dense_shape. indices int64 [n, rank], dense_shape int64."""

    def __init__(self, indices, values, dense_shape):
        self.indices = framework.convert_to_tensor(indices, dtype=dtypes.int64)
        self.values = framework.convert_to_tensor(values)
        self.dense_shape = framework.convert_to_tensor(dense_shape, dtype=dtypes.int64)

    @property
    def dtype(self):
        return self.values.dtype

    def _refs(self):
        return [self.indices._ref(), self.values._ref(), self.dense_shape._ref()]


class SparseTensorValue(collections.namedtuple("SparseTensorValue",
                                               ["indices", "values", "dense_shape"])):
    """TF1's: what session.run gives back for a SparseTensor."""


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    """TF1's tf.sparse_tensor_to_dense (tf.sparse.to_dense): sp_input as a
    dense tensor of its dense_shape, default_value where it has no entry.
    Numeric values only (a ScatterNd); validate_indices is TF1's and
    changes nothing."""
    del validate_indices  # see the docstring
    if sp_input.dtype == dtypes.string:
        raise TypeError("tfd.sparse_tensor_to_dense takes numeric values, not strings")
    with framework.name_scope(name, "SparseToDense"):
        dense = _raw.scatter_nd(sp_input.indices, sp_input.values, sp_input.dense_shape)
        if not isinstance(default_value, (int, float)) or default_value != 0:
            present = _raw.scatter_nd(sp_input.indices,
                                         math_ops.ones_like(sp_input.values, dtype=dtypes.int32),
                                         sp_input.dense_shape)
            dense = math_ops.where(present > 0, dense, math_ops.fill(
                sp_input.dense_shape, math_ops.cast(default_value, sp_input.dtype)))
        return dense


sparse = types.ModuleType("tfd.sparse", "TF1's tf.sparse: SparseTensor and to_dense.")
sparse.SparseTensor = SparseTensor
sparse.to_dense = sparse_tensor_to_dense


def _shard_refs(params):
    """The table's shards as (node, port) pairs of their values."""
    if isinstance(params, PartitionedVariable):
        params = list(params)
    if not isinstance(params, (list, tuple)):
        params = [params]
    if not params:
        raise ValueError("embedding_lookup needs at least one shard of params")
    return [framework.convert_to_tensor(p)._ref() for p in params]


def _graph_of(params):
    first = params[0] if isinstance(params, (list, tuple)) and params else params
    return getattr(first, "graph", None) or framework.get_default_graph()


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows of params (a PartitionedVariable, a list of shards, or one
    tensor or variable) for ids: shape ids.shape + the row shape. Each
    shard gathers its rows where it lives. An id outside the table fails
    the step with InvalidArgumentError."""
    g = _graph_of(params)
    ids = framework.convert_to_tensor(ids)
    out = _tfd.embedding_lookup(g._builder, g._context(), name or "", _shard_refs(params),
                                ids._ref(), partition_strategy,
                                None if max_norm is None else float(max_norm))
    return g._tensor(out)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """One embedding per batch row of sp_ids (a SparseTensor of ids),
    combined by "sum", "mean" (TF's default) or "sqrtn", weighted by
    sp_weights' values when it is given (a SparseTensor with the same
    indices) or unweighted when it is None."""
    g = _graph_of(params)
    weights = None if sp_weights is None else sp_weights._refs()
    out = _tfd.embedding_lookup_sparse(g._builder, g._context(), name or "",
                                       _shard_refs(params), sp_ids._refs(), weights,
                                       combiner or "mean", partition_strategy,
                                       None if max_norm is None else float(max_norm))
    return g._tensor(out)


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """Each string's bucket in [0, num_buckets): FarmHash Fingerprint64
    modulo num_buckets, the bucket TensorFlow gives the same string."""
    return _raw.string_to_hash_bucket_fast(framework.convert_to_tensor(input, dtypes.string),
                                           num_buckets=int(num_buckets), name=name)


strings = types.SimpleNamespace(to_hash_bucket_fast=to_hash_bucket_fast)

# tfd.nn is math_ops' namespace; the lookups join it here, where they live.
math_ops.nn.embedding_lookup = embedding_lookup
math_ops.nn.embedding_lookup_sparse = embedding_lookup_sparse
