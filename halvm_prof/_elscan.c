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
/* A map of this file, each part beside the Python it twins (change both together):
 *
 *   be16, be32, be64, bump      reading big-endian numbers, counting   walk.py _HEAD, _U16
 *   starts, content_end         an event's extent read by its content  walk.py _starts,
 *                                                                       content_end
 *   decode_plain                a kept event of a plain payload        walk.py _Decoding.frame
 *   walk                        the one walk of the data section       walk.py walk_python,
 *                                                                       _variable
 *   -- the timeline's fold (tests/unit/test_timeline_fold.py) --
 *   IMap                        64-bit keys to indexes                 build.py's dicts
 *   Grid, grid_*                bins growing with the run              bins.py BinGrid
 *   Col, gcs_*                  a collection folded from its caps      collections.py _Open,
 *                                                                       CollectionFold
 *   Cap, fold_cap, close_run    one capability's running and GC        build.py _Cap
 *   fold_thread                 one thread                             build.py _Thread
 *   fold_one                    one event folded                       TimelineBuilder.add
 *   Fold.region, Fold.state     the time-ordered load, the hand-over   build.py _compiled_pass
 *   Fold.figures, held          figures as the events come (live)      incremental.py
 *   -- the report page (tests/unit/test_render_html.py) --
 *   page_rows                   its interval and collection rows       timeline_page.py
 *                                                                       _intervals, _collections
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
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

/* The frame of the event of type etype at pos: its payload's offset and size, given the
 * layouts of content-read types. 1: the event is whole in the buffer; 0: the buffer ends
 * before it does; -1: etype is not declared (or is the end marker), where a walk stops. */
static int event_frame(const Walk *w, Py_ssize_t pos, long etype, const int32_t *lay,
                       Py_ssize_t *payload, long *size) {
    long sz = etype < w->ntypes ? w->sz[etype] : UNDECLARED;
    if (sz >= 0) {
        *payload = pos + 10;
    } else if (sz == VARIABLE || sz == CONTENT) {
        if (pos + 12 > w->n) return 0;
        *payload = pos + 12;
        long declared = be16(w->b + pos + 10);
        if (sz == CONTENT) {
            sz = content_end(w, *payload, declared, lay + 4 * etype);
            if (sz < 0) return 0;
        } else {
            sz = declared;
        }
    } else {
        return -1;
    }
    *size = sz;
    return *payload + sz <= w->n;
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
        Py_ssize_t payload;
        long size;
        int whole = event_frame(&w, pos, etype, lay, &payload, &size);
        if (whole < 0) {
            stop = Py_BuildValue("(iLl)", etype == DATA_END ? 1 : 2, base + pos, etype);
            if (stop == NULL) goto done;
            break;
        }
        if (!whole) break;
        Py_ssize_t nxt = payload + size;
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


/* ---------------------------------------------------------------------------------------------
 * The compiled fold of the runtime timeline: the twin of halvm_prof/timeline/build.py's
 * TimelineBuilder.add and of the spark-counting load of its time-ordered pass, which it must
 * match figure for figure (tests/unit/test_timeline_fold.py holds them).
 *
 * Fold(tables, formats, classes, kinds, config) takes a log's regions in the order the pass
 * loads them (Fold.region), keeps their events in time order in its own pool and folds those
 * that no region still to come can precede, without making a Python object for the events it
 * reads itself (scheduling, GC, threads, heap and spark counters). The rest (user messages and
 * markers, tasks, the wall clock, heap profile starts, and what the folds alongside ask for)
 * are decoded by Python and handed, in order, to a callback. Fold.state hands everything over
 * to the Python builder, whose finish() makes the model.
 */

typedef __int128 big;
typedef unsigned __int128 ubig;

static PyObject *big_py(big v) {
    if (v >= (big)INT64_MIN && v <= (big)INT64_MAX) return PyLong_FromLongLong((long long)v);
    PyObject *hi = PyLong_FromLongLong((long long)(v >> 64));
    PyObject *lo = PyLong_FromUnsignedLongLong((unsigned long long)(uint64_t)v);
    PyObject *sh = PyLong_FromLong(64), *r = NULL;
    if (hi && lo && sh) {
        PyObject *h = PyNumber_Lshift(hi, sh);
        if (h) { r = PyNumber_Or(h, lo); Py_DECREF(h); }
    }
    Py_XDECREF(hi); Py_XDECREF(lo); Py_XDECREF(sh);
    return r;
}

/* -- a map of 64-bit keys to indexes (threads, bin series) -- */
typedef struct { uint64_t *keys; int32_t *vals; size_t cap, n; } IMap;

static size_t imap_slot(const IMap *m, uint64_t k) {
    size_t mask = m->cap - 1, i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while (m->vals[i] >= 0 && m->keys[i] != k) i = (i + 1) & mask;
    return i;
}
static int32_t imap_get(const IMap *m, uint64_t k) {
    if (m->cap == 0) return -1;
    return m->vals[imap_slot(m, k)];
}
static int imap_put(IMap *m, uint64_t k, int32_t v) {
    if (2 * (m->n + 1) > m->cap) {
        size_t ncap = m->cap ? 2 * m->cap : 64;
        uint64_t *ok = m->keys; int32_t *ov = m->vals; size_t ocap = m->cap;
        m->keys = PyMem_Malloc(ncap * sizeof(uint64_t));
        m->vals = PyMem_Malloc(ncap * sizeof(int32_t));
        if (!m->keys || !m->vals) { PyErr_NoMemory(); return -1; }
        for (size_t i = 0; i < ncap; i++) m->vals[i] = -1;
        m->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (ov[i] >= 0) { size_t s = imap_slot(m, ok[i]); m->keys[s] = ok[i]; m->vals[s] = ov[i]; }
        PyMem_Free(ok); PyMem_Free(ov);
    }
    size_t s = imap_slot(m, k);
    if (m->vals[s] < 0) m->n++;
    m->keys[s] = k; m->vals[s] = v;
    return 0;
}
static void imap_free(IMap *m) { PyMem_Free(m->keys); PyMem_Free(m->vals); memset(m, 0, sizeof *m); }

/* -- bins.py's BinGrid -- */
enum { K_RUN = 1, K_GC, K_POOL, K_SPARK, K_COUNTER, K_COLLECTIONS, K_PAUSE, K_SIZE, K_LIVE,
       K_BLOCKS, K_ALLOCATED, K_LONGEST };
typedef struct { uint64_t key; int is_max; big *arr; } Series;
typedef struct {
    Py_ssize_t slots;
    ubig width, top;
    Series *s; Py_ssize_t n, cap;
    IMap index;
} Grid;

static void grid_fit(Grid *g, ubig t) {
    while (t >= g->width * (ubig)g->slots) {
        Py_ssize_t half = g->slots / 2;
        for (Py_ssize_t k = 0; k < g->n; k++) {
            big *a = g->s[k].arr;
            if (g->s[k].is_max) {
                for (Py_ssize_t i = 0; i < half; i++) a[i] = a[2 * i] > a[2 * i + 1] ? a[2 * i] : a[2 * i + 1];
                for (Py_ssize_t i = half; i < g->slots; i++) a[i] = -1;
            } else {
                for (Py_ssize_t i = 0; i < half; i++) a[i] = a[2 * i] + a[2 * i + 1];
                for (Py_ssize_t i = half; i < g->slots; i++) a[i] = 0;
            }
        }
        g->width *= 2;
    }
    if (t > g->top) g->top = t;
}

static big *grid_series(Grid *g, uint64_t key, int is_max) {
    int32_t at = imap_get(&g->index, key);
    if (at >= 0) return g->s[at].arr;
    if (g->n == g->cap) {
        Py_ssize_t nc = g->cap ? 2 * g->cap : 16;
        Series *ns = PyMem_Realloc(g->s, (size_t)nc * sizeof(Series));
        if (ns == NULL) { PyErr_NoMemory(); return NULL; }
        g->s = ns; g->cap = nc;
    }
    big *arr = PyMem_Malloc((size_t)g->slots * sizeof(big));
    if (arr == NULL) { PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < g->slots; i++) arr[i] = is_max ? -1 : 0;
    g->s[g->n] = (Series){key, is_max, arr};
    if (imap_put(&g->index, key, (int32_t)g->n) < 0) { PyMem_Free(arr); return NULL; }
    g->n++;
    return arr;
}

static int grid_add(Grid *g, uint64_t key, ubig t, big amount) {
    if (t >= g->width * (ubig)g->slots) grid_fit(g, t);
    else if (t > g->top) g->top = t;
    big *a = grid_series(g, key, 0);
    if (a == NULL) return -1;
    a[t / g->width] += amount;
    return 0;
}

static int grid_peak(Grid *g, uint64_t key, ubig t, big value) {
    grid_fit(g, t);
    big *a = grid_series(g, key, 1);
    if (a == NULL) return -1;
    Py_ssize_t i = (Py_ssize_t)(t / g->width);
    if (value > a[i]) a[i] = value;
    return 0;
}

/* amount >= 0 and end, start >= 0 in every caller. */
static int grid_spread(Grid *g, uint64_t key, ubig start, ubig end, big amount) {
    if (end <= start) return amount ? grid_add(g, key, start, amount) : 0;
    ubig last_t = end - 1;
    if (last_t >= g->width * (ubig)g->slots) grid_fit(g, last_t);
    else if (last_t > g->top) g->top = last_t;
    ubig w = g->width;
    big *a = grid_series(g, key, 0);
    if (a == NULL) return -1;
    Py_ssize_t first = (Py_ssize_t)(start / w), last = (Py_ssize_t)(last_t / w);
    if (first == last) { a[first] += amount; return 0; }
    ubig span = end - start;
    big given = 0;
    for (Py_ssize_t i = first; i <= last; i++) {
        ubig hi = (ubig)(i + 1) * w;
        if (end < hi) hi = end;
        big share = (big)(((ubig)amount * (hi - start)) / span) - given;
        a[i] += share;
        given += share;
    }
    return 0;
}

static void grid_free(Grid *g) {
    for (Py_ssize_t k = 0; k < g->n; k++) PyMem_Free(g->s[k].arr);
    PyMem_Free(g->s);
    imap_free(&g->index);
}

/* -- collections.py's open collection -- */
typedef struct Col {
    long long index;
    uint64_t start, end;
    uint16_t *caps; int ncaps, capcap;
    long open;
    int par, closed, has_gen;
    uint64_t gen, copied, threads;
    int refs;
    PyObject *py; /* made once by state() */
} Col;

static void col_unref(Col *c) {
    if (c != NULL && --c->refs == 0) { PyMem_Free(c->caps); Py_XDECREF(c->py); PyMem_Free(c); }
}

/* -- per capability (65536 of them at most: the block marker's cap is 16 bits) -- */
typedef struct {
    int exists;
    uint64_t start;
    big mutator, gc;
    long long runs;
    int run_open; uint64_t run_start; uint32_t run_thread;
    long long per_cap; int has_per_cap;
    int share_open; uint64_t share_start; Col *share_col;
    int has_alloc; uint64_t alloc_t, alloc_v;
    int has_counters; uint64_t counters[7]; uint64_t counter_time;
} Cap;

typedef struct { uint16_t status; long long count; big waited; } TStop;
typedef struct {
    uint32_t id;
    PyObject *label;
    int has_created; uint64_t created; long created_cap; /* -1: None */
    big run_time; long long runs;
    TStop *stops; int nstops;
    int has_last_stop; uint16_t ls_status; uint64_t ls_at;
    long long migrations;
    uint16_t *caps; int ncaps;
    int has_finished; uint64_t finished;
} Thread;

/* What a held event is: read here (plain args), or a Python event (obj). */
typedef struct {
    uint64_t t;
    uint32_t ridx, idx;
    uint16_t type;
    int32_t cap; /* -1: None */
    uint8_t nargs;
    uint64_t a[9];
    int32_t frame; /* its frame among those Python decodes, -1: read here */
    PyObject *obj;
} Rec;

/* Made records (Interval, Collection, HeapPoint: frozen dataclasses with slots and no
 * __post_init__) are filled in slot by slot, as their __init__ would: calling __init__, which
 * sets each field through object.__setattr__, was most of a report's pass. A class whose
 * fields are not all slots is called instead. */
#define MAX_FIELDS 9
typedef struct { PyTypeObject *cls; int nfields; Py_ssize_t offset[MAX_FIELDS]; } Maker;

static int maker_init(Maker *m, PyObject *cls, const char *const *fields, int n) {
    m->cls = (PyTypeObject *)cls;
    m->nfields = 0;
    if (!PyType_Check(cls)) return 0;
    for (int i = 0; i < n; i++) {
        PyObject *d = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, fields[i]);
        if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) return 0;
        PyMemberDef *def = ((PyMemberDescrObject *)d)->d_member;
        if (def->type != T_OBJECT_EX) return 0;
        m->offset[i] = def->offset;
    }
    m->nfields = n;
    return 0;
}

/* A record of values (references stolen; NULL on error, the values released). */
static PyObject *make(Maker *m, PyObject **values, int n) {
    for (int i = 0; i < n; i++)
        if (values[i] == NULL) {
            for (int j = 0; j < n; j++) Py_XDECREF(values[j]);
            return NULL;
        }
    PyObject *o;
    if (m->nfields == n) {
        o = m->cls->tp_alloc(m->cls, 0);
        if (o == NULL) {
            for (int j = 0; j < n; j++) Py_DECREF(values[j]);
            return NULL;
        }
        for (int i = 0; i < n; i++) *(PyObject **)((char *)o + m->offset[i]) = values[i];
        /* Its fields are ints, strings, None, booleans and tuples of ints, none of which can
         * refer back to it: the record is in no cycle, so the cycle collector need not walk
         * it again at each collection (CPython untracks tuples of atoms so). A GC-heavy
         * report makes tens of thousands of them, kept to the end. */
        if (PyType_IS_GC(m->cls)) PyObject_GC_UnTrack(o);
        return o;
    }
    PyObject *args = PyTuple_New(n);
    if (args == NULL) {
        for (int j = 0; j < n; j++) Py_DECREF(values[j]);
        return NULL;
    }
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(args, i, values[i]);
    o = PyObject_Call((PyObject *)m->cls, args, NULL);
    Py_DECREF(args);
    return o;
}

/* How the pass treats each type. */
enum { T_SKIP = 0, T_COUNT = 1, T_SPARK = 2, T_READ = 3, T_PY = 4 };
/* What the fold does with a type it reads. */
enum { A_NONE = 0, A_RUN, A_STOP, A_GC_START, A_GC_END, A_PAR_GC, A_GC_STATS, A_SPARK,
       A_SPARK_COUNTERS, A_HEAP, A_CREATE, A_MIGRATE, A_LABEL, A_CAP_CREATE };

#define MAX_THREADS_DEFAULT 50000

typedef struct {
    PyObject_HEAD
    /* the log */
    const int32_t *sizes; const int32_t *layouts; Py_ssize_t ntypes;
    PyObject *tables_ref; /* (sizes bytes, layouts bytes), kept alive */
    PyObject *formats;    /* tuple of bytes or None */
    unsigned char *how;   /* T_* per type */
    unsigned char *act;   /* A_* per type */
    unsigned char *bare;  /* read without a payload */
    signed char *spark;   /* spark kind index per type, -1 */
    signed char *heap;    /* heap kind 0 size, 1 live, 2 blocks, 3 allocated; -1 */
    /* Python classes and callbacks */
    PyObject *event_cls, *interval_cls, *collection_cls, *point_cls;
    Maker m_interval, m_collection, m_point;
    int busy; /* within region() or state(): the callbacks may not come back in */
    PyObject *decode, *on_event, *sinks;
    PyObject *s_run, *s_gc, *heap_kinds[4], *counter_names[4];
    /* the budget */
    long long b_intervals, b_collections, b_points;
    int binned, makes_intervals, makes_collections, reads_heap;
    long long max_threads, max_thread_text;
    /* the builder */
    long long count; int has_first; uint64_t first, last;
    Cap *caps; uint16_t *cap_order; int ncaps;
    Thread *threads; Py_ssize_t nthreads, threads_cap; IMap thread_index;
    long long t_kept, t_text, t_dropped, t_texts_dropped;
    PyObject *intervals, *collections, *heap_points;
    long long unmade; int has_unmade_from; uint64_t unmade_from;
    long long drop_intervals, drop_collections, drop_points;
    int has_exact; uint64_t exact_until;
    long long spark_events[6]; int spark_seen;
    int has_alloc_none; uint64_t alloc_none_t, alloc_none_v;
    big alloc_sum; /* of the latest count of each capability */
    Grid grid;
    /* the collection fold */
    Col *current, *last_closed;
    long long gc_count; int has_first_start; uint64_t first_start;
    big gc_total, gc_longest, gc_copied; long long gc_parallel;
    uint64_t *gen_keys; long long *gen_counts; int ngens;
    int request_par;
    /* what live reads as it goes (figures()): collections by pause, the newest heap figures */
    double *bounds; long long *hist; int nbounds;
    int has_heap_last[4]; uint64_t heap_last_t[4], heap_last_v[4];
    /* the pool of held events, in key order */
    Rec *pool; Py_ssize_t npool, poolcap;
    Rec *fresh; Py_ssize_t nfresh, freshcap;
} Fold;

static Cap *fold_cap(Fold *f, long cap, uint64_t t) {
    Cap *c = &f->caps[cap];
    if (!c->exists) {
        /* allocation and spark counters may have come first: keep them */
        c->exists = 1;
        c->start = t;
        f->cap_order[f->ncaps++] = (uint16_t)cap;
    }
    return c;
}

static int fold_drop(Fold *f, long long *counter, uint64_t t) {
    (*counter)++;
    if (!f->has_exact || t < f->exact_until) { f->has_exact = 1; f->exact_until = t; }
    return 0;
}

/* _thread(): the index of the record of thread id, -1 for one past the budget, -2 on error. */
static Py_ssize_t fold_thread(Fold *f, uint32_t id, int created) {
    int32_t at = imap_get(&f->thread_index, id);
    if (at >= 0) return at;
    int full = f->t_kept >= f->max_threads;
    if (!created && full) return -1;
    if (full) { f->t_dropped++; return -1; }
    f->t_kept++;
    if (f->nthreads == f->threads_cap) {
        Py_ssize_t nc = f->threads_cap ? 2 * f->threads_cap : 64;
        Thread *nt = PyMem_Realloc(f->threads, (size_t)nc * sizeof(Thread));
        if (nt == NULL) { PyErr_NoMemory(); return -2; }
        f->threads = nt; f->threads_cap = nc;
    }
    Thread *th = &f->threads[f->nthreads];
    memset(th, 0, sizeof *th);
    th->id = id;
    th->created_cap = -1;
    if (imap_put(&f->thread_index, id, (int32_t)f->nthreads) < 0) return -2;
    return f->nthreads++;
}

static PyObject *opt_u64(int has, uint64_t v) {
    return has ? PyLong_FromUnsignedLongLong(v) : Py_NewRef(Py_None);
}

static int call_sinks(Fold *f, const char *method, PyObject *arg) {
    Py_ssize_t n = PyList_GET_SIZE(f->sinks);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = PyObject_CallMethod(PyList_GET_ITEM(f->sinks, i), method, "O", arg);
        if (r == NULL) return -1;
        Py_DECREF(r);
    }
    return 0;
}

static int fold_counter(Fold *f, uint64_t t, PyObject *name, big value) {
    Py_ssize_t n = PyList_GET_SIZE(f->sinks);
    if (n == 0) return 0;
    PyObject *tt = PyLong_FromUnsignedLongLong(t), *v = big_py(value);
    int rc = tt && v ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *r = PyObject_CallMethod(PyList_GET_ITEM(f->sinks, i), "counter", "OOO", tt, name, v);
        if (r == NULL) rc = -1;
        Py_XDECREF(r);
    }
    Py_XDECREF(tt); Py_XDECREF(v);
    return rc;
}

/* _interval() of Interval(cap, start, end, kind, thread, status, cut), or the count of one
 * not made. */
static int fold_interval(Fold *f, long cap, uint64_t start, uint64_t end, int run,
                         uint32_t thread, int status, int cut) {
    if (!f->makes_intervals) {
        f->unmade++;
        if (!f->has_unmade_from || start < f->unmade_from) { f->has_unmade_from = 1; f->unmade_from = start; }
        return 0;
    }
    int keep = PyList_GET_SIZE(f->intervals) < f->b_intervals;
    if (!keep && PyList_GET_SIZE(f->sinks) == 0) return fold_drop(f, &f->drop_intervals, start);
    PyObject *v[7] = {
        PyLong_FromLong(cap), PyLong_FromUnsignedLongLong(start), PyLong_FromUnsignedLongLong(end),
        Py_NewRef(run ? f->s_run : f->s_gc),
        run ? PyLong_FromUnsignedLong(thread) : Py_NewRef(Py_None),
        status >= 0 ? PyLong_FromLong(status) : Py_NewRef(Py_None),
        Py_NewRef(cut ? Py_True : Py_False)};
    PyObject *iv = make(&f->m_interval, v, 7);
    if (iv == NULL) return -1;
    int rc = 0;
    if (keep) rc = PyList_Append(f->intervals, iv);
    else fold_drop(f, &f->drop_intervals, start);
    if (rc == 0) rc = call_sinks(f, "interval", iv);
    Py_DECREF(iv);
    return rc;
}

static int close_run(Fold *f, long cap, uint64_t t, int status) {
    Cap *c = &f->caps[cap];
    uint64_t start = c->run_start;
    uint32_t thread = c->run_thread;
    c->run_open = 0;
    big length = t > start ? (big)(t - start) : 0;
    uint64_t end = t > start ? t : start;
    c->mutator += length;
    Py_ssize_t th = fold_thread(f, thread, 0);
    if (th == -2) return -1;
    if (th >= 0) f->threads[th].run_time += length;
    if (f->binned && grid_spread(&f->grid, ((uint64_t)K_RUN << 17) | (uint64_t)cap, start, end, (big)(end - start)) < 0)
        return -1;
    return fold_interval(f, cap, start, end, 1, thread, status, 0);
}

static int gc_share(Fold *f, long cap, uint64_t start, uint64_t end) {
    fold_cap(f, cap, start)->gc += (big)(end - start);
    if (f->binned && grid_spread(&f->grid, ((uint64_t)K_GC << 17) | (uint64_t)cap, start, end, (big)(end - start)) < 0)
        return -1;
    return fold_interval(f, cap, start, end, 0, 0, -1, 0);
}

static int gcs_end(Fold *f, long cap, uint64_t t) {
    Cap *c = &f->caps[cap];
    if (!c->share_open) return 0;
    c->share_open = 0;
    Col *col = c->share_col;
    c->share_col = NULL;
    uint64_t start = c->share_start, end = t > start ? t : start;
    col->open--;
    if (!col->closed && end > col->end) col->end = end;
    int rc = gc_share(f, cap, start, end);
    col_unref(col);
    return rc;
}

static int gcs_close(Fold *f, Col *col) {
    col->closed = 1;
    Col *keep = col;
    keep->refs++;
    if (f->current == col) { f->current = NULL; col_unref(col); }
    if (f->last_closed != NULL) col_unref(f->last_closed);
    f->last_closed = keep; /* the reference taken above */
    /* Parallel as +RTS -s counts it: more than one capability did its share (collections.py
     * says why not the par request or the statistics' thread count). */
    int parallel = col->ncaps > 1;
    big pause = (big)col->end - (big)col->start;
    f->gc_total += pause;
    if (pause > f->gc_longest) f->gc_longest = pause;
    if (f->nbounds) {
        /* bisect_left over the bounds, on pause / 1e9 as Python divides */
        double x = (double)pause / 1e9;
        int i = 0;
        while (i < f->nbounds && f->bounds[i] < x) i++;
        f->hist[i]++;
    }
    f->gc_parallel += parallel;
    if (col->has_gen) {
        int i = 0;
        while (i < f->ngens && f->gen_keys[i] != col->gen) i++;
        if (i == f->ngens) {
            uint64_t *nk = PyMem_Realloc(f->gen_keys, (size_t)(i + 1) * sizeof(uint64_t));
            if (nk == NULL) { PyErr_NoMemory(); return -1; }
            f->gen_keys = nk;
            long long *nc = PyMem_Realloc(f->gen_counts, (size_t)(i + 1) * sizeof(long long));
            if (nc == NULL) { PyErr_NoMemory(); return -1; }
            f->gen_counts = nc;
            f->gen_keys[i] = col->gen; f->gen_counts[i] = 0; f->ngens++;
        }
        f->gen_counts[i]++;
        f->gc_copied += (big)col->copied;
    }
    if (!f->makes_collections) return 0;
    /* _collection() */
    if (f->binned) {
        if (grid_add(&f->grid, (uint64_t)K_COLLECTIONS << 17, col->start, 1) < 0) return -1;
        if (grid_spread(&f->grid, (uint64_t)K_PAUSE << 17, col->start, col->end, pause) < 0) return -1;
        if (grid_peak(&f->grid, (uint64_t)K_LONGEST << 17, col->start, pause) < 0) return -1;
    }
    int kept = PyList_GET_SIZE(f->collections) < f->b_collections;
    if (!kept && PyList_GET_SIZE(f->sinks) == 0) return fold_drop(f, &f->drop_collections, col->start);
    /* sorted caps */
    for (int i = 1; i < col->ncaps; i++)
        for (int j = i; j > 0 && col->caps[j - 1] > col->caps[j]; j--) {
            uint16_t x = col->caps[j]; col->caps[j] = col->caps[j - 1]; col->caps[j - 1] = x;
        }
    PyObject *caps = PyTuple_New(col->ncaps);
    if (caps == NULL) return -1;
    for (int i = 0; i < col->ncaps; i++) {
        PyObject *v = PyLong_FromLong(col->caps[i]);
        if (v == NULL) { Py_DECREF(caps); return -1; }
        PyTuple_SET_ITEM(caps, i, v);
    }
    PyObject_GC_UnTrack(caps); /* ints only, as make() says */
    PyObject *v[9] = {
        PyLong_FromLongLong(col->index), PyLong_FromUnsignedLongLong(col->start),
        PyLong_FromUnsignedLongLong(col->end), caps, Py_NewRef(parallel ? Py_True : Py_False),
        opt_u64(col->has_gen, col->gen), opt_u64(col->has_gen, col->copied),
        opt_u64(col->has_gen, col->threads), Py_NewRef(Py_False)};
    PyObject *rec = make(&f->m_collection, v, 9);
    if (rec == NULL) return -1;
    int rc = 0;
    if (kept) rc = PyList_Append(f->collections, rec);
    else fold_drop(f, &f->drop_collections, col->start);
    if (rc == 0) rc = call_sinks(f, "collection", rec);
    Py_DECREF(rec);
    return rc;
}

static int gcs_start(Fold *f, long cap, uint64_t t) {
    Cap *c = &f->caps[cap];
    if (c->share_open && gcs_end(f, cap, t) < 0) return -1;
    Col *col = f->current;
    if (col != NULL && col->open == 0 && !col->closed) {
        if (gcs_close(f, col) < 0) return -1;
        col = NULL;
    }
    if (col == NULL) {
        if (!f->has_first_start) { f->has_first_start = 1; f->first_start = t; }
        col = PyMem_Calloc(1, sizeof(Col));
        if (col == NULL) { PyErr_NoMemory(); return -1; }
        col->index = f->gc_count++;
        col->start = col->end = t;
        col->par = f->request_par;
        col->refs = 1;
        f->current = col;
        f->request_par = 0;
    }
    int found = 0;
    for (int i = 0; i < col->ncaps; i++) if (col->caps[i] == cap) { found = 1; break; }
    if (!found) {
        if (col->ncaps == col->capcap) {
            int nc = col->capcap ? 2 * col->capcap : 4;
            uint16_t *n = PyMem_Realloc(col->caps, (size_t)nc * sizeof(uint16_t));
            if (n == NULL) { PyErr_NoMemory(); return -1; }
            col->caps = n; col->capcap = nc;
        }
        col->caps[col->ncaps++] = (uint16_t)cap;
        c->per_cap++;
        c->has_per_cap = 1;
    }
    col->open++;
    c->share_open = 1;
    c->share_start = t;
    c->share_col = col;
    col->refs++;
    return 0;
}

static int gcs_stats(Fold *f, const uint64_t *a) {
    Col *col = f->current;
    if (col == NULL) {
        col = f->last_closed;
        if (col == NULL || col->has_gen) return 0;
        col->has_gen = 1; col->gen = a[1]; col->copied = a[2]; col->threads = a[5];
        return 0;
    }
    col->has_gen = 1; col->gen = a[1]; col->copied = a[2]; col->threads = a[5];
    return gcs_close(f, col);
}

static int heap_event(Fold *f, int kind, long cap, uint64_t t, uint64_t value) {
    f->has_heap_last[kind] = 1; f->heap_last_t[kind] = t; f->heap_last_v[kind] = value;
    if (PyList_GET_SIZE(f->heap_points) < f->b_points) {
        PyObject *v[3] = {PyLong_FromUnsignedLongLong(t), Py_NewRef(f->heap_kinds[kind]),
                          PyLong_FromUnsignedLongLong(value)};
        PyObject *p = make(&f->m_point, v, 3);
        if (p == NULL) return -1;
        int rc = PyList_Append(f->heap_points, p);
        Py_DECREF(p);
        if (rc < 0) return -1;
    } else {
        fold_drop(f, &f->drop_points, t);
    }
    if (kind == 3) {
        int *has; uint64_t *pt, *pv;
        if (cap < 0) { has = &f->has_alloc_none; pt = &f->alloc_none_t; pv = &f->alloc_none_v; }
        else {
            Cap *c = &f->caps[cap];
            has = &c->has_alloc; pt = &c->alloc_t; pv = &c->alloc_v;
        }
        int had = *has;
        uint64_t pt0 = *pt, pv0 = *pv;
        *has = 1; *pt = t; *pv = value;
        f->alloc_sum += (big)value - (had ? (big)pv0 : 0);
        if (f->binned) {
            if (had && value >= pv0) {
                if (grid_spread(&f->grid, (uint64_t)K_ALLOCATED << 17, pt0, t, (big)(value - pv0)) < 0) return -1;
            } else if (!had) {
                if (grid_spread(&f->grid, (uint64_t)K_ALLOCATED << 17, 0, t, (big)value) < 0) return -1;
            }
        }
        return fold_counter(f, t, f->counter_names[3], f->alloc_sum);
    }
    static const int peak_key[3] = {K_SIZE, K_LIVE, K_BLOCKS};
    if (f->binned && grid_peak(&f->grid, (uint64_t)peak_key[kind] << 17, t, (big)value) < 0) return -1;
    return fold_counter(f, t, f->counter_names[kind], (big)value);
}

static int spark_counters(Fold *f, long cap, uint64_t t, const uint64_t *a) {
    if (cap < 0) return 0;
    Cap *c = &f->caps[cap];
    int had = c->has_counters;
    uint64_t since = had ? c->counter_time : 0;
    uint64_t prev[7];
    memcpy(prev, c->counters, sizeof prev);
    memcpy(c->counters, a, sizeof c->counters);
    c->has_counters = 1;
    c->counter_time = t;
    if (f->binned) {
        for (int i = 0; i < 6; i++) {
            big delta = (big)a[i] - (had ? (big)prev[i] : 0);
            if (delta > 0 && grid_spread(&f->grid, ((uint64_t)K_COUNTER << 17) | (uint64_t)i, since, t, delta) < 0)
                return -1;
        }
        if (grid_peak(&f->grid, ((uint64_t)K_POOL << 17) | (uint64_t)cap, t, (big)a[6]) < 0) return -1;
    }
    if (PyList_GET_SIZE(f->sinks)) {
        PyObject *name = PyUnicode_FromFormat("spark pool cap %ld", cap);
        if (name == NULL) return -1;
        int rc = fold_counter(f, t, name, (big)a[6]);
        Py_DECREF(name);
        return rc;
    }
    return 0;
}

/* TimelineBuilder.add for one held event (count, first and last included). */
static int fold_one(Fold *f, Rec *r) {
    uint64_t t = r->t;
    f->count++;
    if (t > f->last) f->last = t;
    else if (!f->has_first || t < f->first) { f->has_first = 1; f->first = t; }
    if (!f->has_first) { f->has_first = 1; f->first = t; }
    int etype = r->type;
    long cap = r->cap;
    uint64_t a[9] = {0};
    int nargs = r->nargs;
    PyObject *label = NULL;
    int act = etype < f->ntypes ? f->act[etype] : A_NONE;
    if (r->obj != NULL) {
        PyObject *args = PyTuple_GET_ITEM(r->obj, 3);
        nargs = (int)PyTuple_GET_SIZE(args);
        if (act != A_NONE && act != A_LABEL) {
            for (int i = 0; i < nargs && i < 9; i++) {
                a[i] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(args, i));
                if (PyErr_Occurred()) return -1;
            }
        } else if (act == A_LABEL && nargs >= 2) {
            a[0] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(args, 0));
            if (PyErr_Occurred()) return -1;
            label = PyTuple_GET_ITEM(args, 1);
        }
    } else {
        memcpy(a, r->a, sizeof a);
    }
    if (act == A_NONE || (nargs == 0 && !f->bare[etype])) return 0;
    switch (act) {
    case A_RUN:
        if (cap < 0) return 0;
        {
            Cap *c = fold_cap(f, cap, t);
            if (c->run_open && close_run(f, cap, t, -1) < 0) return -1;
            if (gcs_end(f, cap, t) < 0) return -1;
            c->run_open = 1; c->run_start = t; c->run_thread = (uint32_t)a[0];
            c->runs++;
            Py_ssize_t ti = fold_thread(f, (uint32_t)a[0], 0);
            if (ti == -2) return -1;
            if (ti < 0) return 0;
            Thread *th = &f->threads[ti];
            th->runs++;
            int found = 0;
            for (int i = 0; i < th->ncaps; i++) if (th->caps[i] == cap) { found = 1; break; }
            if (!found) {
                uint16_t *n = PyMem_Realloc(th->caps, (size_t)(th->ncaps + 1) * sizeof(uint16_t));
                if (n == NULL) { PyErr_NoMemory(); return -1; }
                th->caps = n;
                th->caps[th->ncaps++] = (uint16_t)cap;
            }
            if (th->has_last_stop) {
                big w = t > th->ls_at ? (big)(t - th->ls_at) : 0;
                for (int i = 0; i < th->nstops; i++)
                    if (th->stops[i].status == th->ls_status) { th->stops[i].waited += w; break; }
                th->has_last_stop = 0;
            }
        }
        return 0;
    case A_STOP:
        if (cap < 0) return 0;
        {
            Cap *c = fold_cap(f, cap, t);
            uint32_t thread = (uint32_t)a[0];
            int status = (int)a[1];
            if (c->run_open && c->run_thread == thread && close_run(f, cap, t, status) < 0) return -1;
            Py_ssize_t ti = fold_thread(f, thread, 0);
            if (ti == -2) return -1;
            if (ti < 0) return 0;
            Thread *th = &f->threads[ti];
            int i = 0;
            while (i < th->nstops && th->stops[i].status != status) i++;
            if (i == th->nstops) {
                TStop *n = PyMem_Realloc(th->stops, (size_t)(i + 1) * sizeof(TStop));
                if (n == NULL) { PyErr_NoMemory(); return -1; }
                th->stops = n;
                th->stops[i] = (TStop){(uint16_t)status, 0, 0};
                th->nstops++;
            }
            th->stops[i].count++;
            if (status == 5) { th->has_finished = 1; th->finished = t; th->has_last_stop = 0; }
            else { th->has_last_stop = 1; th->ls_status = (uint16_t)status; th->ls_at = t; }
        }
        return 0;
    case A_GC_START:
        if (cap < 0) return 0;
        {
            Cap *c = fold_cap(f, cap, t);
            if (c->run_open && close_run(f, cap, t, -1) < 0) return -1;
            return gcs_start(f, cap, t);
        }
    case A_GC_END:
        return cap < 0 ? 0 : gcs_end(f, cap, t);
    case A_PAR_GC:
        f->request_par = 1;
        return 0;
    case A_GC_STATS:
        return nargs >= 6 ? gcs_stats(f, a) : 0;
    case A_SPARK: {
        int k = f->spark[etype];
        f->spark_events[k]++;
        f->spark_seen = 1;
        if (f->binned) return grid_add(&f->grid, ((uint64_t)K_SPARK << 17) | (uint64_t)k, t, 1);
        return 0;
    }
    case A_SPARK_COUNTERS:
        return spark_counters(f, cap, t, a);
    case A_HEAP:
        return f->reads_heap ? heap_event(f, f->heap[etype], cap, t, a[1]) : 0;
    case A_CREATE: {
        Py_ssize_t ti = fold_thread(f, (uint32_t)a[0], 1);
        if (ti == -2) return -1;
        if (ti >= 0) {
            Thread *th = &f->threads[ti];
            th->has_created = 1; th->created = t; th->created_cap = cap;
        }
        if (cap >= 0) fold_cap(f, cap, t);
        return 0;
    }
    case A_MIGRATE: {
        Py_ssize_t ti = fold_thread(f, (uint32_t)a[0], 0);
        if (ti == -2) return -1;
        if (ti >= 0) f->threads[ti].migrations++;
        return 0;
    }
    case A_LABEL: {
        if (label == NULL) return 0;
        Py_ssize_t ti = fold_thread(f, (uint32_t)a[0], 0);
        if (ti == -2) return -1;
        if (ti < 0) return 0;
        Thread *th = &f->threads[ti];
        Py_ssize_t grown = PyUnicode_GET_LENGTH(label) - (th->label ? PyUnicode_GET_LENGTH(th->label) : 0);
        if (f->t_text + grown > f->max_thread_text) { f->t_texts_dropped++; return 0; }
        f->t_text += grown;
        Py_XSETREF(th->label, Py_NewRef(label));
        return 0;
    }
    case A_CAP_CREATE:
        if (a[0] < 65536) fold_cap(f, (long)a[0], t);
        return 0;
    }
    return 0;
}

static int rec_cmp(const Rec *x, const Rec *y) {
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->ridx != y->ridx) return x->ridx < y->ridx ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int rec_qcmp(const void *x, const void *y) { return rec_cmp(x, y); }

/* A region's events are mostly in time order already (GHC stamps a few before those written
 * ahead of them): an insertion sort, until it has moved events 16 places per event, when a
 * region far from order (a hostile one) is sorted whole. No two events have the same key, so
 * either sort gives the one order. */
static void sort_recs(Rec *r, Py_ssize_t n) {
    Py_ssize_t budget = 16 * n;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (rec_cmp(&r[i - 1], &r[i]) <= 0) continue;
        Rec x = r[i];
        Py_ssize_t j = i;
        while (j > 0 && rec_cmp(&r[j - 1], &x) > 0) { r[j] = r[j - 1]; j--; }
        r[j] = x;
        budget -= i - j;
        if (budget < 0) {
            qsort(r, (size_t)n, sizeof(Rec), rec_qcmp);
            return;
        }
    }
}

static int grow(Rec **arr, Py_ssize_t *cap, Py_ssize_t need) {
    if (need <= *cap) return 0;
    Py_ssize_t nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    Rec *n = PyMem_Realloc(*arr, (size_t)nc * sizeof(Rec));
    if (n == NULL) { PyErr_NoMemory(); return -1; }
    *arr = n; *cap = nc;
    return 0;
}

static void Fold_dealloc(Fold *f) {
    for (Py_ssize_t i = 0; i < f->npool; i++) Py_XDECREF(f->pool[i].obj);
    for (Py_ssize_t i = 0; i < f->nfresh; i++) Py_XDECREF(f->fresh[i].obj);
    PyMem_Free(f->pool); PyMem_Free(f->fresh);
    for (Py_ssize_t i = 0; i < f->nthreads; i++) {
        Py_XDECREF(f->threads[i].label);
        PyMem_Free(f->threads[i].stops);
        PyMem_Free(f->threads[i].caps);
    }
    PyMem_Free(f->threads);
    imap_free(&f->thread_index);
    if (f->caps != NULL) {
        for (long k = 0; k < 65536; k++) if (f->caps[k].share_col) col_unref(f->caps[k].share_col);
    }
    if (f->current) col_unref(f->current);
    if (f->last_closed) col_unref(f->last_closed);
    PyMem_Free(f->caps); PyMem_Free(f->cap_order);
    PyMem_Free(f->gen_keys); PyMem_Free(f->gen_counts);
    PyMem_Free(f->bounds); PyMem_Free(f->hist);
    grid_free(&f->grid);
    PyMem_Free(f->how); PyMem_Free(f->act); PyMem_Free(f->bare); PyMem_Free(f->spark); PyMem_Free(f->heap);
    Py_XDECREF(f->tables_ref); Py_XDECREF(f->formats);
    Py_XDECREF(f->event_cls); Py_XDECREF(f->interval_cls); Py_XDECREF(f->collection_cls);
    Py_XDECREF(f->point_cls); Py_XDECREF(f->decode); Py_XDECREF(f->on_event); Py_XDECREF(f->sinks);
    Py_XDECREF(f->s_run); Py_XDECREF(f->s_gc);
    for (int i = 0; i < 4; i++) { Py_XDECREF(f->heap_kinds[i]); Py_XDECREF(f->counter_names[i]); }
    Py_XDECREF(f->intervals); Py_XDECREF(f->collections); Py_XDECREF(f->heap_points);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

/* Fold(tables, formats, how, act, bare, spark, heap, classes, callbacks, budget)
 *   tables: (sizes, layouts) bytes; formats: the walk's formats; how, act, bare, spark, heap:
 *   bytes per type (T_*, A_*, 0/1, spark kind or 255, heap kind or 255); classes: (Event,
 *   Interval, Collection, HeapPoint); callbacks: (decode(frames, buf, region), on_event(e),
 *   sinks list); budget: (intervals, collections, points, bins, makes_intervals,
 *   makes_collections, reads_heap, max_threads, max_thread_text). */
static int Fold_init(Fold *f, PyObject *args, PyObject *kw) {
    PyObject *tables, *formats, *classes, *callbacks;
    Py_buffer how, act, bare, spark, heap;
    long long bins;
    (void)kw;
    if (f->caps != NULL || f->how != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a fold is made once");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O!O!y*y*y*y*y*O!O!(LLLLpppLL)", &PyTuple_Type, &tables,
                          &PyTuple_Type, &formats, &how, &act, &bare, &spark, &heap,
                          &PyTuple_Type, &classes, &PyTuple_Type, &callbacks,
                          &f->b_intervals, &f->b_collections, &f->b_points, &bins,
                          &f->makes_intervals, &f->makes_collections, &f->reads_heap,
                          &f->max_threads, &f->max_thread_text))
        return -1;
    int rc = -1;
    PyObject *sizes, *layouts;
    if (!PyArg_ParseTuple(tables, "SS", &sizes, &layouts)) goto out;
    f->ntypes = PyBytes_GET_SIZE(sizes) / (Py_ssize_t)sizeof(int32_t);
    if (PyBytes_GET_SIZE(layouts) < f->ntypes * 16 || how.len < f->ntypes || act.len < f->ntypes
        || bare.len < f->ntypes || spark.len < f->ntypes || heap.len < f->ntypes
        || PyTuple_GET_SIZE(formats) < f->ntypes) {
        PyErr_SetString(PyExc_ValueError, "a type table is shorter than the size table");
        goto out;
    }
    f->tables_ref = Py_NewRef(tables);
    f->sizes = (const int32_t *)PyBytes_AS_STRING(sizes);
    f->layouts = (const int32_t *)PyBytes_AS_STRING(layouts);
    f->formats = Py_NewRef(formats);
    size_t nt = (size_t)(f->ntypes ? f->ntypes : 1);
    f->how = PyMem_Malloc(nt); f->act = PyMem_Malloc(nt); f->bare = PyMem_Malloc(nt);
    f->spark = PyMem_Malloc(nt); f->heap = PyMem_Malloc(nt);
    if (!f->how || !f->act || !f->bare || !f->spark || !f->heap) { PyErr_NoMemory(); goto out; }
    memcpy(f->how, how.buf, (size_t)f->ntypes); memcpy(f->act, act.buf, (size_t)f->ntypes);
    memcpy(f->bare, bare.buf, (size_t)f->ntypes);
    memcpy(f->spark, spark.buf, (size_t)f->ntypes); memcpy(f->heap, heap.buf, (size_t)f->ntypes);
    PyObject *sinks;
    if (!PyArg_ParseTuple(classes, "OOOO", &f->event_cls, &f->interval_cls, &f->collection_cls,
                          &f->point_cls)
        || !PyArg_ParseTuple(callbacks, "OOO!", &f->decode, &f->on_event, &PyList_Type, &sinks)) {
        f->event_cls = f->interval_cls = f->collection_cls = f->point_cls = NULL;
        f->decode = f->on_event = NULL;
        goto out;
    }
    Py_INCREF(f->event_cls); Py_INCREF(f->interval_cls); Py_INCREF(f->collection_cls);
    Py_INCREF(f->point_cls); Py_INCREF(f->decode); Py_INCREF(f->on_event);
    static const char *const iv_fields[7] = {"cap", "start", "end", "kind", "thread", "status", "cut"};
    static const char *const col_fields[9] = {"index", "start", "end", "caps", "parallel",
                                              "generation", "copied", "par_threads", "cut"};
    static const char *const point_fields[3] = {"time", "kind", "value"};
    maker_init(&f->m_interval, f->interval_cls, iv_fields, 7);
    maker_init(&f->m_collection, f->collection_cls, col_fields, 9);
    maker_init(&f->m_point, f->point_cls, point_fields, 3);
    f->sinks = Py_NewRef(sinks);
    f->s_run = PyUnicode_InternFromString("run");
    f->s_gc = PyUnicode_InternFromString("gc");
    static const char *kinds[4] = {"size", "live", "blocks", "allocated"};
    static const char *names[4] = {"heap size", "live bytes", "blocks size", "allocated"};
    for (int i = 0; i < 4; i++) {
        f->heap_kinds[i] = PyUnicode_InternFromString(kinds[i]);
        f->counter_names[i] = PyUnicode_InternFromString(names[i]);
        if (!f->heap_kinds[i] || !f->counter_names[i]) goto out;
    }
    f->intervals = PyList_New(0); f->collections = PyList_New(0); f->heap_points = PyList_New(0);
    f->caps = PyMem_Calloc(65536, sizeof(Cap));
    f->cap_order = PyMem_Malloc(65536 * sizeof(uint16_t));
    if (!f->s_run || !f->s_gc || !f->intervals || !f->collections || !f->heap_points) goto out;
    if (!f->caps || !f->cap_order) { PyErr_NoMemory(); goto out; }
    f->binned = bins > 0;
    long long slots = bins - bins % 2;
    f->grid.slots = slots > 2 ? slots : 2;
    f->grid.width = 1000;
    rc = 0;
out:
    PyBuffer_Release(&how); PyBuffer_Release(&act); PyBuffer_Release(&bare);
    PyBuffer_Release(&spark); PyBuffer_Release(&heap);
    return rc;
}

/* Fold.region(buf, ridx, cap, offset, min_time, last, limit) -> None
 * Walks one region's events (file offset ``offset``, all of capability ``cap``, -1 None,
 * earliest time ``min_time``), counts those only counted, holds the rest, then folds every
 * held event earlier than ``limit`` (all of them after the ``last`` region). */
static PyObject *Fold_region(Fold *f, PyObject *args) {
    Py_buffer buf;
    unsigned int ridx;
    long long cap, offset;
    unsigned long long rmin, limit;
    int last;
    if (f->caps == NULL || f->busy) {
        PyErr_SetString(PyExc_RuntimeError, f->caps == NULL ? "the fold is not initialised"
                                                            : "the fold is already folding");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*ILLKpK", &buf, &ridx, &cap, &offset, &rmin, &last, &limit))
        return NULL;
    if (cap < -1 || cap > 0xFFFF) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "a capability is 16 bits (or -1 for none)");
        return NULL;
    }
    f->busy = 1;
    PyObject *frames = NULL, *result = NULL, *capobj = NULL;
    Walk w = {buf.buf, buf.len, f->sizes, f->ntypes, 1};
    const unsigned char *b = w.b;
    Py_ssize_t n = w.n, pos = 0;
    uint32_t idx = 0;
    long long counted = 0;
    uint64_t top = 0;
    int has_top = 0;
    ubig w0 = f->grid.width;
    f->nfresh = 0;
    capobj = cap < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(cap);
    if (capobj == NULL) goto done;
    while (pos + 10 <= n) {
        long etype = be16(b + pos);
        uint64_t t = be64(b + pos + 2);
        Py_ssize_t payload;
        long size;
        if (event_frame(&w, pos, etype, f->layouts, &payload, &size) <= 0) break;
        Py_ssize_t nxt = payload + size;
        int how = f->how[etype];
        if (how == T_COUNT || how == T_SPARK) {
            counted++;
            if (!has_top || t > top) { top = t; has_top = 1; }
            if (how == T_SPARK) {
                int k = f->spark[etype];
                f->spark_seen = 1;
                f->spark_events[k]++;
                if (f->binned && grid_add(&f->grid, ((uint64_t)K_SPARK << 17) | (uint64_t)k,
                                          ((ubig)t / w0) * w0, 1) < 0)
                    goto done;
            }
        } else if (how == T_READ || how == T_PY) {
            if (grow(&f->fresh, &f->freshcap, f->nfresh + 1) < 0) goto done;
            Rec *r = &f->fresh[f->nfresh];
            r->t = t; r->ridx = ridx; r->idx = idx; r->type = (uint16_t)etype; r->cap = (int32_t)cap;
            r->nargs = 0; r->obj = NULL; r->frame = -1;
            PyObject *fmt = PyTuple_GET_ITEM(f->formats, etype);
            int decoded = 0;
            if (how == T_READ && fmt != Py_None && PyBytes_Check(fmt)) {
                const char *letters = PyBytes_AS_STRING(fmt);
                Py_ssize_t k = PyBytes_GET_SIZE(fmt), need = 0;
                for (Py_ssize_t i = 0; i < k; i++)
                    need += letters[i] == 'B' ? 1 : letters[i] == 'H' ? 2 : letters[i] == 'I' ? 4 : 8;
                if (k <= 9 && need <= size) {
                    const unsigned char *p = b + payload;
                    for (Py_ssize_t i = 0; i < k; i++) {
                        switch (letters[i]) {
                        case 'B': r->a[i] = p[0]; p += 1; break;
                        case 'H': r->a[i] = be16(p); p += 2; break;
                        case 'I': r->a[i] = be32(p); p += 4; break;
                        default: r->a[i] = be64(p); p += 8; break;
                        }
                    }
                    r->nargs = (uint8_t)k;
                    decoded = 1;
                }
            }
            if (!decoded) {
                /* Python decodes it: as the walk would hand it back (an event where the
                 * payload is plain, else a frame for events_of). */
                if (frames == NULL && (frames = PyList_New(0)) == NULL) goto done;
                PyObject *item = NULL;
                if (fmt != Py_None && PyBytes_Check(fmt)) {
                    PyObject *a = decode_plain(b + payload, size, fmt);
                    if (a == NULL && PyErr_Occurred()) goto done;
                    if (a != NULL) {
                        item = PyObject_CallFunction(f->event_cls, "KlONL", (unsigned long long)t, etype,
                                                     capobj, a, offset + pos);
                        if (item == NULL) goto done;
                    }
                }
                if (item == NULL) item = Py_BuildValue("(nlKnlL)", pos, etype, (unsigned long long)t, payload, size, cap);
                if (item == NULL) goto done;
                r->frame = (int32_t)PyList_GET_SIZE(frames);
                int rc = PyList_Append(frames, item);
                Py_DECREF(item);
                if (rc < 0) goto done;
            }
            f->nfresh++;
        }
        idx++;
        pos = nxt;
    }
    if (counted) {
        f->count += counted;
        if (!f->has_first || rmin < f->first) { f->has_first = 1; f->first = rmin; }
        if (top > f->last) f->last = top;
    }
    if (frames != NULL) {
        PyObject *r = PyObject_CallFunction(f->decode, "OOOL", frames, buf.obj, capobj, offset);
        if (r == NULL) goto done;
        Py_DECREF(r);
        /* events_of decodes in place: the list now holds the events */
        for (Py_ssize_t i = 0; i < f->nfresh; i++) {
            Rec *rec = &f->fresh[i];
            if (rec->frame < 0) continue;
            Py_ssize_t at = rec->frame;
            PyObject *e = at < PyList_GET_SIZE(frames) ? PyList_GET_ITEM(frames, at) : NULL;
            if (e == NULL || !PyTuple_Check(e) || PyTuple_GET_SIZE(e) < 5
                || !PyTuple_Check(PyTuple_GET_ITEM(e, 3))) {
                PyErr_SetString(PyExc_TypeError, "decode must make events of the frames");
                goto done;
            }
            rec->obj = Py_NewRef(e);
        }
    }
    /* the region's events in key order, merged with the held ones */
    sort_recs(f->fresh, f->nfresh);
    if (f->nfresh && f->npool == 0) {
        /* nothing held: the region's events are the pool */
        Rec *tmp = f->pool; Py_ssize_t tcap = f->poolcap;
        f->pool = f->fresh; f->poolcap = f->freshcap;
        f->fresh = tmp; f->freshcap = tcap;
        f->npool = f->nfresh;
        f->nfresh = 0;
    } else if (f->nfresh) {
        if (grow(&f->pool, &f->poolcap, f->npool + f->nfresh) < 0) goto done;
        Py_ssize_t i = f->npool - 1, j = f->nfresh - 1, k = f->npool + f->nfresh - 1;
        while (j >= 0) {
            if (i >= 0 && rec_cmp(&f->pool[i], &f->fresh[j]) > 0) f->pool[k--] = f->pool[i--];
            else f->pool[k--] = f->fresh[j--];
        }
        f->npool += f->nfresh;
        f->nfresh = 0;
    }
    Py_ssize_t cut = 0;
    while (cut < f->npool && (last || f->pool[cut].t < limit)) {
        Rec *r = &f->pool[cut];
        int rc = fold_one(f, r);
        cut++;
        if (rc == 0 && r->obj != NULL) {
            PyObject *res = PyObject_CallOneArg(f->on_event, r->obj);
            if (res == NULL) rc = -1;
            Py_XDECREF(res);
        }
        Py_CLEAR(r->obj);
        if (rc < 0) {
            memmove(f->pool, f->pool + cut, (size_t)(f->npool - cut) * sizeof(Rec));
            f->npool -= cut;
            goto done;
        }
    }
    if (cut) {
        memmove(f->pool, f->pool + cut, (size_t)(f->npool - cut) * sizeof(Rec));
        f->npool -= cut;
    }
    result = Py_NewRef(Py_None);
done:
    if (result == NULL) {
        for (Py_ssize_t i = 0; i < f->nfresh; i++) Py_CLEAR(f->fresh[i].obj);
        f->nfresh = 0;
    }
    Py_XDECREF(frames);
    Py_XDECREF(capobj);
    PyBuffer_Release(&buf);
    f->busy = 0;
    return result;
}

static PyObject *col_py(Col *c) {
    if (c == NULL) return Py_NewRef(Py_None);
    if (c->py == NULL) {
        PyObject *caps = PyList_New(c->ncaps);
        if (caps == NULL) return NULL;
        for (int i = 0; i < c->ncaps; i++) PyList_SET_ITEM(caps, i, PyLong_FromLong(c->caps[i]));
        c->py = Py_BuildValue("(LKKNlOONNN)", c->index, (unsigned long long)c->start,
                              (unsigned long long)c->end, caps, c->open,
                              c->par ? Py_True : Py_False, c->closed ? Py_True : Py_False,
                              opt_u64(c->has_gen, c->gen), opt_u64(c->has_gen, c->copied),
                              opt_u64(c->has_gen, c->threads));
        if (c->py == NULL) return NULL;
    }
    return Py_NewRef(c->py);
}

#define SET(d, k, v) do { PyObject *v_ = (v); \
        if (v_ == NULL || PyDict_SetItemString(d, k, v_) < 0) { Py_XDECREF(v_); goto fail; } \
        Py_DECREF(v_); } while (0)

/* Fold.state() -> dict: everything the Python builder needs to go on (see build.py's
 * _adopt); the fold is spent. */
static PyObject *Fold_state(Fold *f, PyObject *noargs) {
    (void)noargs;
    if (f->caps == NULL || f->busy) {
        PyErr_SetString(PyExc_RuntimeError, f->caps == NULL ? "the fold is not initialised"
                                                            : "the fold is folding");
        return NULL;
    }
    if (f->npool) {
        PyErr_SetString(PyExc_RuntimeError, "events are still held: the last region was not given");
        return NULL;
    }
    PyObject *d = PyDict_New(), *lst = NULL;
    if (d == NULL) return NULL;
    SET(d, "count", PyLong_FromLongLong(f->count));
    SET(d, "first", opt_u64(f->has_first, f->first));
    SET(d, "last", PyLong_FromUnsignedLongLong(f->last));
    lst = PyList_New(0);
    if (lst == NULL) goto fail;
    for (int i = 0; i < f->ncaps; i++) {
        int k = f->cap_order[i];
        Cap *c = &f->caps[k];
        PyObject *run = c->run_open ? Py_BuildValue("(KI)", (unsigned long long)c->run_start, c->run_thread)
                                    : Py_NewRef(Py_None);
        PyObject *row = Py_BuildValue("(iKNNLN)", k, (unsigned long long)c->start, big_py(c->mutator),
                                      big_py(c->gc), c->runs, run);
        if (row == NULL || PyList_Append(lst, row) < 0) { Py_XDECREF(row); goto fail; }
        Py_DECREF(row);
    }
    SET(d, "caps", lst);
    lst = PyList_New(0);
    if (lst == NULL) goto fail;
    for (Py_ssize_t i = 0; i < f->nthreads; i++) {
        Thread *th = &f->threads[i];
        PyObject *stops = PyList_New(th->nstops);
        if (stops == NULL) goto fail;
        for (int j = 0; j < th->nstops; j++)
            PyList_SET_ITEM(stops, j, Py_BuildValue("(iLN)", th->stops[j].status, th->stops[j].count,
                                                    big_py(th->stops[j].waited)));
        PyObject *caps = PyList_New(th->ncaps);
        if (caps == NULL) { Py_DECREF(stops); goto fail; }
        for (int j = 0; j < th->ncaps; j++) PyList_SET_ITEM(caps, j, PyLong_FromLong(th->caps[j]));
        PyObject *ls = th->has_last_stop ? Py_BuildValue("(iK)", th->ls_status, (unsigned long long)th->ls_at)
                                         : Py_NewRef(Py_None);
        PyObject *row = Py_BuildValue(
            "(kONNNLNNLNN)", (unsigned long)th->id, th->label ? th->label : Py_None,
            opt_u64(th->has_created, th->created),
            th->created_cap >= 0 ? PyLong_FromLong(th->created_cap) : Py_NewRef(Py_None),
            big_py(th->run_time), th->runs, stops, ls, th->migrations, caps,
            opt_u64(th->has_finished, th->finished));
        if (row == NULL || PyList_Append(lst, row) < 0) { Py_XDECREF(row); goto fail; }
        Py_DECREF(row);
    }
    SET(d, "threads", lst);
    lst = NULL;
    SET(d, "thread_budget", Py_BuildValue("(LLLL)", f->t_kept, f->t_text, f->t_dropped, f->t_texts_dropped));
    SET(d, "intervals", Py_NewRef(f->intervals));
    SET(d, "collections", Py_NewRef(f->collections));
    SET(d, "heap", Py_NewRef(f->heap_points));
    SET(d, "unmade", Py_BuildValue("(LN)", f->unmade, opt_u64(f->has_unmade_from, f->unmade_from)));
    SET(d, "dropped", Py_BuildValue("(LLL)", f->drop_intervals, f->drop_collections, f->drop_points));
    SET(d, "exact_until", opt_u64(f->has_exact, f->exact_until));
    SET(d, "spark_events", Py_BuildValue("(LLLLLL)", f->spark_events[0], f->spark_events[1],
                                         f->spark_events[2], f->spark_events[3], f->spark_events[4],
                                         f->spark_events[5]));
    SET(d, "spark_seen", PyBool_FromLong(f->spark_seen));
    /* per capability: allocation, spark counters, collections, open GC shares */
    {
        PyObject *alloc = PyList_New(0), *counters = PyList_New(0), *per_cap = PyList_New(0), *shares = PyList_New(0);
        if (!alloc || !counters || !per_cap || !shares) {
            Py_XDECREF(alloc); Py_XDECREF(counters); Py_XDECREF(per_cap); Py_XDECREF(shares);
            goto fail;
        }
        PyDict_SetItemString(d, "allocated", alloc);
        PyDict_SetItemString(d, "counters", counters);
        PyDict_SetItemString(d, "per_cap", per_cap);
        PyDict_SetItemString(d, "shares", shares);
        Py_DECREF(alloc); Py_DECREF(counters); Py_DECREF(per_cap); Py_DECREF(shares);
        if (f->has_alloc_none) {
            PyObject *row = Py_BuildValue("(OKK)", Py_None, (unsigned long long)f->alloc_none_t,
                                          (unsigned long long)f->alloc_none_v);
            if (row == NULL || PyList_Append(alloc, row) < 0) { Py_XDECREF(row); goto fail; }
            Py_DECREF(row);
        }
        for (long k = 0; k < 65536; k++) {
            Cap *c = &f->caps[k];
            PyObject *row = NULL;
            if (c->has_alloc) {
                row = Py_BuildValue("(lKK)", k, (unsigned long long)c->alloc_t, (unsigned long long)c->alloc_v);
                if (row == NULL || PyList_Append(alloc, row) < 0) { Py_XDECREF(row); goto fail; }
                Py_CLEAR(row);
            }
            if (c->has_counters) {
                row = Py_BuildValue("(lK(KKKKKKK))", k, (unsigned long long)c->counter_time,
                                    c->counters[0], c->counters[1], c->counters[2], c->counters[3],
                                    c->counters[4], c->counters[5], c->counters[6]);
                if (row == NULL || PyList_Append(counters, row) < 0) { Py_XDECREF(row); goto fail; }
                Py_CLEAR(row);
            }
            if (c->has_per_cap) {
                row = Py_BuildValue("(lL)", k, c->per_cap);
                if (row == NULL || PyList_Append(per_cap, row) < 0) { Py_XDECREF(row); goto fail; }
                Py_CLEAR(row);
            }
            if (c->share_open) {
                row = Py_BuildValue("(lKN)", k, (unsigned long long)c->share_start, col_py(c->share_col));
                if (row == NULL || PyList_Append(shares, row) < 0) { Py_XDECREF(row); goto fail; }
                Py_CLEAR(row);
            }
        }
    }
    SET(d, "current", col_py(f->current));
    SET(d, "last_closed", col_py(f->last_closed));
    {
        PyObject *gens = PyList_New(f->ngens);
        if (gens == NULL) goto fail;
        for (int i = 0; i < f->ngens; i++)
            PyList_SET_ITEM(gens, i, Py_BuildValue("(KL)", (unsigned long long)f->gen_keys[i], f->gen_counts[i]));
        SET(d, "gc", Py_BuildValue("(LNNNNLNO)", f->gc_count, opt_u64(f->has_first_start, f->first_start),
                                   big_py(f->gc_total), big_py(f->gc_longest), big_py(f->gc_copied),
                                   f->gc_parallel, gens, f->request_par ? Py_True : Py_False));
    }
    {
        PyObject *series = PyList_New(0);
        if (series == NULL) goto fail;
        PyDict_SetItemString(d, "series", series);
        Py_DECREF(series);
        for (Py_ssize_t k = 0; k < f->grid.n; k++) {
            Series *s = &f->grid.s[k];
            PyObject *arr = PyList_New(f->grid.slots);
            if (arr == NULL) goto fail;
            for (Py_ssize_t i = 0; i < f->grid.slots; i++) {
                PyObject *v = big_py(s->arr[i]);
                if (v == NULL) { Py_DECREF(arr); goto fail; }
                PyList_SET_ITEM(arr, i, v);
            }
            PyObject *row = Py_BuildValue("(iiiN)", (int)(s->key >> 17), (int)(s->key & 0x1FFFF), s->is_max, arr);
            if (row == NULL || PyList_Append(series, row) < 0) { Py_XDECREF(row); goto fail; }
            Py_DECREF(row);
        }
        SET(d, "grid", Py_BuildValue("(NN)", big_py((big)f->grid.width), big_py((big)f->grid.top)));
    }
    return d;
fail:
    Py_XDECREF(lst);
    Py_DECREF(d);
    return NULL;
}
#undef SET

/* Fold.pause_bounds(bounds): count each collection by the first bound (seconds) its pause is
 * at most, the last count past them all (live's histogram; figures() hands it back). */
static PyObject *Fold_pause_bounds(Fold *f, PyObject *arg) {
    if (f->caps == NULL || f->busy || f->gc_count) {
        PyErr_SetString(PyExc_RuntimeError, "bounds are set on a new fold");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(arg, "bounds are a sequence of seconds");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    double *b = PyMem_Calloc((size_t)n + 1, sizeof(double));
    long long *h = PyMem_Calloc((size_t)n + 1, sizeof(long long));
    if (b == NULL || h == NULL) { PyMem_Free(b); PyMem_Free(h); Py_DECREF(seq); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        b[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred()) { PyMem_Free(b); PyMem_Free(h); Py_DECREF(seq); return NULL; }
    }
    Py_DECREF(seq);
    PyMem_Free(f->bounds); PyMem_Free(f->hist);
    f->bounds = b; f->hist = h; f->nbounds = (int)n;
    Py_RETURN_NONE;
}

/* The first used bins of a grid series (its default where it has none). */
static PyObject *grid_list(Grid *g, uint64_t key, Py_ssize_t used, int is_max) {
    int32_t at = imap_get(&g->index, key);
    PyObject *out = PyList_New(used);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < used; i++) {
        PyObject *v = at >= 0 ? big_py(g->s[at].arr[i]) : PyLong_FromLong(is_max ? -1 : 0);
        if (v == NULL) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

/* Fold.figures() -> (count, newest time, collections, pause total, longest, pause counts, bin width, bins
 * used, caps [(cap, run bins, gc bins)], heap size bins, live bins, newest (t, value) of each
 * heap kind or None): what the events folded so far make, for a view that reads it as it
 * goes (timeline/incremental.py), without a record made. */
static PyObject *Fold_figures(Fold *f, PyObject *noargs) {
    (void)noargs;
    if (f->caps == NULL || f->busy) {
        PyErr_SetString(PyExc_RuntimeError, f->caps == NULL ? "the fold is not initialised"
                                                            : "the fold is folding");
        return NULL;
    }
    Grid *g = &f->grid;
    Py_ssize_t used = (Py_ssize_t)(g->top / g->width) + 1;
    if (used > g->slots) used = g->slots;
    PyObject *hist = PyList_New(f->nbounds ? f->nbounds + 1 : 0);
    PyObject *caps = PyList_New(0), *latest = PyTuple_New(4);
    PyObject *size = grid_list(g, (uint64_t)K_SIZE << 17, used, 1);
    PyObject *live = grid_list(g, (uint64_t)K_LIVE << 17, used, 1);
    if (!hist || !caps || !latest || !size || !live) goto fail;
    for (int i = 0; f->nbounds && i <= f->nbounds; i++) {
        PyObject *v = PyLong_FromLongLong(f->hist[i]);
        if (v == NULL) goto fail;
        PyList_SET_ITEM(hist, i, v);
    }
    for (int i = 0; i < f->ncaps; i++) {
        int k = f->cap_order[i];
        PyObject *row = Py_BuildValue(
            "(iNN)", k, grid_list(g, ((uint64_t)K_RUN << 17) | (uint64_t)k, used, 0),
            grid_list(g, ((uint64_t)K_GC << 17) | (uint64_t)k, used, 0));
        if (row == NULL || PyList_Append(caps, row) < 0) { Py_XDECREF(row); goto fail; }
        Py_DECREF(row);
    }
    for (int i = 0; i < 4; i++) {
        PyObject *v = f->has_heap_last[i]
            ? Py_BuildValue("(KK)", (unsigned long long)f->heap_last_t[i], (unsigned long long)f->heap_last_v[i])
            : Py_NewRef(Py_None);
        if (v == NULL) goto fail;
        PyTuple_SET_ITEM(latest, i, v);
    }
    return Py_BuildValue("(LKLNNNNnNNNN)", f->count, (unsigned long long)f->last, f->gc_count,
                         big_py(f->gc_total), big_py(f->gc_longest), hist, big_py((big)g->width),
                         used, caps, size, live, latest);
fail:
    Py_XDECREF(hist); Py_XDECREF(caps); Py_XDECREF(latest); Py_XDECREF(size); Py_XDECREF(live);
    return NULL;
}

/* Fold.held() -> the number of events held for time order; Fold.held_time(i) the time of the
 * i-th of them in order (a caller bounding what is held picks a time to let out up to). */
static PyObject *Fold_held(Fold *f, PyObject *noargs) {
    (void)noargs;
    return PyLong_FromSsize_t(f->npool);
}

static PyObject *Fold_held_time(Fold *f, PyObject *arg) {
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= f->npool) {
        PyErr_SetString(PyExc_IndexError, "no such held event");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(f->pool[i].t);
}

static PyMethodDef Fold_methods[] = {
    {"pause_bounds", (PyCFunction)Fold_pause_bounds, METH_O,
     "pause_bounds(bounds): count collections by pause (seconds), for figures()"},
    {"figures", (PyCFunction)Fold_figures, METH_NOARGS,
     "figures() -> the running figures (see the comment above Fold_figures)"},
    {"held", (PyCFunction)Fold_held, METH_NOARGS, "held() -> events held for time order"},
    {"held_time", (PyCFunction)Fold_held_time, METH_O, "held_time(i) -> the i-th held event's time"},
    {"region", (PyCFunction)Fold_region, METH_VARARGS,
     "region(buf, ridx, cap, offset, min_time, last, limit): fold one region's events"},
    {"state", (PyCFunction)Fold_state, METH_NOARGS, "state() -> dict: what the builder goes on with"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FoldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "halvm_prof._elscan.Fold",
    .tp_basicsize = sizeof(Fold),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The compiled fold of the runtime timeline (halvm_prof/timeline/build.py's twin).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Fold_init,
    .tp_dealloc = (destructor)Fold_dealloc,
    .tp_methods = Fold_methods,
};

/* -- the report page's rows (render/timeline_page.py _intervals, _collections) ------------- */

/* page_rows(kind, records, index, until) -> str | None
 *
 * The JSON text json.dumps(separators=(",", ":")) writes for the page's rows of records
 * (kind 0: intervals, [cap index, start s, end s, 0 run / 1 GC, thread or -1, cut, status or
 * -1]; kind 1: collections, [start s, end s, generation or -1, copied or 0, caps, parallel,
 * cut]), leaving out those starting at or after until (None: none). None where any record is
 * not the common case the Python rows' fast path takes (int times in [0, EXACT_NS), start <=
 * end, plain ints and booleans): the caller then makes the rows in Python. Seconds are written
 * from the ns as repr(ns / 1e9) writes them: below 2**23 s the float nearest ns / 10**9 has
 * that decimal as its shortest repr (timeline_page._EXACT), so no float is formatted. */
#define EXACT_NS (8388608LL * 1000000000LL)

typedef struct { char *p; Py_ssize_t len, cap; } Text;

static int text_room(Text *t, Py_ssize_t more) {
    if (t->len + more <= t->cap) return 0;
    Py_ssize_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more) cap *= 2;
    char *p = PyMem_Realloc(t->p, (size_t)cap);
    if (p == NULL) { PyErr_NoMemory(); return -1; }
    t->p = p; t->cap = cap;
    return 0;
}

static void put_int(Text *t, long long v) {
    char d[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do { d[k++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t->p[t->len++] = '-';
    while (k) t->p[t->len++] = d[--k];
}

/* ns (0 <= ns < EXACT_NS) in seconds as repr() writes the float: 0.0, 1.5, 0.000123456,
 * 1.2345e-05 (below 1e-4 repr uses an exponent of at least two digits). */
static void put_seconds(Text *t, long long ns) {
    char *p = t->p + t->len;
    if (ns == 0) { memcpy(p, "0.0", 3); t->len += 3; return; }
    if (ns < 100000) {
        char d[8]; int k = 0;
        for (long long v = ns; v > 0; v /= 10) d[k++] = (char)('0' + v % 10);
        int n = 0; /* digits after stripping trailing zeros, most significant first */
        char s[8];
        for (int i = k - 1; i >= 0; i--) s[n++] = d[i];
        while (n > 1 && s[n - 1] == '0') n--;
        *p++ = s[0];
        if (n > 1) { *p++ = '.'; memcpy(p, s + 1, (size_t)(n - 1)); p += n - 1; }
        int e = 9 - (k - 1);
        *p++ = 'e'; *p++ = '-'; *p++ = (char)('0' + e / 10); *p++ = (char)('0' + e % 10);
        t->len = p - t->p;
        return;
    }
    put_int(t, ns / 1000000000LL);
    t->p[t->len++] = '.';
    p = t->p + t->len;
    long long fr = ns % 1000000000LL;
    if (fr == 0) { *p = '0'; t->len += 1; return; }
    char f[9];
    for (int i = 8; i >= 0; i--) { f[i] = (char)('0' + fr % 10); fr /= 10; }
    int n = 9;
    while (f[n - 1] == '0') n--;
    memcpy(p, f, (size_t)n);
    t->len += n;
}

/* A plain int's value; 0 (with *ok cleared) for anything else or one past 64 bits. */
static long long plain_int(PyObject *o, int *ok) {
    if (o == NULL || !PyLong_CheckExact(o)) { *ok = 0; return 0; }
    int over = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &over);
    if (over || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); *ok = 0; return 0; }
    return v;
}

static long long flag(PyObject *o, int *ok) {
    if (o == Py_True) return 1;
    if (o == Py_False) return 0;
    *ok = 0;
    return 0;
}

static long long int_or(PyObject *o, long long none, int *ok) {
    return o == Py_None ? none : plain_int(o, ok);
}

static const char *const INTERVAL_FIELDS[] = {"cap", "start", "end", "kind", "thread", "status", "cut"};
static const char *const COLLECTION_FIELDS[] = {"start", "end", "generation", "copied", "caps", "parallel", "cut"};

static PyObject *page_rows(PyObject *Py_UNUSED(self), PyObject *args) {
    int kind;
    PyObject *records, *index, *until_obj;
    if (!PyArg_ParseTuple(args, "iOOO", &kind, &records, &index, &until_obj)) return NULL;
    if (kind != 0 && kind != 1) { PyErr_SetString(PyExc_ValueError, "kind is 0 or 1"); return NULL; }
    if (kind == 0 && !PyDict_CheckExact(index)) { PyErr_SetString(PyExc_TypeError, "index is a dict"); return NULL; }
    int ok = 1, has_until = until_obj != Py_None;
    long long until = has_until ? plain_int(until_obj, &ok) : 0;
    if (!ok) Py_RETURN_NONE;
    PyObject *seq = PySequence_Fast(records, "records is a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Maker m = {NULL, 0, {0}};
    if (n > 0 && maker_init(&m, (PyObject *)Py_TYPE(items[0]), kind == 0 ? INTERVAL_FIELDS : COLLECTION_FIELDS, 7) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    Text t = {NULL, 0, 0};
    /* A row: 7 numbers of at most 21 characters, 8 separators and brackets. */
    const Py_ssize_t ROW = 7 * 21 + 8 + 1;
    if (text_room(&t, 2) < 0) { Py_DECREF(seq); return NULL; }
    t.p[t.len++] = '[';
    int first = 1;
    for (Py_ssize_t r = 0; r < n && ok; r++) {
        PyObject *o = items[r];
        if (m.nfields != 7 || Py_TYPE(o) != m.cls) { ok = 0; break; }
        PyObject *v[7];
        for (int i = 0; i < 7; i++) v[i] = *(PyObject **)((char *)o + m.offset[i]);
        PyObject *start_o = kind == 0 ? v[1] : v[0], *end_o = kind == 0 ? v[2] : v[1];
        long long start = plain_int(start_o, &ok), end = plain_int(end_o, &ok);
        if (!ok || !(0 <= start && start <= end && end < EXACT_NS)) { ok = 0; break; }
        if (has_until && start >= until) continue;
        if (text_room(&t, ROW) < 0) { PyMem_Free(t.p); Py_DECREF(seq); return NULL; }
        if (!first) t.p[t.len++] = ',';
        first = 0;
        t.p[t.len++] = '[';
        long long a[5];
        if (kind == 0) {
            PyObject *at = v[0] == NULL ? NULL : PyDict_GetItemWithError(index, v[0]);
            if (at == NULL) { PyErr_Clear(); ok = 0; break; }
            long long cap = plain_int(at, &ok);
            int run;
            if (v[3] == NULL || !PyUnicode_CheckExact(v[3])) { ok = 0; break; }
            run = PyUnicode_CompareWithASCIIString(v[3], "run") == 0;
            put_int(&t, cap); t.p[t.len++] = ',';
            put_seconds(&t, start); t.p[t.len++] = ',';
            put_seconds(&t, end); t.p[t.len++] = ',';
            a[0] = run ? 0 : 1;
            a[1] = int_or(v[4], -1, &ok);
            a[2] = flag(v[6], &ok);
            a[3] = int_or(v[5], -1, &ok);
            for (int i = 0; i < 4; i++) { put_int(&t, a[i]); t.p[t.len++] = i < 3 ? ',' : ']'; }
        } else {
            if (v[4] == NULL || !PyTuple_CheckExact(v[4])) { ok = 0; break; }
            put_seconds(&t, start); t.p[t.len++] = ',';
            put_seconds(&t, end); t.p[t.len++] = ',';
            a[0] = int_or(v[2], -1, &ok);
            a[1] = int_or(v[3], 0, &ok);
            a[2] = PyTuple_GET_SIZE(v[4]);
            a[3] = flag(v[5], &ok);
            a[4] = flag(v[6], &ok);
            for (int i = 0; i < 5; i++) { put_int(&t, a[i]); t.p[t.len++] = i < 4 ? ',' : ']'; }
        }
    }
    Py_DECREF(seq);
    if (!ok) { PyMem_Free(t.p); Py_RETURN_NONE; }
    if (text_room(&t, 1) < 0) { PyMem_Free(t.p); return NULL; }
    t.p[t.len++] = ']';
    PyObject *out = PyUnicode_DecodeASCII(t.p, t.len, NULL);
    PyMem_Free(t.p);
    return out;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(buf, sizes, layouts, want, width, base, state, final, decode=None)"
     " -> (frames, counts, counted, top, regions, state, pos, stop)"},
    {"page_rows", page_rows, METH_VARARGS,
     "page_rows(kind, records, index, until) -> str | None: the report page's rows as JSON"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef elscan_module = {
    PyModuleDef_HEAD_INIT, "halvm_prof._elscan",
    "The compiled eventlog walk and timeline fold (halvm_prof/formats/eventlog/walk.py and "
    "halvm_prof/timeline/build.py are their Python twins).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__elscan(void) {
    if (PyType_Ready(&FoldType) < 0) return NULL;
    PyObject *m = PyModule_Create(&elscan_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Fold", (PyObject *)&FoldType) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
