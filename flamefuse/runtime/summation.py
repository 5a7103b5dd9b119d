"""The order in which generated kernels add the terms of a float sum: blocked, then pairwise.

A sum accumulated term by term in one local has a rounding error that grows with the number of
terms (relative error about 5e-10 at 1.25e8 float64 terms); NumPy's ``add.reduce`` sums a
contiguous run pairwise (blocks of 128 terms in 8 lanes, then halves), with an error that
grows with the logarithm of the count. A fused kernel keeps its element loop and its cheap
per-term ``acc = acc + v`` (no reordering of the terms inside a block, so no ``fastmath``), and
gets an error of the same order as NumPy's:

* the innermost loop runs in segments of at most :data:`BLOCK` iterations; once at least
  ``BLOCK`` terms are in ``acc`` (a *block*), it is pushed into a binary counter of partial
  sums (:func:`push`): level ``k`` of the chunk's row of the levels array holds the sum of
  ``2**k`` blocks, and a push adds equal-sized neighbours as a binary counter carries, so blocks
  are combined exactly pairwise (:data:`LEVELS` levels: more than any array has blocks);
* :func:`finish` adds the levels still holding a partial to ``acc``, smallest first;
* partials of a kernel's chunks are combined pairwise too (:func:`pairwise_parts`).

An error bound is then about ``(BLOCK + log2(n / BLOCK)) * eps`` of the sum of the
absolute values, NumPy's about ``(16 + log2(n / 128)) * eps``: the same order (measured:
``tests/runtime/test_summation.py``), far from a sequential sum's ``n * eps``. The order
depends only on the array's shape, never on the number of threads, so a result is the same bit
for bit on any machine running the same library. ``cascaded(name, dtype)`` says which reductions
take it: float and complex sums (``mean`` and recorded dot products are sums); integer sums
are exact, and products, minima, maxima and logical reductions keep their single accumulator.

The levels live in an array (``<acc>_lv``, :data:`LEVELS` per chunk; a loop over it compiles in
a fraction of the time unrolled scalar levels took Numba's parallel passes), which a native
library takes from its caller like a chunk partials buffer. The block counter is named by the
caller (``count``; ``pending`` terms in the current block), the row of levels starts at
``base``, and counters are typed by ``integer`` (``np.uint64`` in the runtime's kernels, whose
loop variables are unsigned; ``np.int64`` in the filter kernels).
"""
from __future__ import annotations

# Terms added in order into one local before a push: NumPy's lanes each add 16 in order. Small
# blocks are also fast: each starts a new dependency chain, which the CPU overlaps with the last
# (a 2**24-term sum on one thread, EPYC: 4.1 ms at 16 and 32, 4.9 ms at 128; the sequential
# sum took 7.8 ms).
BLOCK = 16
LEVELS = 48          # 2**48 blocks: more terms than any memory holds


def cascaded(name: str, dtype: str) -> bool:
    """Whether the reduction ``name`` accumulated in ``dtype`` is summed blocked and pairwise."""
    return name in ("sum", "mean") and dtype.startswith(("float", "complex"))


def levels(accs, chunks: str, integer: str) -> list[str]:
    """Lines allocating the levels of each ``(acc, zero, dtype)`` of ``accs``: ``LEVELS`` per chunk
    (a native library's caller passes them instead, like the chunk partials)."""
    return [f"{acc}_lv = np.empty({chunks} * {integer}({LEVELS}), dtype=np.{dtype})"
            for acc, _, dtype in accs]


def base(chunk: str, integer: str) -> str:
    """The start of chunk ``chunk``'s row of levels."""
    return f"{integer}({chunk}) * {integer}({LEVELS})"


def push(accs, count: str, base: str, integer: str) -> list[str]:
    """Lines moving each block sum ``acc`` of ``accs`` into its levels (``count`` blocks pushed
    before it), ``acc`` set back to its zero, ``count`` incremented."""
    one = f"{integer}(1)"
    return ([f"sk = {base}", f"sc = {count}", f"while (sc & {one}) != {integer}(0):"]
            + [f"    {acc} = {acc}_lv[sk] + {acc}" for acc, _, _ in accs]
            + [f"    sk = sk + {one}", f"    sc = sc >> {one}"]
            + [s for acc, zero, _ in accs for s in (f"{acc}_lv[sk] = {acc}", f"{acc} = {zero}")]
            + [f"{count} = {count} + {one}"])


def finish(accs, count: str, base: str, integer: str) -> list[str]:
    """Lines adding the partials still in the levels to each ``acc`` (which then holds the whole
    sum)."""
    if not accs:
        return []
    one = f"{integer}(1)"
    return ([f"sk = {base}", f"sc = {count}", f"while sc != {integer}(0):",
             f"    if (sc & {one}) != {integer}(0):"]
            + [f"        {acc} = {acc}_lv[sk] + {acc}" for acc, _, _ in accs]
            + [f"    sk = sk + {one}", f"    sc = sc >> {one}"])


def block_end(accs, count: str, pending: str, terms: str, base: str, integer: str) -> list[str]:
    """Lines closing a segment of ``terms`` loop iterations: a :func:`push` once the block holds
    at least :data:`BLOCK` terms."""
    if not accs:
        return []
    return [f"{pending} = {pending} + {terms}", f"if {pending} >= {integer}({BLOCK}):",
            f"    {pending} = {integer}(0)"] + ["    " + s for s in push(accs, count, base, integer)]


def pairwise_parts(part: str, n: str, combine, integer: str) -> list[str]:
    """Lines combining ``part[0:n]`` pairwise in place into ``part[0]`` (``combine(a, b)`` the
    expression of two partials; ``n`` at least 1)."""
    return [f"st = {integer}(1)", f"while st < {n}:",
            f"    for ch in range({integer}(0), {n} - st, st + st):",
            f"        {part}[ch] = {combine(f'{part}[ch]', f'{part}[ch + st]')}",
            "    st = st + st"]
