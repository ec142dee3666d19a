"""TensorFlow 1.x's graph-level random seed: tfd.set_random_seed and
tfd.get_seed.

Every random op (tfd.random_normal, truncated_normal, random_uniform,
random_shuffle, nn.dropout, the random initializers) takes its seeds from the
default graph's seed and its own `seed` argument, by TF1's rule, which the C++
API applies too (api/random_seed.h); this module only reaches it:

    tfd.set_random_seed(1234)
    a = tfd.random_uniform([2])      # seeds (1234, n): reproducible, its own stream
    b = tfd.random_uniform([2])      # another stream, as reproducible
"""
from . import _tfd, framework

# TF1's seed of an op seeded on its own in a graph without a seed.
DEFAULT_GRAPH_SEED = 87654321


def set_random_seed(seed):
    """Sets the default graph's random seed (None clears it). Graphs built the
    same way after the same seed draw the same values in every session, op by
    op, without any op naming a seed."""
    _tfd.set_random_seed(framework.get_default_graph()._builder,
                         None if seed is None else int(seed))


def get_seed(op_seed):
    """The (seed, seed2) an op with seed `op_seed` (None: unset) gets in the
    default graph: (graph seed, a per-graph counter) when only the graph's is
    set, (DEFAULT_GRAPH_SEED, op_seed) when only the op's is, (graph seed,
    op_seed) when both are (each modulo 2**31 - 1), (None, None) when
    neither: a different stream in every session."""
    seeds = _op_seeds(op_seed)
    return (None, None) if seeds == (0, 0) else seeds


def _op_seeds(op_seed):
    """get_seed as the op's seed and seed2 attrs: (0, 0) when unseeded."""
    return tuple(_tfd.get_seed(framework.get_default_graph()._builder,
                               None if op_seed is None else int(op_seed)))
