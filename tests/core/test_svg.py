"""Strip pictures: the boxes drawn are the strips computed."""
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from flamefuse.cli import main

SPECS = Path(__file__).resolve().parents[2] / "specs"
NS = "{http://www.w3.org/2000/svg}"


def classes(path):
    return Counter(r.get("class") for r in ET.parse(path).iter(f"{NS}rect") if r.get("class"))


def test_spd_inverse_strip_picture(tmp_path, capsys):
    assert main(["derive", str(SPECS / "spd_inverse.yaml"), "--svg", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spd_inverse-1.svg"]
    got = classes(tmp_path / "spd_inverse-1.svg")
    assert got == {"computed": 3, "partial": 3, "uncomputed": 3}
    lines = Counter(l.get("class") for l in ET.parse(tmp_path / "spd_inverse-1.svg").iter(f"{NS}line"))
    assert lines == {"C": 3, "U": 3}


def test_conflict_picture_highlights_the_core(tmp_path, capsys):
    assert main(["derive", str(SPECS / "chol_backsolve.yaml"), "--svg", str(tmp_path)]) == 0
    root = ET.parse(tmp_path / "chol_backsolve-conflict.svg")
    hot = [r for r in root.iter(f"{NS}rect") if r.get("class") == "conflict"]
    # the core names a_br and b_b (trsm_lt's B_B~ reads its own region: rule 6)
    rows = {t.text: float(t.get("y")) for t in root.iter(f"{NS}text") if t.get("text-anchor") == "end"}
    hot_rows = sorted({next(name for name, y in rows.items() if 0 < y - float(r.get("y")) < 24) for r in hot})
    assert len(hot) == 4 and hot_rows == ["A_BR", "b_B"]
