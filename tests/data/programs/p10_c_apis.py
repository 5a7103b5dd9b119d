"""Arrays handed to Python and C APIs: bytes(), tobytes/frombuffer, tolist, pickle, json,
struct, iteration, len, `in`, format strings.

Idioms: serialising arrays for a socket ("np.frombuffer(a.tobytes(), dtype=...)"), json.dumps
of a.tolist(), pickle round trips in multiprocessing code, f"{x.mean():.3f}" logging."""
import os
import sys
import json
import pickle
import struct
import hashlib

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

a = np.arange(N, dtype=np.float64) * 0.25
a += 1
raw = bytes(a)
R["bytes_len"] = len(raw)
R["bytes_md5"] = hashlib.md5(raw).hexdigest()
b = a * 2
R["tobytes_md5"] = hashlib.md5(b.tobytes()).hexdigest()
back = np.frombuffer(b.tobytes(), dtype=np.float64)
R["frombuffer"] = back
c = a[::3] - 1
R["tolist_head"] = c.tolist()[:5]
R["tolist_types"] = sorted({type(v).__name__ for v in c.tolist()[:10]})
R["json"] = json.dumps((c[:4] * 2).tolist())
R["json_scalar"] = json.dumps({"m": float(c.mean()), "n": int(c.size)})
p = pickle.loads(pickle.dumps(a - 3))
R["pickle_rt"] = p
R["pickle_type"] = type(p).__name__
R["struct"] = struct.unpack("<3d", (a[:3] + 0.5).tobytes())
R["iter_sum"] = sum(x for x in a[:100] * 2)
R["list_conv"] = [float(v) for v in list(a[:5] + 1)]
R["len"] = len(a * 3)
R["in"] = 3.25 in a, -1.0 in a
R["fmt"] = f"{(a * 2).mean():.6f} {a.max():g} {int(a.argmax())}"
R["str"] = str((a[:3] * 10).round(1))
R["repr"] = repr(a[:4] + 0.5)
R["hash_tuple"] = hash(tuple((a[:4] * 4).tolist()))
R["item"] = (a * 3).item(7)
R["bool_any"] = bool((a > N / 2).any())
R["int_idx"] = int(np.argmin(np.abs(a - 100.3)))
R["round"] = round(a.sum() / 7, 3)
R["divmod"] = divmod(int(a.sum()), 9)
R["sorted_head"] = sorted((np.cos(a[:20]) * 10).tolist())[:3]
R["dict_key"] = {a[3] * 2: "k"}
R["bytes_after_write"] = None
d = a * 1
d[0] = 99.0
R["bytes_after_write"] = bytes(d)[:16]
R["view_int"] = (a[:8] * 1).view(np.int64)
R["memview"] = list(memoryview(np.ascontiguousarray(a[:4] * 2)).cast("B")[:8])

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
