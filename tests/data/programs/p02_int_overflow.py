"""Integer overflow and mixed int/float/bool dtypes.

Idioms: "Integer overflow in NumPy arrays" (a**2 of int32 wraps), the int32 sum that
upcasts to int64 (effielabs blog, numpy-discussion "ufunc oddities"), uint8 image
subtraction wrapping, integer division by zero."""
import os
import sys
import pickle
import warnings

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

a32 = np.arange(N, dtype=np.int32) * 40000
R["a32_sq"] = a32 * a32
R["a32_sum"] = a32.sum()
R["a32_sum_i32"] = a32.sum(dtype=np.int32)
R["a32_cumsum_last"] = np.cumsum(a32)[-1]

i8 = (np.arange(N) % 256 - 128).astype(np.int8)
R["i8_times10"] = i8 * 10
R["i8_sum"] = i8.sum()
R["i8_abs"] = np.abs(i8)
R["i8_neg"] = -i8
R["i8_plus_int"] = i8 + 1
R["i8_plus_f"] = i8 + 1.5

u8a = (np.arange(N) % 251).astype(np.uint8)
u8b = (np.arange(N) % 13).astype(np.uint8)
R["u8_sub"] = u8a - u8b
R["u8_sub_rev"] = u8b - u8a
R["u8_mean"] = u8a.mean()
R["u8_as_int16"] = u8b.astype(np.int16) - u8a.astype(np.int16)

i64 = np.arange(N, dtype=np.int64) - N // 2
u64 = np.arange(N, dtype=np.uint64)
R["mixed_u64_i64"] = i64 + u64
R["i32_f32"] = a32 + np.ones(N, dtype=np.float32)
R["i64_f32"] = i64 * np.float32(0.5)
R["bool_sum"] = (i64 > 0).sum()
R["bool_plus_bool"] = (i64 > 0) + (i64 < 10)
R["bool_times_f"] = (i64 > 0) * 2.5
R["bool_mean"] = (i64 % 3 == 0).mean()

with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    R["int_div0"] = i64 // (i64 % 5)
    R["int_mod0"] = i64 % (i64 % 5)
R["int_div0_warn"] = sorted({str(w.message) for w in ws if issubclass(w.category, RuntimeWarning)})
R["floordiv_neg"] = i64 // 7
R["mod_neg"] = i64 % -7
R["pow_int"] = (i64 % 10) ** 3
try:
    R["pow_neg"] = i64 ** -1
except ValueError as ex:
    R["pow_neg_err"] = str(ex)
R["true_div_int"] = i64 / 3
acc = np.zeros(N, dtype=np.int16)
acc += (np.arange(N) % 300).astype(np.int16) * 200
R["i16_acc"] = acc
try:
    acc += 1.5
except Exception as ex:  # numpy: UFuncTypeError (casting)
    R["i16_iadd_float_err"] = type(ex).__name__
R["i16_acc_after"] = acc

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
