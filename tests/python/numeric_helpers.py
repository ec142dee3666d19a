"""What the gradient tests share: a gradient by central differences, the
float64 reference tfd.gradients is checked against."""
import numpy as np


def numeric_gradient(f, x, eps=1e-6):
    """d(sum of f(x))/dx by central differences, x float64."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return g
