"""The fourth camp's fuzz program on so idioms: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


# idioms from Q&A answers, on arrays big enough to fuse at the default size
rng = np.random.default_rng(11)
X = rng.standard_normal((400, 100))
X[3] = 0.0
show("row normalize", lambda: X / X.sum(axis=1, keepdims=True))
show("row l2", lambda: X / np.linalg.norm(X, axis=1, keepdims=True))
z = rng.standard_normal(50000) * 400
show("naive softmax", lambda: np.exp(z) / np.exp(z).sum())
show("stable softmax", lambda: np.exp(z - z.max()) / np.exp(z - z.max()).sum())
show("log1p exp", lambda: np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0))
P = rng.standard_normal((300, 3))
d2 = (P[:, None, :] - P[None, :, :]) ** 2
show("pairwise dist", lambda: np.sqrt(d2.sum(-1)))
show("cos sim", lambda: (X @ X.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(X, axis=1)))
c = np.cumsum(z)
show("moving avg", lambda: (c[10:] - c[:-10]) / 10)
labels = rng.integers(0, 5, 60000)
onehot = np.zeros((labels.size, 5))
onehot[np.arange(labels.size), labels] = 1
show("onehot", lambda: onehot.sum(axis=0))
show("zscore", lambda: (X - X.mean(axis=0)) / X.std(axis=0))
show("clip log", lambda: np.log(np.clip(z, 1e-12, None)))
show("sigmoid", lambda: 1 / (1 + np.exp(-z)))
