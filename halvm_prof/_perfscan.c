/* The optional compiled loops of the perf.data reader and flat profile
 * (halvm_prof/perf/scan.py holds the Python twins they must match, result for result).
 *
 * run_length(buf, pos, size, most): how many records from byte pos on are SAMPLE records of
 * exactly size bytes (at most most of them, and only whole ones inside buf).
 *
 * tally(buf, step, ip_word, pid_word, period_word, groups): buf holds whole SAMPLE records of
 * step 64-bit words each (word 0 is the record header). Each record is counted in
 * groups[(header word, pid)] = [{ip: samples}, period sum], pid being the low half of the
 * pid/tid word; period_word < 0 means the event records no period.
 *
 * chain_run(buf, pos, chain_word): the end of the run of whole, well-formed SAMPLE records with
 * a callchain from pos on (pos itself when there is none). chain_word is the word of the
 * callchain's length; its entries follow it, inside the record.
 *
 * tally_chains(buf, ip_word, pid_word, period_word, chain_word, pending, periods): counts such
 * a run in pending[(header word, pid/tid word, ip)][callchain bytes] and adds each record's
 * period to periods[pid].
 *
 * Little endian, as perf writes on the machines we read.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SAMPLE 9

static inline uint64_t le64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static PyObject *run_length(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t pos, size, most;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnn", &buf, &pos, &size, &most)) return NULL;
    const unsigned char *b = buf.buf;
    Py_ssize_t n = 0;
    if (pos >= 0 && size >= 8 && size <= 0xFFFF && most > 0) {
        Py_ssize_t room = (buf.len - pos) / size;
        if (most > room) most = room;
        for (const unsigned char *p = b + pos; n < most; n++, p += size) {
            /* type 9 as a u32, then misc (any), then the u16 size */
            if (p[0] != SAMPLE || p[1] || p[2] || p[3]) break;
            if ((Py_ssize_t)(p[6] | (p[7] << 8)) != size) break;
        }
    }
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(n);
}

/* Adds a C-side period sum to the group's Python int. */
static int add_period(PyObject *group, unsigned long long sum) {
    if (sum == 0) return 0;
    PyObject *add = PyLong_FromUnsignedLongLong(sum);
    if (add == NULL) return -1;
    PyObject *total = PyNumber_Add(PyList_GET_ITEM(group, 1), add);
    Py_DECREF(add);
    if (total == NULL) return -1;
    PyList_SetItem(group, 1, total); /* steals total */
    return 0;
}

/* groups[(header, pid)], created as [{}, 0] when new; a borrowed reference. */
static PyObject *group_of(PyObject *groups, uint64_t header, uint64_t pid) {
    PyObject *key = Py_BuildValue("(KK)", (unsigned long long)header, (unsigned long long)pid);
    if (key == NULL) return NULL;
    PyObject *group = PyDict_GetItemWithError(groups, key);
    if (group == NULL && !PyErr_Occurred()) {
        group = Py_BuildValue("[Ni]", PyDict_New(), 0);
        if (group != NULL) {
            int rc = PyDict_SetItem(groups, key, group);
            Py_DECREF(group); /* the dict holds it */
            if (rc < 0) group = NULL;
        }
    } else if (group != NULL && (!PyList_CheckExact(group) || PyList_GET_SIZE(group) != 2 ||
                                 !PyDict_CheckExact(PyList_GET_ITEM(group, 0)))) {
        PyErr_SetString(PyExc_TypeError, "a group must be [dict, int]");
        group = NULL;
    }
    Py_DECREF(key);
    return group;
}

/* One (header, pid, ip) key of a call's own count table. */
typedef struct {
    uint64_t header, pid, ip;
    long long count; /* 0: the slot is free */
} Slot;

/* The period sum of one (header, pid) while a call runs. */
typedef struct {
    uint64_t header, pid;
    unsigned long long sum;
} Period;

#define PERIODS 16

static int add_count(PyObject *groups, const Slot *s) {
    PyObject *group = group_of(groups, s->header, s->pid);
    if (group == NULL) return -1;
    PyObject *counts = PyList_GET_ITEM(group, 0);
    PyObject *ip = PyLong_FromUnsignedLongLong(s->ip);
    if (ip == NULL) return -1;
    PyObject *old = PyDict_GetItemWithError(counts, ip);
    long long prev = 0;
    if (old != NULL) prev = PyLong_AsLongLong(old);
    if ((old == NULL || prev == -1) && PyErr_Occurred()) { Py_DECREF(ip); return -1; }
    PyObject *val = PyLong_FromLongLong(prev + s->count);
    if (val == NULL) { Py_DECREF(ip); return -1; }
    int rc = PyDict_SetItem(counts, ip, val);
    Py_DECREF(ip);
    Py_DECREF(val);
    return rc;
}

static int flush_period(PyObject *groups, Period *p) {
    if (p->sum == 0) return 0;
    PyObject *group = group_of(groups, p->header, p->pid);
    if (group == NULL || add_period(group, p->sum) < 0) return -1;
    p->sum = 0;
    return 0;
}

/* Samples are first counted in a C hash table of their own (no Python object per sample),
 * then each distinct key is added to the groups once. */
static PyObject *tally(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t step, ip_word, pid_word, period_word;
    PyObject *groups;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnnnO!", &buf, &step, &ip_word, &pid_word, &period_word,
                          &PyDict_Type, &groups))
        return NULL;
    PyObject *result = NULL;
    Slot *table = NULL;
    Period periods[PERIODS];
    int nperiods = 0;
    if (step < 1 || ip_word < 1 || ip_word >= step || pid_word < 1 || pid_word >= step ||
        period_word >= step || buf.len % (step * 8)) {
        PyErr_SetString(PyExc_ValueError, "bad record layout");
        goto done;
    }
    const unsigned char *b = buf.buf;
    Py_ssize_t n = buf.len / (step * 8), rec = step * 8;
    size_t cap = 64;
    while (cap < (size_t)n * 2) cap <<= 1;
    table = PyMem_Calloc(cap, sizeof(Slot));
    if (table == NULL) { PyErr_NoMemory(); goto done; }
    size_t mask = cap - 1;
    int last = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *p = b + i * rec;
        uint64_t header = le64(p), pid = le64(p + 8 * pid_word) & 0xFFFFFFFFu;
        uint64_t ip = le64(p + 8 * ip_word);
        uint64_t h = (ip ^ (header * 0x9E3779B97F4A7C15u) ^ (pid << 29)) * 0xBF58476D1CE4E5B9u;
        size_t k = (size_t)(h >> 32) & mask;
        for (;; k = (k + 1) & mask) {
            Slot *s = &table[k];
            if (s->count == 0) {
                s->header = header;
                s->pid = pid;
                s->ip = ip;
                s->count = 1;
                break;
            }
            if (s->ip == ip && s->header == header && s->pid == pid) {
                s->count++;
                break;
            }
        }
        if (period_word < 0) continue;
        if (last < 0 || periods[last].header != header || periods[last].pid != pid) {
            last = -1;
            for (int j = 0; j < nperiods; j++)
                if (periods[j].header == header && periods[j].pid == pid) { last = j; break; }
            if (last < 0) {
                if (nperiods == PERIODS) { /* many groups: hand the sums over, start again */
                    for (int j = 0; j < nperiods; j++)
                        if (flush_period(groups, &periods[j]) < 0) goto done;
                    nperiods = 0;
                }
                last = nperiods++;
                periods[last] = (Period){header, pid, 0};
            }
        }
        uint64_t period = le64(p + 8 * period_word);
        if (periods[last].sum + period < periods[last].sum) { /* would wrap */
            if (flush_period(groups, &periods[last]) < 0) goto done;
        }
        periods[last].sum += period;
    }
    for (size_t k = 0; k < cap; k++)
        if (table[k].count && add_count(groups, &table[k]) < 0) goto done;
    for (int j = 0; j < nperiods; j++) {
        /* a group with samples but a zero period still exists, as in the Python twin */
        if (flush_period(groups, &periods[j]) < 0) goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(table);
    PyBuffer_Release(&buf);
    return result;
}

/* The length of the well-formed SAMPLE-with-callchain record at p (n bytes left), or 0. */
static Py_ssize_t chain_record(const unsigned char *p, Py_ssize_t n, Py_ssize_t chain_word) {
    if (n < 8) return 0;
    Py_ssize_t size = p[6] | (p[7] << 8);
    if (p[0] != SAMPLE || p[1] || p[2] || p[3]) return 0;
    if (size % 8 || size > n || size < 8 * (chain_word + 1)) return 0;
    uint64_t nr = le64(p + 8 * chain_word);
    if (nr > (uint64_t)(size / 8 - chain_word - 1)) return 0;
    return size;
}

static PyObject *chain_run(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t pos, chain_word;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nn", &buf, &pos, &chain_word)) return NULL;
    if (pos >= 0 && chain_word >= 1) {
        const unsigned char *b = buf.buf;
        Py_ssize_t size;
        while (pos < buf.len && (size = chain_record(b + pos, buf.len - pos, chain_word)) > 0)
            pos += size;
    }
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(pos);
}

/* d[key] += add, for an int value (0 when missing). */
static int dict_add(PyObject *d, PyObject *key, PyObject *add) {
    PyObject *old = PyDict_GetItemWithError(d, key);
    if (old == NULL && PyErr_Occurred()) return -1;
    PyObject *val = old == NULL ? Py_NewRef(add) : PyNumber_Add(old, add);
    if (val == NULL) return -1;
    int rc = PyDict_SetItem(d, key, val);
    Py_DECREF(val);
    return rc;
}

static PyObject *tally_chains(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t ip_word, pid_word, period_word, chain_word;
    PyObject *pending, *periods, *one = NULL, *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnnnO!O!", &buf, &ip_word, &pid_word, &period_word,
                          &chain_word, &PyDict_Type, &pending, &PyDict_Type, &periods))
        return NULL;
    if (ip_word < 1 || ip_word >= chain_word || pid_word < 1 || pid_word >= chain_word ||
        period_word >= chain_word) {
        PyErr_SetString(PyExc_ValueError, "bad record layout");
        goto done;
    }
    one = PyLong_FromLong(1);
    if (one == NULL) goto done;
    const unsigned char *b = buf.buf;
    Py_ssize_t pos = 0, n = 0;
    while (pos < buf.len) {
        const unsigned char *p = b + pos;
        Py_ssize_t size = chain_record(p, buf.len - pos, chain_word);
        if (size == 0) {
            PyErr_Format(PyExc_ValueError, "not a SAMPLE record with a callchain at byte %zd",
                         pos);
            goto done;
        }
        Py_ssize_t nr = (Py_ssize_t)le64(p + 8 * chain_word);
        /* the chain as its bytes: one object to make and hash, not one int per entry */
        PyObject *chain = PyBytes_FromStringAndSize((const char *)p + 8 * (chain_word + 1),
                                                    8 * nr);
        if (chain == NULL) goto done;
        uint64_t pid_tid = le64(p + 8 * pid_word);
        PyObject *key = Py_BuildValue("(KKK)", (unsigned long long)le64(p),
                                      (unsigned long long)pid_tid,
                                      (unsigned long long)le64(p + 8 * ip_word));
        if (key == NULL) { Py_DECREF(chain); goto done; }
        PyObject *chains = PyDict_GetItemWithError(pending, key); /* borrowed */
        if (chains == NULL && !PyErr_Occurred()) {
            chains = PyDict_New();
            if (chains != NULL && PyDict_SetItem(pending, key, chains) < 0) Py_CLEAR(chains);
            Py_XDECREF(chains); /* pending holds it */
        } else if (chains != NULL && !PyDict_CheckExact(chains)) {
            PyErr_SetString(PyExc_TypeError, "pending values must be dicts");
            chains = NULL;
        }
        Py_DECREF(key);
        int rc = chains == NULL ? -1 : dict_add(chains, chain, one);
        Py_DECREF(chain);
        if (rc < 0) goto done;
        if (period_word > 0) {
            PyObject *pid = PyLong_FromUnsignedLongLong(pid_tid & 0xFFFFFFFFu);
            PyObject *period = PyLong_FromUnsignedLongLong(le64(p + 8 * period_word));
            rc = (pid == NULL || period == NULL) ? -1 : dict_add(periods, pid, period);
            Py_XDECREF(pid);
            Py_XDECREF(period);
            if (rc < 0) goto done;
        }
        pos += size;
        n++;
    }
    result = PyLong_FromSsize_t(n);
done:
    Py_XDECREF(one);
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"run_length", run_length, METH_VARARGS,
     "run_length(buf, pos, size, most) -> records from pos on that are SAMPLEs of size bytes"},
    {"tally", tally, METH_VARARGS,
     "tally(buf, step, ip_word, pid_word, period_word, groups) -> None"},
    {"chain_run", chain_run, METH_VARARGS,
     "chain_run(buf, pos, chain_word) -> end of the run of SAMPLEs with a callchain"},
    {"tally_chains", tally_chains, METH_VARARGS,
     "tally_chains(buf, ip_word, pid_word, period_word, chain_word, pending, periods) -> n"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef perfscan_module = {
    PyModuleDef_HEAD_INIT, "halvm_prof._perfscan",
    "Compiled loops of the perf.data reader and flat profile.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__perfscan(void) { return PyModule_Create(&perfscan_module); }
