"""tfd for Python: build graphs in TensorFlow 1.x's words and run them in this
process or on a tfd cluster.

    import numpy as np
    import tfd

    x = tfd.placeholder(tfd.float32, [None, 3], name="x")
    w = tfd.Variable(np.ones((3, 1), np.float32), name="w")
    y = tfd.matmul(x, w)
    with tfd.Session() as sess:                 # or tfd.Session("host:2222")
        sess.run(tfd.global_variables_initializer())
        print(sess.run(y, {x: np.eye(3, dtype=np.float32)}))

Every op of the registry is a function here (snake_case: tfd.mat_mul,
tfd.bias_add, ...) and in tfd.raw_ops; TF1's hand-named functions
(tfd.matmul, tfd.reduce_sum, tfd.nn.relu, ...) are built on them.
docs/python.md has the table of names.
"""

# numpy first: it links a libopenblas.so.0 (the threaded build), and a
# process keeps the first library loaded under that name. tfd links none:
# its first product loads the single-threaded OpenBLAS by its path, a copy
# beside numpy's (kernels/math/openblas.h).
import numpy as _numpy  # noqa: F401

from . import _tfd
from . import errors, framework
from .dtypes import (DType, as_dtype, bool, double, float, float32, float64, int32, int64,  # noqa: A004
                     string, uint8)
from .framework import (Graph, GraphDef, GraphKeys, IndexedSlices, IndexedSlicesValue, Operation,
                        Tensor, TensorShape, add_to_collection, constant, control_dependencies,
                        convert_to_tensor, device, get_collection, get_default_graph, name_scope,
                        placeholder, reset_default_graph)
from .op_gen import raw_ops, snake_name
from .control_flow_ops import cond, while_loop
from .math_ops import *  # noqa: F401,F403  (TF1's names)
from .math_ops import nn, range  # noqa: A004
from .variables import (AUTO_REUSE, Variable, VariableScope, all_variables,
                        constant_initializer, get_variable, get_variable_scope,
                        global_variables, global_variables_initializer,
                        glorot_normal_initializer, glorot_uniform_initializer,
                        initialize_all_variables, initializers, local_variables,
                        ones_initializer, random_normal_initializer, random_uniform_initializer,
                        trainable_variables, truncated_normal_initializer, variable_scope,
                        variance_scaling_initializer, variables_initializer, zeros_initializer)
from .random_seed import get_seed, set_random_seed
from .session import InteractiveSession, Session, get_default_session
from .config import (ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata,
                     RunOptions)
from .embedding_ops import (PartitionedVariable, SparseTensor, SparseTensorValue,
                            fixed_size_partitioner, min_max_variable_partitioner, sparse,
                            sparse_tensor_to_dense, strings)
from .data_flow_ops import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue, queue
from .tensor_array_ops import TensorArray
from .functional_ops import foldl, foldr, map_fn, scan
from .io_ops import (FixedLenFeature, FixedLenSequenceFeature, FixedLengthRecordReader,
                     IdentityReader, ReaderBase,
                     TextLineReader, TFRecordReader, VarLenFeature, WholeFileReader, decode_csv,
                     decode_raw, io, matching_files, parse_example, parse_single_example,
                     parse_single_sequence_example)
from .tf_record import python_io
from .check_ops import (Assert, assert_equal, assert_greater, assert_greater_equal, assert_less,
                        assert_less_equal, assert_negative, assert_non_negative,
                        assert_non_positive, assert_none_equal, assert_positive, check_numerics,
                        debugging, verify_tensor_all_finite)
from . import layers, summary, timeline, train
from .summary_proto import HistogramProto, Summary
from . import losses
from . import metrics
from .variables import local_variables_initializer
from .clip_ops import clip_by_average_norm, clip_by_global_norm, clip_by_norm, global_norm
from .regularizers import contrib
from . import rnn as _rnn  # noqa: F401  (tfd.nn.rnn_cell, dynamic_rnn, static_rnn; tfd.contrib.rnn)
from . import contrib_layers as _contrib_layers  # noqa: F401  (tfd.contrib.layers' layers)

__version__ = _tfd.__version__


def gradients(ys, xs, grad_ys=None, name="gradients"):
    """d(sum of ys)/d(x) for each x of xs (None where ys do not depend on x),
    from the gradient each op registers in C++ (common/gradients.h). An x
    read only through gathers of its rows (an embedding table) gets a
    tfd.IndexedSlices, as in TF1."""
    single_y = not isinstance(ys, (list, tuple))
    ys = [ys] if single_y else list(ys)
    xs_list = [xs] if not isinstance(xs, (list, tuple)) else list(xs)
    ys = [convert_to_tensor(y) for y in ys]
    graph = ys[0].graph

    def ref(x):
        return x._ref() if isinstance(x, Variable) else convert_to_tensor(x)._ref()

    grad_ys = [] if grad_ys is None else [ref(g) for g in (
        grad_ys if isinstance(grad_ys, (list, tuple)) else [grad_ys])]
    out = graph._builder.gradients(graph._context(), [y._ref() for y in ys],
                                   [ref(x) for x in xs_list], grad_ys)
    return [framework._gradient_from(graph, o) for o in out]


def write_graph(path, graph=None, as_text=False):
    """Writes `graph` (the default graph) as the graph.capnp tfctl takes:
    checked first, nothing written when it does not validate."""
    (graph or get_default_graph()).write(path, as_text)


def _export_ops():
    """Every generated op at the top level, unless TF1's layer has the name."""
    exported = []
    for name in dir(raw_ops):
        fn = getattr(raw_ops, name)
        if callable(fn) and hasattr(fn, "op_def") and name not in globals():
            globals()[name] = fn
            exported.append(name)
    return exported


_export_ops()

