/* The optional compiled eventlog walk: the twin of halvm_prof/formats/eventlog/walk.py's
 * walk_python, which it must match result for result (tests/unit/test_walk.py holds them).
 *
 * walk(buf, sizes, layouts, want, width, base, state, final)
 *   -> (frames, counts, counted, top, regions, state, pos, stop)
 *
 * Walks the whole events at the start of buf (file offset base). sizes[type] (int32) is the
 * payload size, -1 variable (a 16-bit length follows the time), -3 variable and read by its
 * content (layouts[4 * type ..]: fixed bytes, offset of a count byte of 4-byte words or -1,
 * NUL-terminated strings, fixed bytes after them), anything else undeclared. want (bytes or
 * None) says per type: 0 leave, 1 hand back (offset, type, time, payload, length, cap or -1),
 * 2 count by (type, time // width). state is (cap, remaining, region start, region cap,
 * region min time, region count), -1 for no cap; regions are (offset, end, cap, min time,
 * count). stop is None or (1: end marker, 2: undeclared type; offset, type). Big-endian, as
 * GHC writes eventlogs.
 *
 * decode (None, or (formats, event class, cap, offset base)): a kept event whose type has
 * formats[type] (bytes of struct letters B, H, I, Q, fitting its payload) comes back as
 * event_class(time, type, cap, args, offset base + offset), made here; cap -2 means the
 * block's cap as walked, -1 None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define VARIABLE (-1)
#define UNDECLARED (-2)
#define CONTENT (-3)
#define BLOCK_MARKER 18
#define BLOCK_MARKER_EVENT 24
#define NO_CAP 0xFFFF
#define DATA_END 0xFFFF
#define REGION_BYTES (256 << 10)

static inline uint16_t be16(const unsigned char *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t be64(const unsigned char *p) {
    return ((uint64_t)be32(p) << 32) | be32(p + 4);
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

typedef struct {
    const unsigned char *b;
    Py_ssize_t n;
    const int32_t *sz;
    Py_ssize_t ntypes;
    int final;
} Walk;

/* Does an event (or the end marker, or when final the buffer's end) start at at? */
static int starts(const Walk *w, Py_ssize_t at) {
    if (w->final && at == w->n) return 1;
    if (at + 2 > w->n) return 0;
    long etype = be16(w->b + at);
    return etype == DATA_END || (etype < w->ntypes && w->sz[etype] != UNDECLARED);
}

/* The payload length of a content-read event, or -1 when the buffer ends too soon. */
static long content_end(const Walk *w, Py_ssize_t payload, long declared, const int32_t *lay) {
    Py_ssize_t limit = payload + declared;
    Py_ssize_t bound = limit < w->n ? limit : w->n;
    Py_ssize_t p = payload + lay[0];
    if (p <= bound && lay[1] >= 0) p += 4 * (Py_ssize_t)w->b[payload + lay[1]];
    for (int i = 0; i < lay[2]; i++) {
        if (p > bound) break;
        const unsigned char *nul = memchr(w->b + p, 0, (size_t)(bound - p));
        if (nul == NULL) { p = bound + 1; break; }
        p = (nul - w->b) + 1;
    }
    p += lay[3];
    if (limit > w->n) return w->final && p == w->n ? (long)(p - payload) : -1;
    if (p >= limit) return declared;
    if (limit + 2 > w->n && !w->final) return -1;
    if (starts(w, limit)) return declared;
    return (long)(p - payload);
}

/* The decoded args of a plain payload, or NULL with no error set when it does not fit. */
static PyObject *decode_plain(const unsigned char *p, long size, PyObject *fmt) {
    const char *f = PyBytes_AS_STRING(fmt);
    Py_ssize_t k = PyBytes_GET_SIZE(fmt), need = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        switch (f[i]) {
        case 'B': need += 1; break;
        case 'H': need += 2; break;
        case 'I': need += 4; break;
        case 'Q': need += 8; break;
        default:
            PyErr_Format(PyExc_ValueError, "unsupported format letter %c", f[i]);
            return NULL;
        }
    }
    if (need > size) return NULL;
    PyObject *t = PyTuple_New(k);
    if (t == NULL) return NULL;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *v;
        switch (f[i]) {
        case 'B': v = PyLong_FromLong(p[0]); p += 1; break;
        case 'H': v = PyLong_FromLong(be16(p)); p += 2; break;
        case 'I': v = PyLong_FromUnsignedLong(be32(p)); p += 4; break;
        default: v = PyLong_FromUnsignedLongLong(be64(p)); p += 8; break;
        }
        if (v == NULL) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    Py_buffer buf, sizes, layouts, want = {0};
    PyObject *want_obj;
    unsigned long long width, r_min;
    long long base, cap, remaining, r_start, r_cap, r_count;
    int final;
    PyObject *decode = Py_None, *formats = NULL, *event_cls = NULL;
    long long dcap = -2, obase = 0;
    PyObject *fixed_cap = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*OKL(LLLLKL)p|O", &buf, &sizes, &layouts, &want_obj,
                          &width, &base, &cap, &remaining, &r_start, &r_cap, &r_min, &r_count,
                          &final, &decode))
        return NULL;
    PyObject *frames = NULL, *counts = NULL, *regions = NULL, *stop = NULL, *result = NULL;
    const unsigned char *wt = NULL;
    Walk w = {buf.buf, buf.len, sizes.buf, sizes.len / (Py_ssize_t)sizeof(int32_t), final};
    const int32_t *lay = layouts.buf;
    Py_ssize_t pos = 0, counted = 0;
    long long top = -1;
    long run_type = -1;
    unsigned long long run_bucket = 0;
    Py_ssize_t run_n = 0;
    if (want_obj != Py_None) {
        if (PyObject_GetBuffer(want_obj, &want, PyBUF_SIMPLE) < 0) goto done;
        wt = want.buf;
        if (want.len < w.ntypes) {
            PyErr_SetString(PyExc_ValueError, "the want table is shorter than the size table");
            goto done;
        }
    }
    if (decode != Py_None) {
        if (!PyArg_ParseTuple(decode, "O!OLL", &PyTuple_Type, &formats, &event_cls, &dcap, &obase))
            goto done;
        if (!PyType_Check(event_cls) || !PyType_IsSubtype((PyTypeObject *)event_cls, &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "the event class must be a tuple type");
            goto done;
        }
        if (PyTuple_GET_SIZE(formats) < w.ntypes) {
            PyErr_SetString(PyExc_ValueError, "the format table is shorter than the size table");
            goto done;
        }
        if (dcap != -2) {
            fixed_cap = dcap < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(dcap);
            if (fixed_cap == NULL) goto done;
        }
    }
    if (width == 0 || layouts.len < w.ntypes * 4 * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "bad width or layout table");
        goto done;
    }
    frames = PyList_New(0);
    counts = PyDict_New();
    regions = PyList_New(0);
    if (frames == NULL || counts == NULL || regions == NULL) goto done;
#define REGION(end_) do { \
        PyObject *r_ = Py_BuildValue("(LLLKL)", r_start, (long long)(end_), r_cap, r_min, r_count); \
        if (r_ == NULL || PyList_Append(regions, r_) < 0) { Py_XDECREF(r_); goto done; } \
        Py_DECREF(r_); \
    } while (0)
    const unsigned char *b = w.b;
    Py_ssize_t n = w.n;
    while (pos + 10 <= n) {
        long etype = be16(b + pos);
        unsigned long long t = be64(b + pos + 2);
        long size = etype < w.ntypes ? w.sz[etype] : UNDECLARED;
        Py_ssize_t payload;
        if (size >= 0) {
            payload = pos + 10;
        } else if (size == VARIABLE || size == CONTENT) {
            if (pos + 12 > n) break;
            payload = pos + 12;
            long declared = be16(b + pos + 10);
            if (size == CONTENT) {
                size = content_end(&w, payload, declared, lay + 4 * etype);
                if (size < 0) break;
            } else {
                size = declared;
            }
        } else {
            stop = Py_BuildValue("(iLl)", etype == DATA_END ? 1 : 2, base + pos, etype);
            if (stop == NULL) goto done;
            break;
        }
        Py_ssize_t nxt = payload + size;
        if (nxt > n) break;
        long long ecap;
        if (etype == BLOCK_MARKER && size >= 14) {
            long long at = base + pos;
            if (r_count) REGION(at);
            const unsigned char *p = b + payload;
            long bcap = be16(p + 12);
            remaining = (long long)be32(p) - BLOCK_MARKER_EVENT;
            cap = bcap == NO_CAP ? -1 : bcap;
            r_start = at; r_cap = cap; r_min = t; r_count = 1;
            ecap = cap;
        } else {
            ecap = cap;
            if (remaining > 0) {
                remaining -= nxt - pos;
                if (r_count == 0 || t < r_min) r_min = t;
                r_count += 1;
                if (remaining <= 0 && cap != -1) {
                    long long at = base + nxt;
                    REGION(at);
                    cap = -1;
                    r_start = at; r_cap = -1; r_count = 0;
                }
            } else {
                if (r_count == 0 || t < r_min) r_min = t;
                r_count += 1;
            }
        }
        if (r_count && base + nxt - r_start >= REGION_BYTES) {
            REGION(base + nxt);
            r_start = base + nxt; r_count = 0;
        }
        if (wt != NULL) {
            unsigned char what = wt[etype];
            if (what == 1) {
                PyObject *item = NULL;
                PyObject *fmt = formats ? PyTuple_GET_ITEM(formats, etype) : Py_None;
                if (fmt != Py_None) {
                    if (!PyBytes_Check(fmt)) {
                        PyErr_SetString(PyExc_TypeError, "a format must be bytes or None");
                        goto done;
                    }
                    PyObject *a = decode_plain(b + payload, size, fmt);
                    if (a == NULL && PyErr_Occurred()) goto done;
                    if (a != NULL) {
                        PyTypeObject *tp = (PyTypeObject *)event_cls;
                        item = tp->tp_alloc(tp, 5);
                        if (item == NULL) { Py_DECREF(a); goto done; }
                        PyObject *c = fixed_cap ? Py_NewRef(fixed_cap)
                                      : ecap < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(ecap);
                        PyObject *tt = PyLong_FromUnsignedLongLong(t);
                        PyObject *ty = PyLong_FromLong(etype);
                        PyObject *off = PyLong_FromLongLong(obase + pos);
                        PyTuple_SET_ITEM(item, 0, tt);
                        PyTuple_SET_ITEM(item, 1, ty);
                        PyTuple_SET_ITEM(item, 2, c);
                        PyTuple_SET_ITEM(item, 3, a);
                        PyTuple_SET_ITEM(item, 4, off);
                        if (tt == NULL || ty == NULL || c == NULL || off == NULL) {
                            Py_DECREF(item);
                            goto done;
                        }
                    }
                }
                if (item == NULL) item = Py_BuildValue("(nlKnlL)", pos, etype, t, payload, size, ecap);
                if (item == NULL || PyList_Append(frames, item) < 0) { Py_XDECREF(item); goto done; }
                Py_DECREF(item);
            } else if (what == 2) {
                unsigned long long bucket = t / width;
                /* Runs of one counted type in one bucket are added to the dict at once. */
                if (run_n && (etype != run_type || bucket != run_bucket)) {
                    if (bump(counts, run_type, run_bucket, run_n) < 0) goto done;
                    run_n = 0;
                }
                run_type = etype;
                run_bucket = bucket;
                run_n++;
                counted++;
                if ((long long)t > top) top = (long long)t;
            }
        }
        pos = nxt;
    }
    if (stop == NULL && pos + 10 > n && pos + 2 <= n && b[pos] == 0xFF && b[pos + 1] == 0xFF) {
        stop = Py_BuildValue("(iLl)", 1, base + pos, (long)DATA_END);
        if (stop == NULL) goto done;
    }
#undef REGION
    if (run_n && bump(counts, run_type, run_bucket, run_n) < 0) goto done;
    result = Py_BuildValue("(OOnLO(LLLLKL)nO)", frames, counts, counted, top, regions, cap,
                           remaining, r_start, r_cap, r_min, r_count, pos,
                           stop ? stop : Py_None);
done:
    Py_XDECREF(frames);
    Py_XDECREF(counts);
    Py_XDECREF(regions);
    Py_XDECREF(stop);
    Py_XDECREF(fixed_cap);
    if (wt != NULL) PyBuffer_Release(&want);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&sizes);
    PyBuffer_Release(&layouts);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(buf, sizes, layouts, want, width, base, state, final, decode=None)"
     " -> (frames, counts, counted, top, regions, state, pos, stop)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef elscan_module = {
    PyModuleDef_HEAD_INIT, "halvm_prof._elscan",
    "The compiled eventlog walk (halvm_prof/formats/eventlog/walk.py is its Python twin).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__elscan(void) { return PyModule_Create(&elscan_module); }
