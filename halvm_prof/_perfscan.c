/* The optional compiled loops of the perf.data reader and flat profile
 * (halvm_prof/perf/scan.py holds the Python twins they must match, result for result).
 *
 * run_length(buf, pos, size, most): how many records from byte pos on are SAMPLE records of
 * exactly size bytes (at most most of them, and only whole ones inside buf).
 *
 * tally(buf, step, ip_word, pid_word, period_word, groups): buf holds whole SAMPLE records of
 * step 64-bit words each (word 0 is the record header). Each record is counted in
 * groups[(header word, pid)] = [{ip: samples}, period sum], pid being the low half of the
 * pid/tid word; period_word < 0 means the event records no period. Little endian, as perf
 * writes on the machines we read.
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

static PyObject *tally(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t step, ip_word, pid_word, period_word;
    PyObject *groups;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnnnO!", &buf, &step, &ip_word, &pid_word, &period_word,
                          &PyDict_Type, &groups))
        return NULL;
    PyObject *result = NULL;
    if (step < 1 || ip_word < 1 || ip_word >= step || pid_word < 1 || pid_word >= step ||
        period_word >= step || buf.len % (step * 8)) {
        PyErr_SetString(PyExc_ValueError, "bad record layout");
        goto done;
    }
    const unsigned char *b = buf.buf;
    Py_ssize_t n = buf.len / (step * 8), rec = step * 8;
    PyObject *group = NULL, *counts = NULL;
    uint64_t last_header = 0, last_pid = 0;
    unsigned long long period_sum = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *p = b + i * rec;
        uint64_t header = le64(p), pid = le64(p + 8 * pid_word) & 0xFFFFFFFFu;
        if (group == NULL || header != last_header || pid != last_pid) {
            if (group != NULL && add_period(group, period_sum) < 0) goto done;
            period_sum = 0;
            group = group_of(groups, header, pid);
            if (group == NULL) goto done;
            counts = PyList_GET_ITEM(group, 0);
            last_header = header;
            last_pid = pid;
        }
        if (period_word >= 0) {
            uint64_t period = le64(p + 8 * period_word);
            if (period_sum + period < period_sum) { /* would wrap: move it to the int first */
                if (add_period(group, period_sum) < 0) goto done;
                period_sum = 0;
            }
            period_sum += period;
        }
        PyObject *ip = PyLong_FromUnsignedLongLong(le64(p + 8 * ip_word));
        if (ip == NULL) goto done;
        PyObject *old = PyDict_GetItemWithError(counts, ip);
        if (old == NULL && PyErr_Occurred()) { Py_DECREF(ip); goto done; }
        long long prev = old == NULL ? 0 : PyLong_AsLongLong(old);
        if (prev == -1 && PyErr_Occurred()) { Py_DECREF(ip); goto done; }
        PyObject *val = PyLong_FromLongLong(prev + 1);
        if (val == NULL) { Py_DECREF(ip); goto done; }
        int rc = PyDict_SetItem(counts, ip, val);
        Py_DECREF(ip);
        Py_DECREF(val);
        if (rc < 0) goto done;
    }
    if (group != NULL && add_period(group, period_sum) < 0) goto done;
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"run_length", run_length, METH_VARARGS,
     "run_length(buf, pos, size, most) -> records from pos on that are SAMPLEs of size bytes"},
    {"tally", tally, METH_VARARGS,
     "tally(buf, step, ip_word, pid_word, period_word, groups) -> None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef perfscan_module = {
    PyModuleDef_HEAD_INIT, "halvm_prof._perfscan",
    "Compiled loops of the perf.data reader and flat profile.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__perfscan(void) { return PyModule_Create(&perfscan_module); }
