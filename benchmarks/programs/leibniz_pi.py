"""Leibniz series for pi, summed over chunks of terms.

python leibniz_pi.py TERMS CHUNKS OUT.npy
"""
import sys
import time

import numpy as np

n, chunks, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
total = 0.0
for c in range(chunks):
    k = np.arange(c * n, (c + 1) * n, dtype=np.float64)
    sign = 1.0 - 2.0 * (k % 2)
    total += float(np.sum(sign / (2.0 * k + 1.0)))
pi = 4.0 * total
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.array([pi]))
