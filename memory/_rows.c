/* The hot tier's per-agent row queues in one call each, instead of a Python loop a row or an
 * agent (memory.hot_store; tests/memory/test_columns_kernel.py compares them with the loops):
 *
 *   queue_rows(queues, make, start, agents)  row start + i appended to agents[i]'s queue
 *                                         (`make()` for an agent without one)
 *   leaving(queues, times, ids, before, cap)  HotStore.leaving: per agent the ids of its
 *                                         oldest rows older than `before` or past `cap`
 *   evict_front(queues, leaving, times, newest)  HotStore.evict_leaving: those rows taken
 *                                         off the queues, each agent's latest time kept
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_arrays.h"

static PyObject *s_append;

static PyObject *queue_rows(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *queues, *make, *agents;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!OnO", &PyDict_Type, &queues, &make, &start, &agents))
        return NULL;
    PyObject *seq = PySequence_Fast(agents, "queue_rows: agents must be iterable");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *queue = PyDict_GetItemWithError(queues, items[i]);
        if (queue == NULL) {
            if (PyErr_Occurred()) goto fail;
            queue = PyObject_CallNoArgs(make);
            if (queue == NULL) goto fail;
            int rc = PyDict_SetItem(queues, items[i], queue);
            Py_DECREF(queue); /* the dict holds it */
            if (rc < 0) goto fail;
        }
        ArrayHead *a = direct(queue, 'q'); /* a RowQueue: its storage */
        if (a != NULL) {
            char *at = grown(a, 1);
            if (at == NULL) goto fail;
            int64_t row = (int64_t)(start + i);
            memcpy(at, &row, sizeof row);
            continue;
        }
        PyObject *row = PyLong_FromSsize_t(start + i);
        if (row == NULL) goto fail;
        Py_INCREF(queue);
        PyObject *r = PyObject_CallMethodOneArg(queue, s_append, row);
        Py_DECREF(queue);
        Py_DECREF(row);
        if (r == NULL) goto fail;
        Py_DECREF(r);
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    return NULL;
}

/* leaving(queues, times, ids, before, cap) -> dict: HotStore.leaving's loop. Per agent of
 * `queues` (agent -> its rows, an int64 array, oldest first), in the dict's order, the ids
 * of its oldest rows whose time is below `before` (NaN too) or beyond its newest `cap`. */
static PyObject *leaving(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *queues, *times_obj, *ids_obj, *agent, *queue, *out = NULL, *gone;
    double before;
    Py_ssize_t cap, pos = 0;
    Py_buffer t = {0}, d = {0}, q;
    if (!PyArg_ParseTuple(args, "O!OOdn", &PyDict_Type, &queues, &times_obj, &ids_obj, &before,
                          &cap) ||
        PyObject_GetBuffer(times_obj, &t, PyBUF_FORMAT) < 0 ||
        PyObject_GetBuffer(ids_obj, &d, PyBUF_FORMAT) < 0)
        goto fail;
    Py_ssize_t n_rows = t.len / 8;
    if (t.itemsize != 8 || d.itemsize != 8 || t.len != d.len || (out = PyDict_New()) == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "leaving: times and ids: 8-byte columns of one length");
        goto fail;
    }
    while (PyDict_Next(queues, &pos, &agent, &queue)) {
        if (PyObject_GetBuffer(queue, &q, PyBUF_FORMAT) < 0) goto fail;
        const int64_t *rows = q.buf;
        Py_ssize_t len = q.itemsize == 8 ? q.len / 8 : 0, i = 0;
        int rc = q.itemsize == 8 ? 0 : -1;
        if (rc < 0) PyErr_SetString(PyExc_ValueError, "leaving: row queues must hold int64 rows");
        for (gone = NULL; rc == 0 && i < len; i++) {
            if (rows[i] < 0 || rows[i] >= n_rows) {
                PyErr_Format(PyExc_IndexError, "leaving: row %lld outside the %zd rows",
                             (long long)rows[i], n_rows);
                rc = -1;
            } else if (((const double *)t.buf)[rows[i]] >= before && i >= len - cap) {
                break;
            } else {
                if (gone == NULL) { /* made once an agent, then held by `out` */
                    gone = PyList_New(0);
                    rc = gone == NULL || PyDict_SetItem(out, agent, gone) < 0 ? -1 : 0;
                    Py_XDECREF(gone);
                }
                const int64_t *ids = d.buf;
                PyObject *memory_id = rc < 0 ? NULL : PyLong_FromLongLong(ids[rows[i]]);
                rc = memory_id == NULL || PyList_Append(gone, memory_id) < 0 ? -1 : 0;
                Py_XDECREF(memory_id);
            }
        }
        PyBuffer_Release(&q);
        if (rc < 0) goto fail;
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    if (d.obj) PyBuffer_Release(&d);
    if (t.obj) PyBuffer_Release(&t);
    return out;
}

/* evict_front(queues, leaving, times, newest) -> list: HotStore.evict_leaving's loop. For
 * each agent of `leaving` (agent -> the ids `leaving` gave), its queue's first len(ids) rows
 * are taken off and returned (all agents' in order), and newest[agent] is raised to the
 * latest time among them if above its value (-1.0 if none). */
static PyObject *evict_front(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *queues, *leaving_ids, *times_obj, *newest, *agent, *gone, *out = NULL;
    Py_ssize_t pos = 0;
    Py_buffer t = {0}, q;
    if (!PyArg_ParseTuple(args, "O!O!OO!", &PyDict_Type, &queues, &PyDict_Type, &leaving_ids,
                          &times_obj, &PyDict_Type, &newest) ||
        PyObject_GetBuffer(times_obj, &t, PyBUF_FORMAT) < 0)
        return NULL;
    if (t.itemsize != 8 || (out = PyList_New(0)) == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "evict_front: 8-byte times");
        goto fail;
    }
    while (PyDict_Next(leaving_ids, &pos, &agent, &gone)) {
        PyObject *queue = PyDict_GetItemWithError(queues, agent); /* borrowed */
        Py_ssize_t n = queue == NULL ? -1 : PyObject_Length(gone);
        if (n < 0 || PyObject_GetBuffer(queue, &q, PyBUF_FORMAT) < 0) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, agent);
            goto fail;
        }
        const int64_t *rows = q.buf;
        Py_ssize_t len = q.itemsize == 8 ? q.len / 8 : -1;
        double latest = -INFINITY;
        int rc = len < n ? -1 : 0;
        for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
            if (rows[i] < 0 || rows[i] >= t.len / 8) {
                PyErr_Format(PyExc_IndexError, "evict_front: row %lld outside the %zd rows",
                             (long long)rows[i], t.len / 8);
                rc = -1;
                break;
            }
            double time = ((const double *)t.buf)[rows[i]];
            if (time > latest || i == 0) latest = time; /* max(): the first, then greater */
            PyObject *row = PyLong_FromLongLong(rows[i]);
            rc = row == NULL || PyList_Append(out, row) < 0 ? -1 : 0;
            Py_XDECREF(row);
        }
        PyBuffer_Release(&q);
        if (rc < 0) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "evict_front: agent's queue lacks %zd rows", n);
            goto fail;
        }
        if (n == 0) continue;
        Py_INCREF(agent); /* the dicts may change below: keep the key alive */
        PyObject *known = PyDict_GetItemWithError(newest, agent), *value;
        double before = known == NULL ? -1.0 : PyFloat_AsDouble(known);
        if (!PyErr_Occurred() && latest > before) {
            value = PyFloat_FromDouble(latest);
            rc = value == NULL ? -1 : PyDict_SetItem(newest, agent, value);
            Py_XDECREF(value);
        }
        if (!PyErr_Occurred() && rc == 0) rc = PySequence_DelSlice(queue, 0, n);
        Py_DECREF(agent);
        if (rc < 0 || PyErr_Occurred()) goto fail;
    }
    PyBuffer_Release(&t);
    return out;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&t);
    return NULL;
}

static PyMethodDef methods[] = {
    {"queue_rows", queue_rows, METH_VARARGS, "New rows appended to their agents' row queues."},
    {"leaving", leaving, METH_VARARGS, "HotStore.leaving's loop: each agent's ids leaving hot."},
    {"evict_front", evict_front, METH_VARARGS, "HotStore.evict_leaving's loop: rows taken off."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rows", "Compiled passes over the hot tier's row queues.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rows(void) {
    if ((s_append = PyUnicode_InternFromString("append")) == NULL) return NULL;
    if ((direct_arrays = arrays_checked()) < 0) return NULL;
    return PyModule_Create(&module);
}
