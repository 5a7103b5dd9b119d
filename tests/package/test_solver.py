"""flamefuse.solver imports OR-Tools' cp_model without pandas, and cp_model's pandas helpers still work."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import sys
from flamefuse.solver import cp_model
assert 'pandas' not in sys.modules, 'pandas imported with cp_model'
model = cp_model.CpModel()
x = model.new_int_var(0, 5, 'x')
model.add(x >= 3)
model.maximize(-x)
solver = cp_model.CpSolver()
assert solver.solve(model) == cp_model.OPTIMAL and solver.value(x) == 3
import pandas as pd
assert not isinstance([1], cp_model.pd.Series)
v = model.new_int_var_series('v', pd.Index(['a', 'b']), 0, 4)
assert type(v) is pd.Series and isinstance(v, cp_model.pd.Series) and list(v.index) == ['a', 'b']
model.add(v['a'] + v['b'] == 7)
assert solver.solve(model) == cp_model.OPTIMAL
assert solver.value(v['a']) + solver.value(v['b']) == 7
print('ok')
"""


def test_cp_model_without_pandas_and_its_pandas_helpers():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_with_pandas_imported_first_cp_model_is_the_usual_one():
    code = ("import pandas, sys\nfrom flamefuse.solver import cp_model\n"
            "assert cp_model.pd is pandas\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
