"""Every command shown in docs/guide.md still succeeds (run in a fresh directory)."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"


def blocks(text: str):
    """(language, body) of every fenced block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)


def test_guide_commands_run(tmp_path):
    text = GUIDE.read_text()
    for link in ("specs", "examples"):
        (tmp_path / link).symlink_to(ROOT / link)
    commands = []
    for lang, body in blocks(text):
        first, _, rest = body.partition("\n")
        if lang in ("yaml", "python") and first.startswith("# file: "):
            (tmp_path / first[len("# file: "):].strip()).write_text(body)
        if lang == "console":
            commands += [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    assert len(commands) >= 6
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "python":
            argv[0] = sys.executable
        run = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"{command}\n{run.stderr[-2000:]}"
        if command == "python use_potri.py":
            error = float(run.stdout.split("numpy.linalg.inv:")[1])
            assert error < 1e-12 and "info: 0" in run.stdout
    assert (tmp_path / "mykernels" / "potri.py").is_file()
    assert (tmp_path / "potri.tex").is_file() and (tmp_path / "pictures" / "potri-1.svg").is_file()
