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


# -- the report's passes over the tree ---------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """Per group (a label, a source): closures, own words, what its chain tops retain (a
    closure whose immediate dominator is of another group), and its largest chain top."""

    closures: array[int]
    words: array[int]
    retained: array[int]
    best: array[int]


@dataclass(frozen=True)
class TreeFold:
    """One pass over the dominator tree: the groups' tallies, each closure's child of largest
    retained size (-1: none), what the outermost thunks under each top-level closure retain,
    thunks' own words and their outermost ones' retained words, static closures and words."""

    labels: Tally
    sources: Tally
    biggest: array[int]
    thunks_under: array[int]
    #: The closures the super-root dominates directly (the roots' and the shared ones), in
    #: the search's order.
    tops: array[int]
    thunk_words: int
    thunk_retained: int
    static_closures: int
    static_words: int


@dataclass(frozen=True)
class Nodes:
    """What the passes read of each closure ``0 .. n-1``: its label and source (-1: none),
    its own words (a static closure's: 0), and whether its label is a thunk's."""

    label: array[int]
    source: array[int]
    own: array[int]
    static: bytes | bytearray
    thunky: bytes | bytearray
    labels: int
    sources: int


def _tally(groups: int) -> Tally:
    return Tally(
        array("q", repeat(0, groups)),
        array("q", repeat(0, groups)),
        array("q", repeat(0, groups)),
        array("i", repeat(-1, groups)),
    )


def fold_tree(dom: Dominators, retained: array[int], nodes: Nodes, n: int) -> TreeFold:
    """The report's pass in the search's order (every closure after its dominator)."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        return _fold_compiled(compiled, dom, retained, nodes, n)
    labels, sources = _tally(nodes.labels), _tally(nodes.sources)
    label, source, own, thunky = nodes.label, nodes.source, nodes.own, nodes.thunky
    idom = dom.idom
    under = bytearray(n + 1)
    top = array("i", repeat(-1, n + 1))
    thunks_under = array("q", repeat(0, n + 1))
    biggest = array("i", repeat(-1, n + 1))
    most = array("q", repeat(-1, n + 1))
    tops = array("i")
    thunk_words = thunk_retained = static_closures = static_words = 0
    for v in dom.order:
        p = idom[v]
        lab = label[v]
        r = retained[v]
        mine = own[v]
        if nodes.static[v]:
            static_closures += 1
            static_words += mine
            mine = 0
        labels.closures[lab] += 1
        labels.words[lab] += mine
        if p == n or label[p] != lab:
            labels.retained[lab] += r
            best = labels.best[lab]
            if best < 0 or r > retained[best]:
                labels.best[lab] = v
        src = source[v]
        if src >= 0:
            sources.closures[src] += 1
            sources.words[src] += mine
            if p == n or source[p] != src:
                sources.retained[src] += r
                best = sources.best[src]
                if best < 0 or r > retained[best]:
                    sources.best[src] = v
        top[v] = v if p == n else top[p]
        if p == n:
            tops.append(v)
        if thunky[lab]:
            thunk_words += mine
            if not under[p]:
                thunk_retained += r
                thunks_under[top[v]] += r
            under[v] = 1
        else:
            under[v] = under[p]
        if r > most[p]:
            most[p] = r
            biggest[p] = v
    return TreeFold(
        labels,
        sources,
        biggest,
        thunks_under,
        tops,
        thunk_words,
        thunk_retained,
        static_closures,
        static_words,
    )


def _fold_compiled(
    compiled: ModuleType, dom: Dominators, retained: array[int], nodes: Nodes, n: int
) -> TreeFold:
    out = compiled.fold_tree(
        dom.order,
        dom.idom,
        retained,
        nodes.label,
        nodes.source,
        nodes.own,
        nodes.static,
        nodes.thunky,
        nodes.labels,
        nodes.sources,
        n,
    )
    (lc, lw, lr, lb, sc, sw, sr, sb, biggest, under, tops, *figures) = out
    return TreeFold(
        Tally(_ints("q", lc), _ints("q", lw), _ints("q", lr), _ints("i", lb)),
        Tally(_ints("q", sc), _ints("q", sw), _ints("q", sr), _ints("i", sb)),
        _ints("i", biggest),
        _ints("q", under),
        _ints("i", tops),
        *figures,
    )


def lookup(keys: array[int], table: array[int], extra: int, fill: int) -> array[int]:
    """``table[key]`` for each key, then ``extra`` times ``fill``: a per-type figure spread
    over the closures (and those not walked)."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        return _ints("i", compiled.lookup(keys, table, extra, fill))
    out = array("i", map(table.__getitem__, keys))
    out.extend(repeat(fill, extra))
    return out


def subtree_parts(
    dom: Dominators, nodes: Nodes, holders: Sequence[int], n: int
) -> tuple[array[int], array[int]]:
    """What each holder's subtree is made of, by label: closures and own words, as
    ``[holder * labels + label]``; a closure under two holders counts for the nearer one."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        counts, words = compiled.subtree_parts(
            dom.order,
            dom.idom,
            nodes.label,
            nodes.own,
            nodes.static,
            array("i", holders),
            nodes.labels,
            n,
        )
        return _ints("q", counts), _ints("q", words)
    size = len(holders) * nodes.labels
    counts = array("q", repeat(0, size))
    words = array("q", repeat(0, size))
    index = array("i", repeat(-1, n + 1))
    for i, h in enumerate(holders):
        index[h] = i
    member = array("i", repeat(-1, n + 1))
    idom, label, own, static = dom.idom, nodes.label, nodes.own, nodes.static
    for v in dom.order:
        i = index[v]
        if i < 0:
            i = member[idom[v]]
        member[v] = i
        if i >= 0:
            at = i * nodes.labels + label[v]
            counts[at] += 1
            if not static[v]:
                words[at] += own[v]
    return counts, words


@dataclass(frozen=True)
class Signatures:
    """Closures by the walk's path to them, runs of one label folded: each signature's parent
    signature (-1 at a root), last label, whether that label runs, root closure (-1 but at a
    root), and its closures, own words and closure of most own words."""

    parent: array[int]
    last: array[int]
    runs: bytearray
    root: array[int]
    closures: array[int]
    words: array[int]
    example: array[int]


def path_signatures(parents: array[int], nodes: Nodes, n: int, limit: int) -> Signatures:
    """Each closure's path signature: a root closure starts one; a closure of the label its
    walk parent's signature ends with stays on it (a run); else (parent signature, label) is
    one signature, made when first met. Past ``limit`` signatures a closure stays on its
    parent's."""
    compiled = native.load("_snapscan")
    if compiled is not None:
        out = compiled.path_signatures(parents, nodes.label, nodes.own, nodes.static, n, limit)
        parent, last, runs, root, closures, words, example = out
        return Signatures(
            _ints("i", parent),
            _ints("i", last),
            bytearray(runs),
            _ints("i", root),
            _ints("q", closures),
            _ints("q", words),
            _ints("i", example),
        )
    index: dict[tuple[int, int], int] = {}
    s = Signatures(
        array("i"), array("i"), bytearray(), array("i"), array("q"), array("q"), array("i")
    )
    most = array("q")
    sig = array("i", repeat(-1, n))
    label, own, static = nodes.label, nodes.own, nodes.static
    for v in range(n):
        lab = label[v]
        p = parents[v]
        if p == n or p < 0:
            found = -1
            base = -1
        elif p >= v:
            raise ValueError(
                "a walk parent after its closure (closures are numbered in the walk's order)"
            )
        else:
            base = sig[p]
            if s.last[base] == lab:
                s.runs[base] = 1
                found = base
            else:
                found = index.get((base, lab), -1)
                if found < 0 and len(s.parent) >= limit:
                    found = base
        if found < 0:
            found = len(s.parent)
            if base >= 0:
                index[(base, lab)] = found
            s.parent.append(base)
            s.last.append(lab)
            s.runs.append(0)
            s.root.append(v if base < 0 else -1)
            s.closures.append(0)
            s.words.append(0)
            s.example.append(-1)
            most.append(-1)
        sig[v] = found
        mine = 0 if static[v] else own[v]
        s.closures[found] += 1
        s.words[found] += mine
        if mine > most[found]:
            most[found] = mine
            s.example[found] = v
    return s
