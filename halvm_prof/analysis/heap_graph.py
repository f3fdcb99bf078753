"""The graph of a heap snapshot: dominators, retained sizes and the walk's own paths.

A snapshot's closures ``0 .. n-1`` point to each other through flat arrays (``first``,
``targets``: :class:`halvm_prof.formats.snapshot.HeapSnapshot`); a super-root ``n`` points to
every root. Closure ``d`` dominates ``v`` when every path from the roots to ``v`` passes through
``d``; what ``v`` retains is what it dominates, which dropping ``v`` would free.

:func:`dominators` is Lengauer and Tarjan's algorithm with path compression (``O(m log n)``),
written without recursion (a million-closure list is a million-deep depth-first search):
an explicit stack for the search, an iterative path compression, buckets as linked lists in
arrays. The compiled ``halvm_prof._snapscan`` does the same loops (:mod:`halvm_prof.native`
picks); ``tests/unit/test_heap_graph.py`` holds both to a plain fixed-point computation on
random graphs, and to each other.

:func:`walk_parents` is the walk's own tree: the closure whose record first points to a
closure (the walk is breadth first, so that is the one it was met through), or the
super-root for a root. A path along it is a real chain of pointers from a root, and the
shortest one; every dominator of a closure lies on it.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from types import ModuleType

from halvm_prof import native


@dataclass(frozen=True)
class Dominators:
    """``idom[v]``: the immediate dominator of closure ``v`` (``n``, the super-root, for a
    closure only the roots together hold; -1 for one the roots do not reach). ``order``: the
    reached closures in the search's preorder, every closure after its dominators."""

    idom: array[int]
    order: array[int]


def dominators(
    first: Sequence[int], targets: Sequence[int], walked: int, n: int, roots: Sequence[int]
) -> Dominators:
    """The dominator tree of closures ``0 .. n-1`` (those from ``walked`` on point nowhere)
    from the super-root ``n`` whose pointers are ``roots``."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        return dominators_compiled(compiled, first, targets, walked, n, roots)
    return dominators_python(first, targets, walked, n, roots)


def dominators_compiled(
    compiled: ModuleType,
    first: Sequence[int],
    targets: Sequence[int],
    walked: int,
    n: int,
    roots: Sequence[int],
) -> Dominators:
    """:func:`dominators` by the compiled module."""
    idom, order = compiled.dominators(first, targets, walked, n, array("i", roots))
    return Dominators(_ints("i", idom), _ints("i", order))


def _ints(code: str, data: bytes) -> array[int]:
    out = array(code)
    out.frombytes(data)
    return out


def dominators_python(
    first: Sequence[int], targets: Sequence[int], walked: int, n: int, roots: Sequence[int]
) -> Dominators:
    """:func:`dominators` in Python (the compiled module's twin)."""
    vertex, parent, number = _search(first, targets, walked, n, roots)
    count = len(vertex)
    start, preds = _predecessors(first, targets, walked, vertex, number, roots)
    semi = array("i", range(count))
    label = array("i", range(count))
    ancestor = array("i", repeat(-1, count))
    idom = array("i", repeat(0, count))
    head = array("i", repeat(-1, count))
    after = array("i", repeat(-1, count))
    path: list[int] = []
    for w in range(count - 1, 0, -1):
        low = semi[w]
        for i in range(start[w], start[w + 1]):
            v = preds[i]
            if ancestor[v] >= 0:
                u = _eval(v, ancestor, label, semi, path)
                if semi[u] < low:
                    low = semi[u]
            elif v < low:
                low = v
        semi[w] = low
        after[w] = head[low]
        head[low] = w
        p = parent[w]
        ancestor[w] = p
        v = head[p]
        head[p] = -1
        while v >= 0:
            u = _eval(v, ancestor, label, semi, path)
            idom[v] = u if semi[u] < semi[v] else p
            v = after[v]
    for w in range(1, count):
        if idom[w] != semi[w]:
            idom[w] = idom[idom[w]]
    out = array("i", repeat(-1, n))
    for w in range(1, count):
        out[vertex[w]] = vertex[idom[w]]
    return Dominators(out, vertex[1:])


def _search(
    first: Sequence[int], targets: Sequence[int], walked: int, n: int, roots: Sequence[int]
) -> tuple[array[int], array[int], array[int]]:
    """Depth-first preorder from the super-root ``n``: the closures in preorder, each one's
    parent in the search (by preorder number), and each closure's preorder number (-1: not
    reached). A closure is numbered when it is taken off the stack, not when it is put on, so
    the order is a true depth-first one without recursion."""
    number = array("i", repeat(-1, n + 1))
    vertex = array("i", [n])
    parent = array("i", [-1])
    number[n] = 0
    stack = array("i", reversed(roots))
    owner = array("i", repeat(0, len(roots)))
    while stack:
        w = stack.pop()
        p = owner.pop()
        if number[w] >= 0:
            continue
        k = len(vertex)
        number[w] = k
        vertex.append(w)
        parent.append(p)
        if w < walked:
            a, b = first[w], first[w + 1]
            if a < b:
                succ = array("i", targets[a:b])
                succ.reverse()
                stack.extend(succ)
                owner.extend(repeat(k, b - a))
    return vertex, parent, number


def _predecessors(
    first: Sequence[int],
    targets: Sequence[int],
    walked: int,
    vertex: array[int],
    number: array[int],
    roots: Sequence[int],
) -> tuple[array[int], array[int]]:
    """Each reached closure's predecessors, by preorder number, as (start, preds): those of
    ``w`` are ``preds[start[w]:start[w + 1]]``."""
    count = len(vertex)
    degree = array("i", repeat(0, count + 1))
    for r in roots:
        degree[number[r] + 1] += 1
    for k in range(1, count):
        v = vertex[k]
        if v < walked:
            for w in targets[first[v] : first[v + 1]]:
                degree[number[w] + 1] += 1
    for k in range(count):
        degree[k + 1] += degree[k]
    fill = array("i", degree)
    preds = array("i", repeat(0, degree[count]))
    for r in roots:
        at = number[r]
        preds[fill[at]] = 0
        fill[at] += 1
    for k in range(1, count):
        v = vertex[k]
        if v < walked:
            for w in targets[first[v] : first[v + 1]]:
                at = number[w]
                preds[fill[at]] = k
                fill[at] += 1
    return degree, preds


def _eval(
    v: int, ancestor: array[int], label: array[int], semi: array[int], path: list[int]
) -> int:
    """The vertex of least semi-dominator on the linked path above ``v``, compressing it
    (iteratively: the path can be as long as the heap is deep)."""
    if ancestor[v] < 0:
        return v
    x = v
    while ancestor[ancestor[x]] >= 0:
        path.append(x)
        x = ancestor[x]
    while path:
        x = path.pop()
        a = ancestor[x]
        if semi[label[a]] < semi[label[x]]:
            label[x] = label[a]
        ancestor[x] = ancestor[a]
    return label[v]


def retained_sizes(
    dom: Dominators, size_of: Sequence[int], static: bytes | bytearray, n: int
) -> array[int]:
    """What each closure retains, in words (index ``n``: everything the roots reach). A static
    closure is part of the program, freed by nothing: it counts for no one."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        return _ints("q", compiled.retained(dom.idom, dom.order, size_of, static, n))
    walked = len(size_of)
    retained = array("q", repeat(0, n + 1))
    for v in dom.order:
        if v < walked and not static[v]:
            retained[v] = size_of[v]
    idom = dom.idom
    for k in range(len(dom.order) - 1, -1, -1):
        v = dom.order[k]
        retained[idom[v]] += retained[v]
    return retained


def walk_parents(
    first: Sequence[int], targets: Sequence[int], walked: int, n: int, roots: Sequence[int]
) -> array[int]:
    """Each closure's parent in the walk's tree: the first closure whose record points to it,
    or ``n`` for a root (-1 for a closure nothing points to)."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        return _ints("i", compiled.walk_parents(first, targets, walked, n, array("i", roots)))
    parent = array("i", repeat(-1, n))
    for r in roots:
        parent[r] = n
    for v in range(walked):
        for w in targets[first[v] : first[v + 1]]:
            if parent[w] < 0:
                parent[w] = v
    return parent
