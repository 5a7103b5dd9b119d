"""flamefuse.jsontext reads JSON as json.loads does and quotes strings as json.dumps does, without
importing json (start-up of a plain ``flamefuse fuse`` run: docs/startup.md); the adapt entry's
key is the one it was when it was made with json.dumps."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flamefuse import jsontext
from flamefuse.digest import sha256
from flamefuse.runtime import adapt_entry

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
           | st.text())
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@SETTINGS
@given(VALUES, st.sampled_from([None, 1]), st.booleans())
def test_it_reads_what_json_writes_as_json_loads_does(value, indent, ascii_only):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    for data in (text, text.encode(), f" \n{text}\t\r\n "):
        assert _same(jsontext.loads(data), json.loads(data))


@pytest.mark.parametrize("text", ["", " ", "{", "[1,]", '{"a" 1}', "nul", "1 2", "[1] x", '"\\x"',
                                  '"a\nb"', "\ufeff[1]", "{'a': 1}", "[1, 2", "--1"])
def test_it_fails_where_json_loads_fails(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsontext.loads(text)


def test_undecodable_bytes_are_a_value_error():
    with pytest.raises(ValueError):
        jsontext.loads(b'["\xff"]')


@SETTINGS
@given(st.text())
def test_it_quotes_a_string_as_json_dumps_does(text):
    assert jsontext.quote(text) == json.dumps(text)


@SETTINGS
@given(st.text(min_size=1), st.lists(st.text(), max_size=4))
def test_the_adapt_key_is_the_one_json_dumps_made(tmp_path_factory, name, argv):
    script = tmp_path_factory.mktemp("k") / "s.py"
    script.write_bytes(b"print(1)\n")
    old = json.dumps([str(script.resolve()), list(map(str, argv))]).encode()
    want = sha256(old + b"\0" + b"print(1)\n").hexdigest()[:32]
    assert adapt_entry.key(script, argv) == want
    assert adapt_entry.key(script, argv, b"print(1)\n") == want


def test_reading_imports_no_json():
    code = ("import sys\nfrom flamefuse import jsontext\n"
            "assert jsontext.loads(b'{\"a\": [1, 2.5, null, NaN]}')['a'][:3] == [1, 2.5, None]\n"
            "assert jsontext.quote('\\u00e9') == '\"\\\\u00e9\"'\n"
            "print('json' in sys.modules)\n")
    root = str(Path(__file__).resolve().parents[2])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                       env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
