"""The build step of the wheel: the shipped specs and generated kernel modules go inside the package.

Their home in the repository stays ``specs/*.yaml`` and ``generated/*.py``;
the wheel carries copies as ``flamefuse/specs/`` (package data, read through
``importlib.resources``) and ``flamefuse/kernels/`` (importable as
``flamefuse.kernels.<spec>``), see ``flamefuse/shipped.py``.  An editable
install copies nothing: the package then finds the repository's folders.
Everything else about the project is in ``pyproject.toml``.
"""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# repository folder -> (its place in the package, the files shipped)
SHIPPED = {"specs": ("flamefuse/specs", "*.yaml"), "generated": ("flamefuse/kernels", "*.py")}


class BuildWithShipped(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for folder, (target, pattern) in SHIPPED.items():
            out = Path(self.build_lib) / target
            self.mkpath(str(out))
            for path in sorted((HERE / folder).glob(pattern)):
                self.copy_file(str(path), str(out / path.name))


setup(cmdclass={"build_py": BuildWithShipped})
