"""What a task graph costs: tasks, critical path, bytes moved between workers.

``graph_stats(*arrays) -> GraphStats``: the tasks the arrays' graph computes
beyond their inputs (the layers of arrays without dependencies, such as
``from_array`` or ``random``, do not count, nor do they lengthen a path), and
the critical path as the longest chain of those tasks.  ``moved_bytes(client)``
the bytes all workers of a ``distributed.Client`` have sent to one another so
far (``transfer_outgoing_bytes_total``): take the difference around a run.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GraphStats:
    tasks: int
    critical_path: int


def graph_stats(*arrays) -> GraphStats:
    from dask.core import get_dependencies
    from dask.highlevelgraph import HighLevelGraph
    graph = HighLevelGraph.merge(*[a.__dask_graph__() for a in arrays])
    sources = {name for name, deps in graph.dependencies.items() if not deps}
    dsk = dict(graph)
    counted = [k for k in dsk if (k[0] if isinstance(k, tuple) else k) not in sources]
    depth: dict = {}

    def walk(key):
        stack = [key]
        while stack:
            k = stack[-1]
            if k in depth:
                stack.pop()
                continue
            deps = [d for d in get_dependencies(dsk, k) if d in dsk and d != k]
            todo = [d for d in deps if d not in depth]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            own = 0 if (k[0] if isinstance(k, tuple) else k) in sources else 1
            depth[k] = own + max((depth[d] for d in deps), default=0)

    for k in counted:
        walk(k)
    return GraphStats(len(counted), max((depth[k] for k in counted), default=0))


def moved_bytes(client) -> int:
    """Bytes sent between the client's workers so far."""
    sent = client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
    return int(sum(sent.values()))
