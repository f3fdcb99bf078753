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

static PyMethodDef methods[] = {
    {"dominators", dominators, METH_VARARGS,
     "dominators(first, targets, walked, n, roots) -> (idom bytes, order bytes), int32"},
    {"retained", retained, METH_VARARGS,
     "retained(idom, order, size_of, static, n) -> bytes of int64[n + 1]"},
    {"walk_parents", walk_parents, METH_VARARGS,
     "walk_parents(first, targets, walked, n, roots) -> bytes of int32[n]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_snapscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__snapscan(void) { return PyModule_Create(&module); }
