"""Integer division and modulo by zero and by negatives; NEP 50 promotion of int/uint/bool/float16.

Idioms: "np.floor_divide(a, b)" rounding towards -inf (Python semantics) versus "np.fmod" (C);
"a // 0" giving 0 with "divide by zero encountered" for integers; hours/minutes via divmod;
uint8 pixel arithmetic with Python ints (NEP 50: the array's dtype wins); int64 + uint64 ->
float64; float16 buffers in ML code."""
import os
import sys
import pickle
import warnings

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}


def caught(f):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            r = f()
        except Exception as ex:
            r = (type(ex).__name__, str(ex))
    return r, sorted({(w.category.__name__, str(w.message)) for w in ws})


a = (np.arange(N) % 17) - 8
b = (np.arange(N) % 5) - 2
R["fdiv_neg"] = a[b != 0] // b[b != 0]
R["mod_neg"] = a[b != 0] % b[b != 0]
R["fmod_neg"] = np.fmod(a[b != 0], b[b != 0])
R["divmod_neg"] = np.divmod(a[b != 0], b[b != 0])
R["fdiv0"] = caught(lambda: a // b)
R["mod0"] = caught(lambda: a % b)
R["fdiv0_u8"] = caught(lambda: a.astype(np.uint8) // b.astype(np.uint8))
R["fdiv_int_min"] = caught(lambda: np.array([-128, 5], dtype=np.int8) // np.array([-1, -1], dtype=np.int8))
R["fdiv_float0"] = caught(lambda: a * 1.0 // b)
R["mod_float0"] = caught(lambda: (a * 1.5) % b)
R["true_div_int"] = caught(lambda: a / b)
R["mod_neg_float"] = np.remainder(-7.5, np.array([2.0, -2.0, 0.5]))
R["fdiv_scalar_neg"] = a // -3
R["mod_scalar_neg"] = a % -3
R["rshift"] = a >> 1
R["lshift_u8"] = (np.arange(N) % 256).astype(np.uint8) << 3
R["neg_u8"] = -(np.arange(10, dtype=np.uint8))
u8 = (np.arange(N) % 256).astype(np.uint8)
R["u8_plus_int"] = u8 + 7
R["u8_plus_neg"] = caught(lambda: u8 + (-1))
R["u8_plus_300"] = caught(lambda: u8 + 300)
R["u8_times_f"] = u8 * 0.5
R["u8_div"] = u8 / 3
R["u8_i8"] = u8 + np.arange(N).astype(np.int8)
R["u8_u16"] = u8 + np.ones(N, np.uint16)
R["u64_i64"] = np.arange(N, dtype=np.uint64) + np.arange(N, dtype=np.int64)
R["u64_int"] = np.arange(N, dtype=np.uint64) + 1
R["u64_negint"] = caught(lambda: np.arange(N, dtype=np.uint64) - (-1))
R["i64_u64_scalar"] = np.arange(N) * np.uint64(3)
R["bool_bool_add"] = (a > 0) + (b > 0)
R["bool_sub"] = caught(lambda: (a > 0) - (b > 0))
R["bool_neg"] = caught(lambda: -(a > 0))
R["bool_int"] = (a > 0) * 3
R["bool_f"] = (a > 0) / 2
h = np.linspace(-2, 2, N).astype(np.float16)
R["f16"] = h * 2
R["f16_sum"] = h.sum()
R["f16_mean"] = h.mean()
R["f16_plus_f32"] = h + np.ones(N, np.float32)
R["f16_plus_i8"] = h + np.arange(N).astype(np.int8)
R["f16_plus_i16"] = h + np.arange(N).astype(np.int16)
R["f16_exp"] = caught(lambda: np.exp(h * 8))
R["f16_big"] = caught(lambda: h * 40000.0)
R["f32_int64"] = np.ones(N, np.float32) + np.arange(N)
R["i8_f16_scalar"] = np.arange(N).astype(np.int8) * np.float16(0.5)
R["i32_f64_scalar"] = np.arange(N, dtype=np.int32) * np.float64(0.5)
R["i32_py_float"] = np.arange(N, dtype=np.int32) * 0.5
R["i8_power"] = caught(lambda: np.arange(N).astype(np.int8) ** 2)
R["int_pow_neg_float"] = np.arange(1, 6) ** -1.0
R["abs_int_min"] = caught(lambda: np.abs(np.array([-128, 3], dtype=np.int8)))
R["scalar_overflow"] = caught(lambda: np.int8(100) + np.int8(100))
R["scalar_div0"] = caught(lambda: np.int64(5) // np.int64(0))
R["scalar_f_div0"] = caught(lambda: np.float64(1.0) / np.float64(0.0))
R["py_int_over_i64"] = caught(lambda: np.arange(3) + 2**63)
R["sum_u8_dtype"] = u8.sum().dtype.name
R["sum_i8"] = np.arange(N).astype(np.int8).sum()
R["sum_bool_dtype"] = (a > 0).sum().dtype.name
R["cumsum_u8"] = np.cumsum(u8).dtype.name
R["prod_u32"] = np.prod(np.arange(1, 15, dtype=np.uint32))
R["max_mixed"] = np.maximum(u8, np.arange(N).astype(np.int8))
R["where_dtype"] = np.where(a > 0, u8, -1).dtype.name
R["where_u8_f16"] = np.where(a > 0, u8, np.float16(1)).dtype.name
R["clip_int"] = np.clip(a, -3, 3.5).dtype.name
R["clip_u8"] = caught(lambda: np.clip(u8, -1, 300))
R["iadd_f_into_int"] = caught(lambda: a.copy().__iadd__(1.5))
c = a.copy()
c //= 2
c %= 5
R["inplace_div_mod"] = c
d = u8.copy()
d += 250
R["inplace_u8_wrap"] = d
e = np.arange(N, dtype=np.int16)
e *= 300
R["inplace_i16_wrap"] = e

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
