"""Errors as values: a :class:`Diagnostic` says where and what, and how to fix it.

Every stage raises :class:`FlameError` carrying one Diagnostic; only the CLI
turns it into text (``file:line:col: error: what`` plus a hint line) and
exit code 2.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Diagnostic:
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    hint: str | None = None

    def at(self, file: str | None = None, line: int | None = None,
           col: int | None = None) -> "Diagnostic":
        """The same diagnostic with a location filled in where it had none."""
        return replace(self, file=self.file or file,
                       line=self.line if self.line is not None else line,
                       col=self.col if self.col is not None else col)

    def render(self) -> str:
        where = ":".join(str(p) for p in (self.file, self.line, self.col) if p is not None)
        text = f"{where}: error: {self.message}" if where else f"error: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class FlameError(Exception):
    """An input or usage error with its :class:`Diagnostic`."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.render())
        self.diagnostic = diagnostic


def fail(message: str, *, file=None, line=None, col=None, hint=None):
    """Raise a FlameError built from the arguments."""
    raise FlameError(Diagnostic(message, file, line, col, hint))
