/* The optional compiled walk of one eventlog region, for the runtime timeline
 * (halvm_prof/timeline/scan.py holds the Python walk it must match, result for result).
 *
 * walk(buf, sizes, count, width) walks the whole events of buf (a region: events only, in
 * file order). Events whose type has count[type] != 0 are only counted, by (type, time //
 * width); every other event is handed back as (offset, type, time, payload offset, payload
 * length) for the Python decoders. Returns (kept, counts, number counted, largest time
 * counted or -1). sizes[type] is the payload size, -1 for a variable size (a 16-bit length
 * follows the time), anything else for a type the log does not declare. Big-endian, as GHC
 * writes eventlogs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static inline uint16_t be16(const unsigned char *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

static int bump(PyObject *counts, long etype, unsigned long long bucket, Py_ssize_t n) {
    PyObject *key = Py_BuildValue("(lK)", etype, bucket);
    if (key == NULL) return -1;
    PyObject *old = PyDict_GetItemWithError(counts, key);
    if (old == NULL && PyErr_Occurred()) { Py_DECREF(key); return -1; }
    long long prev = old ? PyLong_AsLongLong(old) : 0;
    PyObject *val = PyLong_FromLongLong(prev + n);
    if (val == NULL) { Py_DECREF(key); return -1; }
    int rc = PyDict_SetItem(counts, key, val);
    Py_DECREF(key);
    Py_DECREF(val);
    return rc;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    Py_buffer buf, sizes, count;
    unsigned long long width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*K", &buf, &sizes, &count, &width)) return NULL;
    PyObject *kept = NULL, *counts = NULL, *result = NULL;
    const unsigned char *b = buf.buf;
    const int32_t *sz = sizes.buf;
    const unsigned char *cnt = count.buf;
    Py_ssize_t ntypes = sizes.len / (Py_ssize_t)sizeof(int32_t);
    Py_ssize_t n = buf.len, pos = 0, counted = 0;
    long long top = -1;
    /* Runs of one counted type in one bucket are added to the dict at once. */
    long run_type = -1;
    unsigned long long run_bucket = 0;
    Py_ssize_t run_n = 0;
    if (width == 0 || count.len < ntypes) {
        PyErr_SetString(PyExc_ValueError, "bad width or count table");
        goto done;
    }
    kept = PyList_New(0);
    counts = PyDict_New();
    if (kept == NULL || counts == NULL) goto done;
    while (pos < n) {
        if (pos + 10 > n) { PyErr_Format(PyExc_ValueError, "event cut at %zd", pos); goto done; }
        long etype = be16(b + pos);
        uint64_t t = be64(b + pos + 2);
        if (etype >= ntypes) { PyErr_Format(PyExc_ValueError, "undeclared type %ld", etype); goto done; }
        int32_t size = sz[etype];
        Py_ssize_t payload;
        if (size >= 0) {
            payload = pos + 10;
        } else if (size == -1) {
            if (pos + 12 > n) { PyErr_Format(PyExc_ValueError, "event cut at %zd", pos); goto done; }
            size = be16(b + pos + 10);
            payload = pos + 12;
        } else {
            PyErr_Format(PyExc_ValueError, "undeclared type %ld", etype);
            goto done;
        }
        if (payload + size > n) { PyErr_Format(PyExc_ValueError, "event cut at %zd", pos); goto done; }
        if (cnt[etype]) {
            unsigned long long bucket = t / width;
            if (run_n && (etype != run_type || bucket != run_bucket)) {
                if (bump(counts, run_type, run_bucket, run_n) < 0) goto done;
                run_n = 0;
            }
            run_type = etype;
            run_bucket = bucket;
            run_n++;
            counted++;
            if ((long long)t > top) top = (long long)t;
        } else {
            PyObject *item = Py_BuildValue("(nlKnn)", pos, etype, (unsigned long long)t, payload,
                                           (Py_ssize_t)size);
            if (item == NULL || PyList_Append(kept, item) < 0) { Py_XDECREF(item); goto done; }
            Py_DECREF(item);
        }
        pos = payload + size;
    }
    if (run_n && bump(counts, run_type, run_bucket, run_n) < 0) goto done;
    result = Py_BuildValue("(OOnL)", kept, counts, counted, top);
done:
    Py_XDECREF(kept);
    Py_XDECREF(counts);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&sizes);
    PyBuffer_Release(&count);
    return result;
}

/* regions(buf, sizes, base, state) -> (regions, state, pos, stop): the loop of
 * EventlogReader.regions over one chunk, which the Python loop there must match. state is
 * (cap, remaining, region start, region cap, region min time, region count), -1 for no cap;
 * regions are (offset, end, cap, min time, count); pos is where the walk stopped in buf; stop
 * is None or (1: end marker, 2: undeclared type; offset, type).
 */
static PyObject *regions(PyObject *self, PyObject *args) {
    Py_buffer buf, sizes;
    long long base, cap, remaining, r_start, r_cap, r_count;
    unsigned long long r_min;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*L(LLLLKL)", &buf, &sizes, &base, &cap, &remaining, &r_start,
                          &r_cap, &r_min, &r_count))
        return NULL;
    PyObject *out = PyList_New(0), *result = NULL, *stop = NULL;
    const unsigned char *b = buf.buf;
    const int32_t *sz = sizes.buf;
    Py_ssize_t ntypes = sizes.len / (Py_ssize_t)sizeof(int32_t);
    Py_ssize_t n = buf.len, pos = 0;
    if (out == NULL) goto done;
#define EMIT(end_) do { \
        PyObject *r_ = Py_BuildValue("(LLLKL)", r_start, (long long)(end_), r_cap, r_min, r_count); \
        if (r_ == NULL || PyList_Append(out, r_) < 0) { Py_XDECREF(r_); goto done; } \
        Py_DECREF(r_); \
    } while (0)
    while (pos + 10 <= n) {
        long etype = be16(b + pos);
        unsigned long long t = be64(b + pos + 2);
        long long size = etype < ntypes ? sz[etype] : -3;
        Py_ssize_t nxt;
        if (size >= 0) {
            nxt = pos + 10 + (Py_ssize_t)size;
        } else if (size == -1 && pos + 12 <= n) {
            nxt = pos + 12 + be16(b + pos + 10);
        } else if (size == -1) {
            break;
        } else {
            stop = Py_BuildValue("(iLl)", etype == 0xFFFF ? 1 : 2, base + pos, etype);
            if (stop == NULL) goto done;
            break;
        }
        if (nxt > n) break;
        if (etype == 18 && size >= 14) {
            long long at = base + pos;
            if (r_count) EMIT(at);
            const unsigned char *p = b + pos + 10;
            long long bsize = ((long long)p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
            long bcap = be16(p + 12);
            remaining = bsize - 24;
            cap = bcap == 0xFFFF ? -1 : bcap;
            r_start = at; r_cap = cap; r_min = t; r_count = 1;
        } else if (remaining > 0) {
            remaining -= nxt - pos;
            if (t < r_min) r_min = t;
            r_count += 1;
            if (remaining <= 0 && cap != -1) {
                long long at = base + nxt;
                EMIT(at);
                cap = -1;
                r_start = at; r_cap = -1; r_count = 0;
            }
        } else {
            if (r_count == 0 || t < r_min) r_min = t;
            r_count += 1;
        }
        pos = nxt;
    }
    if (stop == NULL && pos + 10 > n && pos + 2 <= n && b[pos] == 0xFF && b[pos + 1] == 0xFF) {
        stop = Py_BuildValue("(iLl)", 1, base + pos, 0xFFFFL);
        if (stop == NULL) goto done;
    }
#undef EMIT
    result = Py_BuildValue("(O(LLLLKL)nO)", out, cap, remaining, r_start, r_cap, r_min, r_count,
                           pos, stop ? stop : Py_None);
done:
    Py_XDECREF(out);
    Py_XDECREF(stop);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&sizes);
    return result;
}

static PyMethodDef methods[] = {
    {"regions", regions, METH_VARARGS,
     "regions(buf, sizes, base, state) -> (regions, state, pos, stop)"},
    {"walk", walk, METH_VARARGS,
     "walk(buf, sizes, count, width) -> (kept, counts, counted, largest counted time)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef elscan_module = {
    PyModuleDef_HEAD_INIT, "halvm_prof._elscan",
    "Compiled walk of an eventlog region for the runtime timeline.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__elscan(void) { return PyModule_Create(&elscan_module); }
