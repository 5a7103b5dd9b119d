"""float32 and complex arithmetic, NEP 50 promotion, .real/.imag views written in place.

Idioms: single-precision ML code ("x.astype(np.float32) * 0.5" stays float32); FFT-style
complex exponentials; "z.real += 1" through the real view; np.abs/angle of complex arrays."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

x = np.linspace(0, 1, N).astype(np.float32)
R["f32_scale"] = x * 0.1 + 1
R["f32_f64scalar"] = x * np.float64(0.1)
R["f32_f64arr"] = x + np.linspace(0, 1, N)
R["f32_int"] = x + np.arange(N, dtype=np.int16)
R["f32_int64"] = x + np.arange(N)
R["f32_exp"] = np.exp(-x * x / np.float32(2))
R["f32_sum"] = x.sum()
R["f32_mean"] = x.mean()
R["f32_sqrt_dot"] = np.sqrt(x @ x)
R["f32_tanh"] = np.tanh(x * 3)
y = x.copy()
y *= 3
y /= 7
y **= 2
R["f32_inplace"] = y
R["f32_pow_half"] = x ** 0.5
R["f32_div_int"] = x // np.float32(0.3)

t = np.linspace(0, 2 * np.pi, N)
z = np.exp(1j * t)
R["z"] = z
R["z_abs"] = np.abs(z * (1 + 2j))
R["z_angle"] = np.angle(z)
R["z_conj_prod"] = (z * np.conj(z)).real
R["z_sum"] = z.sum()
z2 = z.copy()
z2.real += 1
z2.imag *= -2
R["z_views"] = z2
z64 = z.astype(np.complex64)
R["c64_scale"] = z64 * 3j
R["c64_plus_f32"] = z64 + x
R["c64_abs"] = np.abs(z64)
R["c_sqrt_neg"] = np.sqrt(np.linspace(-1, 1, N) + 0j)
R["c_eq"] = z == np.conj(z)
R["c_mean"] = z64.mean()
R["c_from_real"] = t.astype(complex) * 2
R["real_of_c"] = np.real(z) + np.imag(z)
w = np.zeros(N, dtype=complex)
w += t
w -= 1j * t
R["c_iadd_real"] = w

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
