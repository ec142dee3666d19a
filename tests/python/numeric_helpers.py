"""What the gradient tests share: a gradient by central differences, the
float64 reference tfd.gradients is checked against, and the check itself."""
import numpy as np

import tfd


def numeric_gradient(f, x, eps=1e-6):
    """d(sum of f(x))/dx by central differences, x float64."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return g


def check_gradient(build, x0, rtol=1e-6, atol=1e-8):
    """tfd.gradients of build(placeholder) at x0 against central
    differences of the same graph, both in float64."""
    x = tfd.placeholder(tfd.float64, x0.shape)
    y = build(x)
    (g,) = tfd.gradients(y, [x])
    with tfd.Session() as sess:
        got = sess.run(g, {x: x0})
        want = numeric_gradient(lambda v: sess.run(y, {x: v}), x0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
