/* Optional compiled fast path for heap profile (.hp) statistics.
 *
 * `Scanner.feed()` reads a .hp file's lines and keeps, per band, the same running sums as
 * halvm_prof.folds.heap_stats.HeapAccumulator, in the same floating-point order, so both give
 * identical figures (tests/unit/test_hpscan.py compares them on every fixture and cut).
 * It accepts only the plain form GHC writes: any other line makes feed() return -1, and the
 * caller then reads the whole file with the Python reader, which gives the precise error or
 * handles the rare form. Memory grows with the number of bands, never with the file.
 *
 * Why C: summing 2 million band lines in Python takes over a second; this takes a tenth of that.
 *
 * Made with censuses=True, it also hands out each census it completes (`take()`: its time, its
 * bands' ids and values, as halvm_prof.formats.hp.HpParser would give them; `names(start)`
 * names the ids), which is how `live` reads a growing .hp
 * (halvm_prof.folds.heap_scan.CompiledHpParser).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

typedef unsigned __int128 u128;

/* Longer values are left to the Python reader: 18 digits fit in 63 bits, so v*v fits in 126. */
#define MAX_DIGITS 18
/* A band whose sum of squares reaches 2^127 is left to the Python reader too: below it, one more
 * square (< 2^126) cannot overflow 128 bits. */
#define SUM_V2_LIMIT ((u128)1 << 127)
#define MAX_TIME_TEXT 63

typedef struct {
    int64_t n_present;
    u128 sum_v;
    u128 sum_v2;
    double sum_tv;
    double integrated;
    int64_t max;
    double max_time; /* the first census time at which max was reached */
    int64_t cur;  /* value in the census being read (duplicates summed, as the reader does) */
    int64_t gen;  /* census that last listed the band */
    size_t name_off;
    size_t name_len;
    uint64_t hash;
} Band;

typedef struct {
    PyObject_HEAD
    Band *bands;
    Py_ssize_t nbands, cap_bands;
    char *names;
    size_t names_len, names_cap;
    Py_ssize_t *table; /* open addressing over band ids, -1 = empty; size a power of two */
    size_t table_cap;
    Py_ssize_t *cur, *prev; /* band ids of the census being read and of the last complete one */
    int64_t *prev_vals;
    Py_ssize_t ncur, nprev, cap_list;
    Py_ssize_t line_in_census;
    Py_ssize_t max_bands; /* names beyond this many are summed in OTHER_BANDS */
    int drop_numbers;     /* a -hc profile: "(N)stack" is band "stack" (formats/stacks.py) */
    Py_ssize_t other;     /* the id of OTHER_BANDS once a name has been folded, else -1 */
    int in_header, in_census, last_empty, partial;
    int held;         /* an empty census is held back: GHC's exit census if it stays last */
    double held_time;
    int64_t gen;
    long long lines, samples, begin_line;
    double census_time, first_time, last_time, sum_t, sum_t2, peak_time;
    u128 peak_total;
    PyObject *marks;  /* list of float */
    PyObject *header; /* list of (keyword bytes, rest bytes) */
    PyObject *out;    /* censuses=True: list of (time, ids, values) not yet taken; else NULL */
} Scanner;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int grow(void **p, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = PyMem_Realloc(*p, (size_t)n * item);
    if (!q) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    *cap = n;
    return 0;
}

static int rehash(Scanner *s, size_t cap) {
    Py_ssize_t *t = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    if (!t) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++) t[i] = -1;
    for (Py_ssize_t id = 0; id < s->nbands; id++) {
        size_t i = (size_t)s->bands[id].hash & (cap - 1);
        while (t[i] != -1) i = (i + 1) & (cap - 1);
        t[i] = id;
    }
    PyMem_Free(s->table);
    s->table = t;
    s->table_cap = cap;
    return 0;
}

static inline int same_name(const Scanner *s, Py_ssize_t id, const char *name, size_t len) {
    const Band *b = &s->bands[id];
    return b->name_len == len && memcmp(s->names + b->name_off, name, len) == 0;
}

#define OTHER_BANDS "(other bands)"

static Py_ssize_t add_band(Scanner *s, const char *name, size_t len, uint64_t h, size_t i);

/* The band id of `name`, added if new; -1 with an exception set when out of memory. A name new
 * when max_bands names are known is folded into OTHER_BANDS, as HpReader does. */
static Py_ssize_t band_id(Scanner *s, const char *name, size_t len) {
    /* GHC lists the bands of consecutive censuses in the same order: try that first. */
    Py_ssize_t k = s->line_in_census;
    if (k < s->nprev && same_name(s, s->prev[k], name, len)) return s->prev[k];
    uint64_t h = hash_bytes(name, len);
    size_t i = (size_t)h & (s->table_cap - 1);
    for (;;) {
        Py_ssize_t id = s->table[i];
        if (id == -1) break;
        if (s->bands[id].hash == h && same_name(s, id, name, len)) return id;
        i = (i + 1) & (s->table_cap - 1);
    }
    if (s->max_bands > 0 && (s->other >= 0 || s->nbands >= s->max_bands)) {
        if (s->other < 0) {
            /* OTHER_BANDS itself may be a known name (then it is not new and was found above
             * when it is this line's name); look it up, or add it past the limit. */
            size_t olen = sizeof(OTHER_BANDS) - 1;
            uint64_t oh = hash_bytes(OTHER_BANDS, olen);
            size_t j = (size_t)oh & (s->table_cap - 1);
            for (;;) {
                Py_ssize_t id = s->table[j];
                if (id == -1) break;
                if (s->bands[id].hash == oh && same_name(s, id, OTHER_BANDS, olen)) {
                    s->other = id;
                    return id;
                }
                j = (j + 1) & (s->table_cap - 1);
            }
            Py_ssize_t id = add_band(s, OTHER_BANDS, olen, oh, j);
            if (id >= 0) s->other = id;
            return id;
        }
        return s->other;
    }
    return add_band(s, name, len, h, i);
}

/* Add `name` (hash h, free table slot i) as a new band. */
static Py_ssize_t add_band(Scanner *s, const char *name, size_t len, uint64_t h, size_t i) {
    if (grow((void **)&s->bands, &s->cap_bands, s->nbands + 1, sizeof(Band)) < 0) return -1;
    if (s->names_len + len > s->names_cap) {
        size_t cap = s->names_cap ? s->names_cap : 4096;
        while (cap < s->names_len + len) cap *= 2;
        char *q = PyMem_Realloc(s->names, cap);
        if (!q) {
            PyErr_NoMemory();
            return -1;
        }
        s->names = q;
        s->names_cap = cap;
    }
    memcpy(s->names + s->names_len, name, len);
    Py_ssize_t id = s->nbands++;
    Band *b = &s->bands[id];
    memset(b, 0, sizeof(Band));
    b->name_off = s->names_len;
    b->name_len = len;
    b->hash = h;
    s->names_len += len;
    s->table[i] = id;
    if ((size_t)s->nbands * 2 > s->table_cap && rehash(s, s->table_cap * 2) < 0) return -1;
    return id;
}

/* Parse [p, e) as a time the way float() would; 0 when it is not in the plain form or not
   finite ("1e400"), which the Python reader refuses. */
static int parse_time(const char *p, const char *e, double *out) {
    size_t n = (size_t)(e - p);
    if (n == 0 || n > MAX_TIME_TEXT) return 0;
    char text[MAX_TIME_TEXT + 1];
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
            return 0;
        text[i] = c;
    }
    text[n] = '\0';
    double v = PyOS_string_to_double(text, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (!isfinite(v)) return 0;
    *out = v;
    return 1;
}

static int starts_with(const char *p, const char *e, const char *prefix, size_t n) {
    return (size_t)(e - p) >= n && memcmp(p, prefix, n) == 0;
}

static int is_blank(const char *p, const char *e) {
    for (; p < e; p++)
        if (!(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f')) return 0;
    return 1;
}

/* HeapAccumulator._add_empty: an empty census held back turned out not to be the last. */
static void add_empty(Scanner *s, double t) {
    double half = (t - s->last_time) / 2;
    for (Py_ssize_t j = 0; j < s->nprev; j++)
        s->bands[s->prev[j]].integrated += half * (double)s->prev_vals[j];
    double u = t - s->first_time;
    s->samples += 1;
    s->last_time = t;
    s->sum_t += u;
    s->sum_t2 += u * u;
    s->nprev = 0;
}

/* The census being completed, as (time, band ids, values) on s->out: a band listed twice in it
 * once, with its values summed, in the order of its first line (as HpParser gives it). */
static int emit_census(Scanner *s) {
    PyObject *ids = PyTuple_New(s->ncur), *vals = PyTuple_New(s->ncur), *t = NULL, *item = NULL;
    if (!ids || !vals) goto fail;
    for (Py_ssize_t j = 0; j < s->ncur; j++) {
        PyObject *id = PyLong_FromSsize_t(s->cur[j]);
        PyObject *v = PyLong_FromLongLong((long long)s->bands[s->cur[j]].cur);
        if (!id || !v) {
            Py_XDECREF(id);
            Py_XDECREF(v);
            goto fail;
        }
        PyTuple_SET_ITEM(ids, j, id);
        PyTuple_SET_ITEM(vals, j, v);
    }
    t = PyFloat_FromDouble(s->census_time);
    if (!t) goto fail;
    item = PyTuple_Pack(3, t, ids, vals);
    if (!item || PyList_Append(s->out, item) < 0) goto fail;
    Py_DECREF(item);
    Py_DECREF(t);
    Py_DECREF(ids);
    Py_DECREF(vals);
    return 0;
fail:
    Py_XDECREF(item);
    Py_XDECREF(t);
    Py_XDECREF(ids);
    Py_XDECREF(vals);
    return -1;
}

/* A census is complete: the same steps, in the same order, as HeapAccumulator.add. */
static int end_census(Scanner *s) {
    double t = s->census_time;
    if (s->out && emit_census(s) < 0) return -1;
    if (s->held) {
        s->held = 0;
        add_empty(s, s->held_time);
    }
    if (s->ncur == 0 && s->samples > 0) {
        s->held = 1;
        s->held_time = t;
        s->last_empty = 1;
        s->in_census = 0;
        return 0;
    }
    int first = s->samples == 0;
    double half = 0.0;
    if (first) {
        s->first_time = t;
    } else {
        half = (t - s->last_time) / 2;
        for (Py_ssize_t j = 0; j < s->nprev; j++)
            s->bands[s->prev[j]].integrated += half * (double)s->prev_vals[j];
    }
    double u = t - s->first_time;
    u128 total = 0;
    for (Py_ssize_t j = 0; j < s->ncur; j++) {
        Band *b = &s->bands[s->cur[j]];
        int64_t v = b->cur;
        double dv = (double)v;
        b->integrated += half * dv;
        b->n_present += 1;
        b->sum_v += (u128)v;
        b->sum_v2 += (u128)v * (u128)v;
        b->sum_tv += u * dv;
        if (v > b->max) {
            b->max = v;
            b->max_time = t;
        } else if (b->n_present == 1) {
            b->max_time = t;
        }
        total += (u128)v;
    }
    if (total > s->peak_total || first) {
        s->peak_total = total;
        s->peak_time = t;
    }
    s->samples += 1;
    s->last_time = t;
    s->sum_t += u;
    s->sum_t2 += u * u;
    Py_ssize_t *swap = s->prev;
    s->prev = s->cur;
    s->cur = swap;
    s->nprev = s->ncur;
    for (Py_ssize_t j = 0; j < s->nprev; j++) s->prev_vals[j] = s->bands[s->prev[j]].cur;
    s->last_empty = s->ncur == 0;
    s->ncur = 0;
    s->in_census = 0;
    return 0;
}

static int grow_lists(Scanner *s, Py_ssize_t need) {
    if (need <= s->cap_list) return 0;
    Py_ssize_t cap = s->cap_list, c2 = s->cap_list, c3 = s->cap_list;
    if (grow((void **)&s->cur, &cap, need, sizeof(Py_ssize_t)) < 0) return -1;
    if (grow((void **)&s->prev, &c2, need, sizeof(Py_ssize_t)) < 0) return -1;
    if (grow((void **)&s->prev_vals, &c3, need, sizeof(int64_t)) < 0) return -1;
    s->cap_list = cap;
    return 0;
}

/* One band line [p, nl): 1 = taken, 0 = not the plain form, -1 = exception. */
static int band_line(Scanner *s, const char *p, const char *e, const char *tab) {
    if (tab == p || tab[-1] == '\r') return 0;
    const char *d = tab + 1;
    size_t n = (size_t)(e - d);
    if (n == 0 || n > MAX_DIGITS) return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)d[i] - '0';
        if (c > 9) return 0;
        v = v * 10 + c;
    }
    if (s->drop_numbers && *p == '(') {
        /* "(" digits ")" and at least one character more, as drop_stack_number takes it */
        const char *q = p + 1;
        while (q < tab && *q >= '0' && *q <= '9') q++;
        if (q > p + 1 && q < tab && *q == ')' && q + 1 < tab) p = q + 1;
    }
    Py_ssize_t id = band_id(s, p, (size_t)(tab - p));
    if (id < 0) return -1;
    s->line_in_census++;
    Band *b = &s->bands[id];
    if (b->sum_v2 >= SUM_V2_LIMIT) return 0;
    if (b->gen == s->gen) {
        if (v > INT64_MAX - b->cur) return 0;
        b->cur += v;
    } else {
        if (grow_lists(s, s->ncur + 1) < 0) return -1;
        b->gen = s->gen;
        b->cur = v;
        s->cur[s->ncur++] = id;
    }
    return 1;
}

static PyObject *Scanner_feed(Scanner *s, PyObject *args) {
    Py_buffer view;
    int final;
    if (!PyArg_ParseTuple(args, "y*p", &view, &final)) return NULL;
    const char *buf = view.buf, *p = buf, *end = buf + view.len;
    Py_ssize_t result = -1;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            if (final) {
                s->partial = 1;
                s->lines++;
                p = end;
            }
            break;
        }
        s->lines++;
        const char *e = nl;
        while (e > p && e[-1] == '\r') e--;
        if (s->in_census) {
            /* The name is everything before the last TAB; the value after it is short. */
            const char *tab = nl;
            while (tab > p && tab[-1] != '\t') tab--;
            tab = tab > p ? tab - 1 : NULL;
            if (tab) {
                int r = band_line(s, p, e, tab);
                if (r < 0) goto error;
                if (r == 0) goto bail;
            } else {
                double t;
                if (!starts_with(p, e, "END_SAMPLE ", 11) || !parse_time(p + 11, e, &t) ||
                    t != s->census_time)
                    goto bail;
                if (end_census(s) < 0) goto error;
            }
        } else if (is_blank(p, nl)) {
            /* the Python reader skips blank lines between censuses */
        } else if (starts_with(p, e, "BEGIN_SAMPLE ", 13)) {
            double t;
            if (!parse_time(p + 13, e, &t)) goto bail;
            s->in_header = 0;
            s->in_census = 1;
            s->begin_line = s->lines;
            s->census_time = t;
            s->gen++;
            s->ncur = 0;
            s->line_in_census = 0;
        } else if (starts_with(p, e, "MARK ", 5)) {
            double t;
            if (!parse_time(p + 5, e, &t)) goto bail;
            PyObject *f = PyFloat_FromDouble(t);
            if (!f || PyList_Append(s->marks, f) < 0) {
                Py_XDECREF(f);
                goto error;
            }
            Py_DECREF(f);
            s->in_header = 0;
        } else if (s->in_header) {
            const char *sp = memchr(p, ' ', (size_t)(e - p));
            const char *kw_end = sp ? sp : e;
            size_t kn = (size_t)(kw_end - p);
            if (!((kn == 3 && !memcmp(p, "JOB", 3)) || (kn == 4 && !memcmp(p, "DATE", 4)) ||
                  (kn == 11 && !memcmp(p, "SAMPLE_UNIT", 11)) ||
                  (kn == 10 && !memcmp(p, "VALUE_UNIT", 10))))
                goto bail;
            const char *rest = sp ? sp + 1 : e;
            PyObject *item = Py_BuildValue("(y#y#)", p, (Py_ssize_t)kn, rest,
                                           (Py_ssize_t)(e - rest));
            if (!item || PyList_Append(s->header, item) < 0) {
                Py_XDECREF(item);
                goto error;
            }
            Py_DECREF(item);
        } else {
            goto bail;
        }
        p = nl + 1;
    }
    result = p - buf;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(result);
bail:
    PyBuffer_Release(&view);
    return PyLong_FromLong(-1);
error:
    PyBuffer_Release(&view);
    return NULL;
}

static PyObject *from_u128(u128 v) {
    if (v <= (u128)UINT64_MAX) return PyLong_FromUnsignedLongLong((unsigned long long)v);
    PyObject *hi = PyLong_FromUnsignedLongLong((unsigned long long)(v >> 64));
    PyObject *lo = PyLong_FromUnsignedLongLong((unsigned long long)v);
    PyObject *shift = PyLong_FromLong(64);
    PyObject *shifted = hi && shift ? PyNumber_Lshift(hi, shift) : NULL;
    PyObject *out = shifted && lo ? PyNumber_Or(shifted, lo) : NULL;
    Py_XDECREF(hi);
    Py_XDECREF(lo);
    Py_XDECREF(shift);
    Py_XDECREF(shifted);
    return out;
}

static PyObject *Scanner_bands(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t id = 0; id < s->nbands; id++) {
        const Band *b = &s->bands[id];
        if (b->n_present == 0) continue; /* seen only in a census cut short */
        PyObject *sum_v = from_u128(b->sum_v), *sum_v2 = from_u128(b->sum_v2);
        PyObject *item = sum_v && sum_v2 ? Py_BuildValue(
            "(y#LOOddLd)", s->names + b->name_off, (Py_ssize_t)b->name_len,
            (long long)b->n_present, sum_v, sum_v2, b->sum_tv, b->integrated,
            (long long)b->max, b->max_time) : NULL;
        Py_XDECREF(sum_v);
        Py_XDECREF(sum_v2);
        if (!item || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(item);
    }
    return out;
}

static PyObject *Scanner_previous(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    PyObject *out = PyList_New(s->nprev);
    if (!out) return NULL;
    for (Py_ssize_t j = 0; j < s->nprev; j++) {
        const Band *b = &s->bands[s->prev[j]];
        PyObject *item = Py_BuildValue("(y#L)", s->names + b->name_off, (Py_ssize_t)b->name_len,
                                       (long long)s->prev_vals[j]);
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, j, item);
    }
    return out;
}

static PyObject *Scanner_take(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    if (!s->out) return PyList_New(0);
    PyObject *fresh = PyList_New(0);
    if (!fresh) return NULL;
    PyObject *out = s->out;
    s->out = fresh;
    return out;
}

static PyObject *Scanner_names(Scanner *s, PyObject *args) {
    Py_ssize_t start = 0;
    if (!PyArg_ParseTuple(args, "|n", &start)) return NULL;
    if (start < 0) start = 0;
    PyObject *out = PyList_New(start < s->nbands ? s->nbands - start : 0);
    if (!out) return NULL;
    for (Py_ssize_t id = start; id < s->nbands; id++) {
        const Band *b = &s->bands[id];
        PyObject *name = PyBytes_FromStringAndSize(s->names + b->name_off, (Py_ssize_t)b->name_len);
        if (!name) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, id - start, name);
    }
    return out;
}

static PyObject *Scanner_state(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    PyObject *peak = from_u128(s->peak_total);
    if (!peak) return NULL;
    return Py_BuildValue(
        "{s:O,s:O,s:L,s:L,s:O,s:L,s:d,s:d,s:d,s:d,s:d,s:N,s:d,s:O,s:O,s:O,s:O,s:N}",
        "in_header", s->in_header ? Py_True : Py_False,
        "folded", s->other >= 0 ? Py_True : Py_False, "lines", s->lines, "samples", s->samples,
        "in_census", s->in_census ? Py_True : Py_False,
        "begin_line", s->begin_line, "census_time", s->census_time, "first_time", s->first_time,
        "last_time", s->last_time, "sum_t", s->sum_t, "sum_t2", s->sum_t2, "peak_total", peak,
        "peak_time", s->peak_time, "last_empty", s->last_empty ? Py_True : Py_False, "partial",
        s->partial ? Py_True : Py_False, "marks", s->marks, "header", s->header, "exit_census",
        s->held ? PyFloat_FromDouble(s->held_time) : Py_NewRef(Py_None));
}

static int Scanner_init(Scanner *s, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"max_bands", "drop_numbers", "censuses", NULL};
    Py_ssize_t max_bands = 0;
    int drop_numbers = 0, censuses = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|npp", kwlist, &max_bands, &drop_numbers,
                                     &censuses))
        return -1;
    s->max_bands = max_bands;
    s->drop_numbers = drop_numbers;
    s->other = -1;
    if (s->marks) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner is already initialised");
        return -1;
    }
    s->marks = PyList_New(0);
    s->header = PyList_New(0);
    if (!s->marks || !s->header) return -1;
    if (censuses && !(s->out = PyList_New(0))) return -1;
    s->in_header = 1;
    return rehash(s, 256);
}

static void Scanner_dealloc(Scanner *s) {
    PyMem_Free(s->bands);
    PyMem_Free(s->names);
    PyMem_Free(s->table);
    PyMem_Free(s->cur);
    PyMem_Free(s->prev);
    PyMem_Free(s->prev_vals);
    Py_XDECREF(s->marks);
    Py_XDECREF(s->header);
    Py_XDECREF(s->out);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMethodDef Scanner_methods[] = {
    {"feed", (PyCFunction)Scanner_feed, METH_VARARGS,
     "feed(data, final) -> bytes of whole lines used, or -1: a line this scanner leaves to the "
     "Python reader."},
    {"bands", (PyCFunction)Scanner_bands, METH_NOARGS,
     "bands() -> [(name, n_present, sum_v, sum_v2, sum_tv, integrated, max, max_time)], first seen first."},
    {"previous", (PyCFunction)Scanner_previous, METH_NOARGS,
     "previous() -> [(name, value)] of the last complete census."},
    {"state", (PyCFunction)Scanner_state, METH_NOARGS, "state() -> dict of the running totals."},
    {"take", (PyCFunction)Scanner_take, METH_NOARGS,
     "take() -> [(time, band ids, values)] of the censuses completed since the last take "
     "(made with censuses=True)."},
    {"names", (PyCFunction)Scanner_names, METH_VARARGS,
     "names(start=0) -> [name] of the band ids from start on."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "halvm_prof._hpscan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Running heap-profile statistics over the bytes of a .hp file.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

static struct PyModuleDef hpscan_module = {
    PyModuleDef_HEAD_INIT, "halvm_prof._hpscan",
    "Compiled fast path for heap profile statistics (see halvm_prof.folds.heap_scan).", -1,
    NULL,
};

PyMODINIT_FUNC PyInit__hpscan(void) {
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&hpscan_module);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
