"""Structured, object, string and datetime arrays passing through numeric code.

Idioms: a record array of (name, x, y) read with np.zeros(n, dtype=[...]) and fields updated
in place ("pts['x'] += 1"); sorting records by a field; an object array of Python ints that
never overflow; string labels with np.char and np.unique; datetime64 ranges and differences;
np.where choosing between string arrays."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

dt = np.dtype([("name", "U8"), ("x", "f8"), ("y", "f4"), ("k", "i4")])
pts = np.zeros(N, dtype=dt)
pts["x"] = np.linspace(0, 1, N)
pts["y"] = np.arange(N) % 7
pts["k"] = np.arange(N) // 3
pts["name"] = np.where(np.arange(N) % 2 == 0, "even", "odd")
pts["x"] += 1
xs = pts["x"]
xs *= 2
R["pts_x"] = pts["x"]
R["pts_y_sum"] = pts["y"].sum()
R["pts_dist"] = np.sqrt(pts["x"] ** 2 + pts["y"] ** 2)
R["pts_sorted"] = np.sort(pts[:20], order=["y", "x"])["k"]
R["pts_row"] = pts[5].tolist()
R["pts_mask"] = pts[pts["y"] > 4]["name"][:5]
R["pts_dtype"] = str(pts.dtype)
rec = pts.view(np.recarray)
R["rec_x"] = rec.x[:5] * 3
o = np.array([2 ** 62, 2 ** 62, 3], dtype=object)
R["obj_sum"] = o.sum()
R["obj_mul"] = (o * 4).tolist()
R["obj_pow"] = (o ** 2)[2]
mixed = np.array([1, "a", None, 2.5], dtype=object)
R["obj_mixed"] = [repr(v) for v in mixed]
R["obj_eq"] = (mixed == 1).tolist()
fr = np.array([1, 2, 3], dtype=object) / 2
R["obj_div"] = fr.tolist()
lab = np.array(["b", "a", "c", "a", "b", "a"] * (N // 6 + 1))[:N]
u, cnt = np.unique(lab, return_counts=True)
R["str_unique"] = (u, cnt)
R["str_upper"] = np.char.upper(lab[:4])
R["str_add"] = np.char.add(lab[:3], "_x")
R["str_eq"] = (lab == "a").sum()
R["str_where"] = np.where(np.arange(6) > 2, lab[:6], "zz")
R["str_len"] = np.char.str_len(np.array(["ab", "cde", ""]))
R["str_astype"] = np.array(["1.5", "2", "-3"]).astype(float) * 2
R["num_to_str"] = np.arange(4).astype(str)
R["bytes"] = np.array([b"ab", b"c"]).astype("S3")
d = np.arange("2024-01-01", "2024-03-01", dtype="datetime64[D]")
R["dates_n"] = len(d)
R["dates_diff"] = np.diff(d[::10]).astype(int)
R["dates_weekday"] = ((d.astype("datetime64[D]").view("int64") - 4) % 7)[:10]
R["dates_month"] = d.astype("datetime64[M]")[::15].astype(str)
td = d[-1] - d[0]
R["td"] = (str(td), td / np.timedelta64(1, "h"))
R["busday"] = np.busday_count("2024-01-01", "2024-02-01")
c = np.array([1 + 2j, 3 - 1j]) * np.arange(2)
R["complex_sort"] = np.sort_complex(np.array([3 + 1j, 1 - 1j, 1 + 2j]))
R["longdouble"] = (np.arange(5, dtype=np.longdouble) * np.longdouble(0.1)).astype(np.float64)
R["c"] = c
v = np.zeros(3, dtype=[("a", "i4"), ("b", "f8", (2,))])
v["b"][:, 1] = [1.5, 2.5, 3.5]
v[1] = (7, (8.0, 9.0))
R["sub_array"] = (v["a"], v["b"])
R["void_eq"] = (v[0] == v[0])
try:
    pts["nonexistent"]
except (ValueError, KeyError) as ex:
    R["field_err"] = (type(ex).__name__, str(ex))
try:
    pts["x"] + pts
except TypeError as ex:
    R["struct_add_err"] = type(ex).__name__

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
