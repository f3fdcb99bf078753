/* The heap snapshot's graph loops, compiled: dominators (Lengauer and Tarjan, with path
 * compression, no recursion), retained sizes and the walk's parents. Their Python twin is
 * halvm_prof/analysis/heap_graph.py; tests/unit/test_heap_graph.py holds both to one result
 * and to a fixed-point computation. Change both together.
 *
 * Closures are 0 .. n-1; n is the super-root, whose pointers are the roots. first (uint64,
 * walked + 1 entries) and targets (uint32) hold the pointers of closures 0 .. walked-1; the
 * others point nowhere. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_buffer first, targets, roots;
    Py_ssize_t walked, n;
} Graph;

static void release(Graph *g) {
    if (g->first.obj) PyBuffer_Release(&g->first);
    if (g->targets.obj) PyBuffer_Release(&g->targets);
    if (g->roots.obj) PyBuffer_Release(&g->roots);
}

static int parse_graph(PyObject *args, Graph *g) {
    memset(g, 0, sizeof *g);
    if (!PyArg_ParseTuple(args, "y*y*nny*", &g->first, &g->targets, &g->walked, &g->n,
                          &g->roots))
        return -1;
    if (g->first.itemsize != 8 || g->targets.itemsize != 4 || g->roots.itemsize != 4 ||
        g->first.len / 8 < g->walked + 1 || g->walked > g->n || g->n < 0) {
        PyErr_SetString(PyExc_ValueError, "first (uint64), targets (uint32), roots (int32)");
        release(g);
        return -1;
    }
    const uint64_t *first = g->first.buf;
    Py_ssize_t edges = g->targets.len / 4;
    if ((Py_ssize_t)first[g->walked] > edges) {
        PyErr_SetString(PyExc_ValueError, "first points past targets");
        release(g);
        return -1;
    }
    const uint32_t *targets = g->targets.buf;
    for (Py_ssize_t e = 0; e < (Py_ssize_t)first[g->walked]; e++)
        if ((Py_ssize_t)targets[e] >= g->n) {
            PyErr_SetString(PyExc_ValueError, "a pointer past the closures");
            release(g);
            return -1;
        }
    const int32_t *roots = g->roots.buf;
    for (Py_ssize_t i = 0; i < g->roots.len / 4; i++)
        if (roots[i] < 0 || roots[i] >= g->n) {
            PyErr_SetString(PyExc_ValueError, "a root past the closures");
            release(g);
            return -1;
        }
    return 0;
}

/* Successors of v: roots for the super-root, its pointers for a walked closure. */
static inline void successors(const Graph *g, Py_ssize_t v, const uint32_t **at,
                              Py_ssize_t *count, int *from_roots) {
    if (v == g->n) {
        *at = (const uint32_t *)g->roots.buf; /* int32, all >= 0 */
        *count = g->roots.len / 4;
        *from_roots = 1;
    } else if (v < g->walked) {
        const uint64_t *first = g->first.buf;
        *at = (const uint32_t *)g->targets.buf + first[v];
        *count = (Py_ssize_t)(first[v + 1] - first[v]);
        *from_roots = 0;
    } else {
        *at = NULL;
        *count = 0;
        *from_roots = 0;
    }
}

static int32_t eval_(int32_t v, int32_t *ancestor, int32_t *label, const int32_t *semi,
                     int32_t *path) {
    if (ancestor[v] < 0) return v;
    Py_ssize_t top = 0;
    int32_t x = v;
    while (ancestor[ancestor[x]] >= 0) {
        path[top++] = x;
        x = ancestor[x];
    }
    while (top > 0) {
        x = path[--top];
        int32_t a = ancestor[x];
        if (semi[label[a]] < semi[label[x]]) label[x] = label[a];
        ancestor[x] = ancestor[a];
    }
    return label[v];
}

static PyObject *as_bytes(const int32_t *data, Py_ssize_t count) {
    return PyBytes_FromStringAndSize((const char *)data, count * 4);
}

static PyObject *dominators(PyObject *self, PyObject *args) {
    Graph g;
    if (parse_graph(args, &g) < 0) return NULL;
    Py_ssize_t n = g.n, total = n + 1;
    PyObject *result = NULL;
    int32_t *number = malloc(total * sizeof(int32_t));
    int32_t *vertex = malloc(total * sizeof(int32_t));
    int32_t *parent = malloc(total * sizeof(int32_t));
    int32_t *stack = malloc(total * sizeof(int32_t));
    Py_ssize_t *cursor = malloc(total * sizeof(Py_ssize_t));
    int32_t *semi = NULL, *label = NULL, *ancestor = NULL, *idom = NULL, *head = NULL,
            *after = NULL, *start = NULL, *preds = NULL, *fill = NULL, *out = NULL;
    if (!number || !vertex || !parent || !stack || !cursor) goto nomem;
    for (Py_ssize_t i = 0; i < total; i++) number[i] = -1;

    /* Depth-first preorder from the super-root, with an explicit stack. */
    Py_ssize_t count = 0, depth = 0;
    number[n] = 0;
    vertex[count] = (int32_t)n;
    parent[count++] = -1;
    stack[depth] = (int32_t)n;
    cursor[depth++] = 0;
    while (depth > 0) {
        int32_t v = stack[depth - 1];
        const uint32_t *succ;
        Py_ssize_t k;
        int from_roots;
        successors(&g, v, &succ, &k, &from_roots);
        if (cursor[depth - 1] < k) {
            int32_t w = (int32_t)succ[cursor[depth - 1]++];
            if (number[w] < 0) {
                number[w] = (int32_t)count;
                vertex[count] = w;
                parent[count++] = number[v];
                stack[depth] = w;
                cursor[depth++] = 0;
            }
        } else {
            depth--;
        }
    }

    /* Each reached closure's predecessors, by preorder number. */
    start = calloc(count + 1, sizeof(int32_t));
    if (!start) goto nomem;
    for (Py_ssize_t k = 0; k < count; k++) {
        const uint32_t *succ;
        Py_ssize_t m;
        int from_roots;
        successors(&g, vertex[k], &succ, &m, &from_roots);
        for (Py_ssize_t i = 0; i < m; i++) start[number[succ[i]] + 1]++;
    }
    for (Py_ssize_t k = 0; k < count; k++) start[k + 1] += start[k];
    preds = malloc((start[count] + 1) * sizeof(int32_t));
    fill = malloc((count + 1) * sizeof(int32_t));
    if (!preds || !fill) goto nomem;
    memcpy(fill, start, (count + 1) * sizeof(int32_t));
    for (Py_ssize_t k = 0; k < count; k++) {
        const uint32_t *succ;
        Py_ssize_t m;
        int from_roots;
        successors(&g, vertex[k], &succ, &m, &from_roots);
        for (Py_ssize_t i = 0; i < m; i++) preds[fill[number[succ[i]]]++] = (int32_t)k;
    }

    semi = malloc(count * sizeof(int32_t));
    label = malloc(count * sizeof(int32_t));
    ancestor = malloc(count * sizeof(int32_t));
    idom = calloc(count, sizeof(int32_t));
    head = malloc(count * sizeof(int32_t));
    after = malloc(count * sizeof(int32_t));
    if (!semi || !label || !ancestor || !idom || !head || !after) goto nomem;
    for (Py_ssize_t k = 0; k < count; k++) {
        semi[k] = label[k] = (int32_t)k;
        ancestor[k] = head[k] = after[k] = -1;
    }
    /* The compression path reuses the search's stack (both at most count long). */
    int32_t *path = stack;
    for (Py_ssize_t w = count - 1; w > 0; w--) {
        int32_t low = semi[w];
        for (int32_t i = start[w]; i < start[w + 1]; i++) {
            int32_t v = preds[i];
            int32_t u = eval_(v, ancestor, label, semi, path);
            if (semi[u] < low) low = semi[u];
        }
        semi[w] = low;
        after[w] = head[low];
        head[low] = (int32_t)w;
        int32_t p = parent[w];
        ancestor[w] = p;
        int32_t v = head[p];
        head[p] = -1;
        while (v >= 0) {
            int32_t u = eval_(v, ancestor, label, semi, path);
            idom[v] = semi[u] < semi[v] ? u : p;
            v = after[v];
        }
    }
    for (Py_ssize_t w = 1; w < count; w++)
        if (idom[w] != semi[w]) idom[w] = idom[idom[w]];

    out = malloc((n > 0 ? n : 1) * sizeof(int32_t));
    if (!out) goto nomem;
    for (Py_ssize_t v = 0; v < n; v++) out[v] = -1;
    for (Py_ssize_t w = 1; w < count; w++) out[vertex[w]] = vertex[idom[w]];
    {
        PyObject *a = as_bytes(out, n), *b = as_bytes(vertex + 1, count - 1);
        if (a && b) result = PyTuple_Pack(2, a, b);
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(number); free(vertex); free(parent); free(stack); free(cursor);
    free(semi); free(label); free(ancestor); free(idom); free(head); free(after);
    free(start); free(preds); free(fill); free(out);
    release(&g);
    return result;
}

/* retained(idom int32[n], order int32[], size_of uint32[walked], static bytes[walked], n)
 * -> bytes of int64[n + 1]. */
static PyObject *retained(PyObject *self, PyObject *args) {
    Py_buffer idom, order, size, stat;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*y*y*y*n", &idom, &order, &size, &stat, &n)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t walked = size.len / 4, count = order.len / 4;
    if (idom.itemsize != 4 || order.itemsize != 4 || size.itemsize != 4 || idom.len / 4 < n ||
        stat.len < walked) {
        PyErr_SetString(PyExc_ValueError, "idom, order (int32), size_of (uint32), static");
        goto done;
    }
    const int32_t *up = idom.buf, *ord = order.buf;
    const uint32_t *sizes = size.buf;
    const unsigned char *fixed = stat.buf;
    result = PyBytes_FromStringAndSize(NULL, (n + 1) * 8);
    if (!result) goto done;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    memset(out, 0, (n + 1) * 8);
    for (Py_ssize_t k = 0; k < count; k++) {
        int32_t v = ord[k];
        if (v < 0 || v >= n || up[v] < 0 || up[v] > n) {
            PyErr_SetString(PyExc_ValueError, "order and idom disagree");
            Py_CLEAR(result);
            goto done;
        }
        if (v < walked && !fixed[v]) out[v] = sizes[v];
    }
    for (Py_ssize_t k = count - 1; k >= 0; k--) out[up[ord[k]]] += out[ord[k]];
done:
    PyBuffer_Release(&idom);
    PyBuffer_Release(&order);
    PyBuffer_Release(&size);
    PyBuffer_Release(&stat);
    return result;
}

static PyObject *walk_parents(PyObject *self, PyObject *args) {
    Graph g;
    if (parse_graph(args, &g) < 0) return NULL;
    PyObject *result = PyBytes_FromStringAndSize(NULL, (g.n > 0 ? g.n : 0) * 4);
    if (result) {
        int32_t *parent = (int32_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t v = 0; v < g.n; v++) parent[v] = -1;
        const int32_t *roots = g.roots.buf;
        for (Py_ssize_t i = 0; i < g.roots.len / 4; i++) parent[roots[i]] = (int32_t)g.n;
        const uint64_t *first = g.first.buf;
        const uint32_t *targets = g.targets.buf;
        for (Py_ssize_t v = 0; v < g.walked; v++)
            for (uint64_t e = first[v]; e < first[v + 1]; e++)
                if (parent[targets[e]] < 0) parent[targets[e]] = (int32_t)v;
    }
    release(&g);
    return result;
}

/* The report's pass over the dominator tree (heap_graph.fold_tree's twin).
 * fold_tree(order i32[], idom i32[n], retained i64[n+1], label i32[n], source i32[n],
 *           own u32[n], static u8[n], thunky u8[labels], labels, sources, n)
 * -> (label closures, words, retained: i64[labels], best: i32[labels], the same for sources,
 *     biggest i32[n+1], thunks_under i64[n+1], thunk_words, thunk_retained, static_closures,
 *     static_words) */
typedef struct {
    Py_buffer b[8];
    int count;
} Buffers;

static void release_all(Buffers *bs) {
    for (int i = 0; i < bs->count; i++) PyBuffer_Release(&bs->b[i]);
}

static int bad(const char *what) {
    PyErr_SetString(PyExc_ValueError, what);
    return -1;
}

static int check_nodes(Py_ssize_t n, const Py_buffer *label, const Py_buffer *source,
                       const Py_buffer *own, const Py_buffer *stat, Py_ssize_t labels,
                       Py_ssize_t sources) {
    if (label->itemsize != 4 || label->len / 4 != n || own->itemsize != 4 || own->len / 4 != n ||
        stat->len != n || (source && (source->itemsize != 4 || source->len / 4 != n)))
        return bad("label, source (int32), own (uint32), static: one per closure");
    const int32_t *lab = label->buf;
    for (Py_ssize_t v = 0; v < n; v++)
        if (lab[v] < 0 || lab[v] >= labels) return bad("a label past the labels");
    if (source) {
        const int32_t *src = source->buf;
        for (Py_ssize_t v = 0; v < n; v++)
            if (src[v] < -1 || src[v] >= sources) return bad("a source past the sources");
    }
    return 0;
}

static int check_tree(Py_ssize_t n, const Py_buffer *order, const Py_buffer *idom) {
    if (order->itemsize != 4 || idom->itemsize != 4 || idom->len / 4 != n)
        return bad("order, idom: int32, idom one per closure");
    const int32_t *ord = order->buf, *up = idom->buf;
    for (Py_ssize_t k = 0; k < order->len / 4; k++)
        if (ord[k] < 0 || ord[k] >= n || up[ord[k]] < 0 || up[ord[k]] > n)
            return bad("order and idom disagree");
    return 0;
}

static PyObject *fold_tree(PyObject *self, PyObject *args) {
    Buffers bs = {.count = 8};
    Py_buffer *order = &bs.b[0], *idom = &bs.b[1], *ret = &bs.b[2], *label = &bs.b[3],
              *source = &bs.b[4], *own = &bs.b[5], *stat = &bs.b[6], *thunky = &bs.b[7];
    Py_ssize_t labels, sources, n;
    memset(&bs.b, 0, sizeof bs.b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*nnn", order, idom, ret, label, source, own,
                          stat, thunky, &labels, &sources, &n))
        return NULL;
    PyObject *result = NULL;
    int64_t *lc = NULL, *lw = NULL, *lr = NULL, *sc = NULL, *sw = NULL, *sr = NULL,
            *under_sum = NULL, *most = NULL;
    int32_t *lb = NULL, *sb = NULL, *biggest = NULL, *top = NULL, *tops = NULL;
    Py_ssize_t ntops = 0;
    unsigned char *under = NULL;
    if (check_tree(n, order, idom) < 0 ||
        check_nodes(n, label, source, own, stat, labels, sources) < 0)
        goto done;
    if (ret->itemsize != 8 || ret->len / 8 != n + 1 || thunky->len != labels) {
        bad("retained (int64, one per closure and the super-root), thunky (one per label)");
        goto done;
    }
    lc = calloc(labels + 1, 8); lw = calloc(labels + 1, 8); lr = calloc(labels + 1, 8);
    sc = calloc(sources + 1, 8); sw = calloc(sources + 1, 8); sr = calloc(sources + 1, 8);
    lb = malloc((labels + 1) * 4); sb = malloc((sources + 1) * 4);
    biggest = malloc((n + 1) * 4); top = malloc((n + 1) * 4);
    under_sum = calloc(n + 1, 8); most = malloc((n + 1) * 8); under = calloc(n + 1, 1);
    tops = malloc((n + 1) * 4);
    if (!lc || !lw || !lr || !sc || !sw || !sr || !lb || !sb || !biggest || !top ||
        !under_sum || !most || !under || !tops) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < labels; i++) lb[i] = -1;
    for (Py_ssize_t i = 0; i < sources; i++) sb[i] = -1;
    for (Py_ssize_t v = 0; v <= n; v++) { biggest[v] = -1; top[v] = -1; most[v] = -1; }
    const int32_t *ord = order->buf, *up = idom->buf, *lab = label->buf, *src = source->buf;
    const int64_t *r = ret->buf;
    const uint32_t *size = own->buf;
    const unsigned char *fixed = stat->buf, *thunk = thunky->buf;
    int64_t thunk_words = 0, thunk_retained = 0, static_closures = 0, static_words = 0;
    for (Py_ssize_t k = 0; k < order->len / 4; k++) {
        int32_t v = ord[k], p = up[v], l = lab[v];
        int64_t mine = size[v];
        if (fixed[v]) { static_closures++; static_words += mine; mine = 0; }
        lc[l]++;
        lw[l] += mine;
        if (p == n || lab[p] != l) {
            lr[l] += r[v];
            if (lb[l] < 0 || r[v] > r[lb[l]]) lb[l] = v;
        }
        int32_t s = src[v];
        if (s >= 0) {
            sc[s]++;
            sw[s] += mine;
            if (p == n || src[p] != s) {
                sr[s] += r[v];
                if (sb[s] < 0 || r[v] > r[sb[s]]) sb[s] = v;
            }
        }
        top[v] = p == n ? v : top[p];
        if (p == n) tops[ntops++] = v;
        if (thunk[l]) {
            thunk_words += mine;
            if (!under[p]) { thunk_retained += r[v]; under_sum[top[v]] += r[v]; }
            under[v] = 1;
        } else {
            under[v] = under[p];
        }
        if (r[v] > most[p]) { most[p] = r[v]; biggest[p] = v; }
    }
    result = Py_BuildValue(
        "(y#y#y#y#y#y#y#y#y#y#y#LLLL)", (char *)lc, labels * 8, (char *)lw, labels * 8,
        (char *)lr, labels * 8, (char *)lb, labels * 4, (char *)sc, sources * 8, (char *)sw,
        sources * 8, (char *)sr, sources * 8, (char *)sb, sources * 4, (char *)biggest,
        (n + 1) * 4, (char *)under_sum, (n + 1) * 8, (char *)tops, ntops * 4,
        (long long)thunk_words,
        (long long)thunk_retained, (long long)static_closures, (long long)static_words);
done:
    free(lc); free(lw); free(lr); free(sc); free(sw); free(sr); free(lb); free(sb);
    free(biggest); free(top); free(under_sum); free(most); free(under); free(tops);
    release_all(&bs);
    return result;
}

/* lookup(keys u32[], table i32[], extra, fill) -> bytes of int32[len(keys) + extra]:
 * table[key] for each key, then ``extra`` times ``fill`` (heap_graph.lookup's twin). */
static PyObject *lookup(PyObject *self, PyObject *args) {
    Py_buffer keys, table;
    Py_ssize_t extra;
    int fill;
    if (!PyArg_ParseTuple(args, "y*y*ni", &keys, &table, &extra, &fill)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = keys.len / 4, size = table.len / 4;
    if (keys.itemsize != 4 || table.itemsize != 4 || extra < 0) {
        bad("keys (uint32), table (int32)");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, (count + extra) * 4);
    if (!result) goto done;
    int32_t *out = (int32_t *)PyBytes_AS_STRING(result);
    const uint32_t *k = keys.buf;
    const int32_t *t = table.buf;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (k[i] >= (uint32_t)size) {
            Py_CLEAR(result);
            bad("a key past the table");
            goto done;
        }
        out[i] = t[k[i]];
    }
    for (Py_ssize_t i = 0; i < extra; i++) out[count + i] = fill;
done:
    PyBuffer_Release(&keys);
    PyBuffer_Release(&table);
    return result;
}

/* subtree_parts(order, idom, label, own, static, holders i32[], labels, n)
 * -> (closures, own words): i64[holders * labels] (heap_graph.subtree_parts's twin) */
static PyObject *subtree_parts(PyObject *self, PyObject *args) {
    Buffers bs = {.count = 6};
    Py_buffer *order = &bs.b[0], *idom = &bs.b[1], *label = &bs.b[2], *own = &bs.b[3],
              *stat = &bs.b[4], *holders = &bs.b[5];
    Py_ssize_t labels, n;
    memset(&bs.b, 0, sizeof bs.b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*nn", order, idom, label, own, stat, holders,
                          &labels, &n))
        return NULL;
    PyObject *result = NULL;
    int64_t *counts = NULL, *words = NULL;
    int32_t *index = NULL, *member = NULL;
    Py_ssize_t h = holders->len / 4;
    if (check_tree(n, order, idom) < 0 || check_nodes(n, label, NULL, own, stat, labels, 0) < 0)
        goto done;
    const int32_t *hold = holders->buf;
    for (Py_ssize_t i = 0; i < h; i++)
        if (hold[i] < 0 || hold[i] >= n) { bad("a holder past the closures"); goto done; }
    counts = calloc(h * labels + 1, 8);
    words = calloc(h * labels + 1, 8);
    index = malloc((n + 1) * 4);
    member = malloc((n + 1) * 4);
    if (!counts || !words || !index || !member) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t v = 0; v <= n; v++) { index[v] = -1; member[v] = -1; }
    for (Py_ssize_t i = 0; i < h; i++) index[hold[i]] = (int32_t)i;
    const int32_t *ord = order->buf, *up = idom->buf, *lab = label->buf;
    const uint32_t *size = own->buf;
    const unsigned char *fixed = stat->buf;
    for (Py_ssize_t k = 0; k < order->len / 4; k++) {
        int32_t v = ord[k], i = index[v];
        if (i < 0) i = member[up[v]];
        member[v] = i;
        if (i >= 0) {
            Py_ssize_t at = (Py_ssize_t)i * labels + lab[v];
            counts[at]++;
            if (!fixed[v]) words[at] += size[v];
        }
    }
    result = Py_BuildValue("(y#y#)", (char *)counts, h * labels * 8, (char *)words,
                           h * labels * 8);
done:
    free(counts); free(words); free(index); free(member);
    release_all(&bs);
    return result;
}

/* path_signatures(parents i32[n], label i32[n], own u32[n], static u8[n], n, limit)
 * -> (parent i32[], last i32[], runs u8[], root i32[], closures i64[], words i64[],
 *     example i32[]) per signature (heap_graph.path_signatures's twin) */
typedef struct {
    int32_t *parent, *last, *root, *example;
    unsigned char *runs;
    int64_t *closures, *words, *most;
    Py_ssize_t count, cap;
} Sigs;

static int grow_sigs(Sigs *s) {
    Py_ssize_t cap = s->cap ? 2 * s->cap : 1024;
#define GROW(field, size) do { void *p = realloc(s->field, cap * (size)); if (!p) return -1; s->field = p; } while (0)
    GROW(parent, 4); GROW(last, 4); GROW(root, 4); GROW(example, 4); GROW(runs, 1);
    GROW(closures, 8); GROW(words, 8); GROW(most, 8);
#undef GROW
    s->cap = cap;
    return 0;
}

static PyObject *path_signatures(PyObject *self, PyObject *args) {
    Buffers bs = {.count = 4};
    Py_buffer *parents = &bs.b[0], *label = &bs.b[1], *own = &bs.b[2], *stat = &bs.b[3];
    Py_ssize_t n, limit;
    memset(&bs.b, 0, sizeof bs.b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*nn", parents, label, own, stat, &n, &limit))
        return NULL;
    PyObject *result = NULL;
    Sigs s = {0};
    int32_t *sig = NULL;
    uint64_t *keys = NULL;
    int32_t *values = NULL;
    Py_ssize_t slots = 1;
    if (parents->itemsize != 4 || parents->len / 4 != n ||
        check_nodes(n, label, NULL, own, stat, INT32_MAX, 0) < 0) {
        if (!PyErr_Occurred()) bad("parents: int32, one per closure");
        goto done;
    }
    while (slots < 2 * (limit + 1)) slots <<= 1;
    /* Never NULL, even with no closure: "y#" of NULL would be None. */
    if (grow_sigs(&s) < 0) { PyErr_NoMemory(); goto done; }
    sig = malloc((n + 1) * 4);
    keys = malloc(slots * 8);
    values = malloc(slots * 4);
    if (!sig || !keys || !values) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < slots; i++) values[i] = -1;
    const int32_t *par = parents->buf, *lab = label->buf;
    const uint32_t *size = own->buf;
    const unsigned char *fixed = stat->buf;
    for (Py_ssize_t v = 0; v < n; v++) {
        int32_t l = lab[v], p = par[v], base = -1, found = -1;
        Py_ssize_t slot = -1;
        uint64_t key = 0;
        if (p >= n || p < 0) {
            base = -1;
        } else if (p >= v) {
            bad("a walk parent after its closure (closures are numbered in the walk's order)");
            goto done;
        } else {
            base = sig[p];
            if (s.last[base] == l) {
                s.runs[base] = 1;
                found = base;
            } else {
                key = ((uint64_t)(uint32_t)base << 32) | (uint32_t)l;
                slot = (Py_ssize_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (slots - 1);
                while (values[slot] >= 0 && keys[slot] != key) slot = (slot + 1) & (slots - 1);
                found = values[slot];
                if (found < 0 && s.count >= limit) found = base;
            }
        }
        if (found < 0) {
            if (s.count == s.cap && grow_sigs(&s) < 0) { PyErr_NoMemory(); goto done; }
            found = (int32_t)s.count++;
            if (slot >= 0) { keys[slot] = key; values[slot] = found; }
            s.parent[found] = base;
            s.last[found] = l;
            s.runs[found] = 0;
            s.root[found] = base < 0 ? (int32_t)v : -1;
            s.closures[found] = 0;
            s.words[found] = 0;
            s.example[found] = -1;
            s.most[found] = -1;
        }
        sig[v] = found;
        int64_t mine = fixed[v] ? 0 : size[v];
        s.closures[found]++;
        s.words[found] += mine;
        if (mine > s.most[found]) { s.most[found] = mine; s.example[found] = (int32_t)v; }
    }
    result = Py_BuildValue(
        "(y#y#y#y#y#y#y#)", (char *)s.parent, s.count * 4, (char *)s.last, s.count * 4,
        (char *)s.runs, s.count, (char *)s.root, s.count * 4, (char *)s.closures, s.count * 8,
        (char *)s.words, s.count * 8, (char *)s.example, s.count * 4);
done:
    free(s.parent); free(s.last); free(s.root); free(s.example); free(s.runs);
    free(s.closures); free(s.words); free(s.most);
    free(sig); free(keys); free(values);
    release_all(&bs);
    return result;
}

static PyMethodDef methods[] = {
    {"dominators", dominators, METH_VARARGS,
     "dominators(first, targets, walked, n, roots) -> (idom bytes, order bytes), int32"},
    {"retained", retained, METH_VARARGS,
     "retained(idom, order, size_of, static, n) -> bytes of int64[n + 1]"},
    {"walk_parents", walk_parents, METH_VARARGS,
     "walk_parents(first, targets, walked, n, roots) -> bytes of int32[n]"},
    {"fold_tree", fold_tree, METH_VARARGS, "the report's pass over the dominator tree"},
    {"lookup", lookup, METH_VARARGS, "table[key] for each key, then extra times fill"},
    {"subtree_parts", subtree_parts, METH_VARARGS, "what each holder's subtree is made of"},
    {"path_signatures", path_signatures, METH_VARARGS, "closures by their walk path"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_snapscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__snapscan(void) { return PyModule_Create(&module); }
