"""flamefuse on Dask (placeholder docstring, written at the end)."""
from flamefuse.dask.graph import TileKernel, kernel

__all__ = ["TileKernel", "kernel"]
