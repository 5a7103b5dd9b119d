"""Bad programs and bad calls raise FlameError with a readable message."""
import numpy as np
import pytest

from flamefuse.errors import FlameError
from flamefuse.loopnest import Builder, Dim

i, j = Dim("i"), Dim("j")


def _bicg_kernel(compiled):
    return compiled("bicg", False)


def test_call_errors(compiled):
    k = _bicg_kernel(compiled)
    A, p, r = np.ones((3, 4)), np.ones(4), np.ones(3)
    with pytest.raises(FlameError, match="missing array 'r'"):
        k(A=A, p=p)
    with pytest.raises(FlameError, match="size m"):
        k(A=A, p=np.ones(5), r=r)
    with pytest.raises(FlameError, match="unknown argument"):
        k(A=A, p=p, r=r, z=r)
    with pytest.raises(FlameError, match="dimensions"):
        k(A=np.ones(3), p=p, r=r)


def test_build_errors():
    b = Builder()
    A = b.array("A", ("n", "n"))
    with pytest.raises(FlameError, match="has 2 axes"):
        A[i]
    with pytest.raises(FlameError, match="no extent"):
        b.assign(b.array("x", ("n",), role="out")[i], A[i + 1, j + 1])
    with pytest.raises(FlameError, match="declared twice"):
        b.array("A", ("n",))
    b2 = Builder()
    B = b2.array("B", ("n",))
    b2.assign(B[i], B[i] * 2.0)      # writing an input makes it inout
    assert b2.program().array("B").role == "inout"


def test_outputs_may_be_declared_before_the_inputs_that_size_them():
    b = Builder()
    y = b.array("y", ("n",), role="out")
    A, x = b.array("A", ("n", "m")), b.array("x", ("m",))
    b.matvec(A, x, out=y)
    from flamefuse.loopnest import fuse_program
    k = fuse_program(b.program())
    Av, xv = np.arange(6.0).reshape(2, 3), np.ones(3)
    np.testing.assert_allclose(k(A=Av, x=xv)["y"], Av @ xv)
    b2 = Builder()
    z = b2.array("z", ("k",), role="out")
    b2.assign(z[i], b2.array("u", ("n",))[i], extents={"i": "k"})
    with pytest.raises(FlameError, match="size k of z is not fixed"):
        fuse_program(b2.program())(u=np.ones(3))
