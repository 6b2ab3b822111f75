/* A batch of memories appended to the RAM sparse index's per-agent postings in one call.
 *
 * The compiled form of the loop in memory.sparse_index.SparseIndex.add: per memory, the
 * agent's postings (made with `cls()` on first use), its id, time, importance and topic id
 * appended, its BM25 terms and weights extended and its row end recorded, and the group's
 * term counts raised by one for each stored term (as Counter.update). The same arrays end
 * up with the same values (tests/memory/test_ram_index.py compares the two paths).
 *
 *   add(agents, cls, ids, agent_ids, times, importances, topics, topic_of, new_topic,
 *       vectors, df) -> list
 *     agents     dict agent id -> postings (attributes ids, times, importances, topics,
 *                ends, terms, weights: typed arrays)
 *     ids .. topics, vectors  lists of one length (a vector: None or .indices/.values
 *                arrays, uint32 and float32)
 *     topic_of   dict topic -> id; new_topic(topic) gives the id of a topic not in it
 *     df         dict term -> memories holding it
 *   returns the agent ids whose new rows came below their last id (to be re-sorted).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *s_ids, *s_times, *s_importances, *s_topics, *s_ends, *s_terms, *s_weights,
    *s_indices, *s_values, *s_append, *s_extend, *one;

/* obj.<method>(arg), the result dropped. */
static int call(PyObject *obj, PyObject *method, PyObject *arg) {
    PyObject *args[2] = {obj, arg};
    PyObject *out = PyObject_VectorcallMethod(method, args, 2, NULL);
    if (out == NULL) return -1;
    Py_DECREF(out);
    return 0;
}

/* p.<column>.<method>(arg) */
static int column_call(PyObject *p, PyObject *column, PyObject *method, PyObject *arg) {
    PyObject *array = PyObject_GetAttr(p, column);
    if (array == NULL) return -1;
    int rc = call(array, method, arg);
    Py_DECREF(array);
    return rc;
}

/* A buffer of `obj` with items of `size` bytes (else ValueError naming `what`). */
static int open_view(PyObject *obj, Py_buffer *view, Py_ssize_t size, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT) < 0) return -1;
    if (view->itemsize == size) return 0;
    PyBuffer_Release(view);
    PyErr_Format(PyExc_ValueError, "add: %s must have %zd-byte items", what, size);
    return -1;
}

/* Whether the last id of `ids` (an int64 array) is above `memory_id`; -1 on error. */
static int out_of_order(PyObject *ids, long long memory_id) {
    Py_buffer view;
    if (open_view(ids, &view, 8, "postings ids") < 0) return -1;
    int above = view.len && ((int64_t *)view.buf)[view.len / 8 - 1] > memory_id;
    PyBuffer_Release(&view);
    return above;
}

/* df[t] += 1 for each term of `indices` (a uint32 array), as Counter.update. */
static int count_terms(PyObject *df, PyObject *indices) {
    Py_buffer view;
    if (open_view(indices, &view, 4, "term ids") < 0) return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < view.len / 4; i++) {
        PyObject *key = PyLong_FromUnsignedLong(((uint32_t *)view.buf)[i]), *count = NULL;
        if (key == NULL) {
            rc = -1;
            break;
        }
        PyObject *old = PyDict_GetItemWithError(df, key); /* borrowed */
        if (old == NULL && PyErr_Occurred()) rc = -1;
        else if (old == NULL) count = PyLong_FromLong(1);
        else count = PyNumber_Add(old, one);
        if (rc == 0 && (count == NULL || PyDict_SetItem(df, key, count) < 0)) rc = -1;
        Py_XDECREF(count);
        Py_DECREF(key);
    }
    PyBuffer_Release(&view);
    return rc;
}

/* One memory's row appended to postings `p`. */
static int add_row(PyObject *p, PyObject *id, PyObject *time, PyObject *importance,
                   PyObject *topic_id, PyObject *vector, PyObject *df) {
    if (column_call(p, s_ids, s_append, id) < 0 || column_call(p, s_times, s_append, time) < 0 ||
        column_call(p, s_importances, s_append, importance) < 0 ||
        column_call(p, s_topics, s_append, topic_id) < 0)
        return -1;
    PyObject *terms = PyObject_GetAttr(p, s_terms);
    if (terms == NULL) return -1;
    int rc = 0;
    if (vector != Py_None) {
        PyObject *indices = PyObject_GetAttr(vector, s_indices), *values = NULL;
        Py_ssize_t n = indices == NULL ? -1 : PyObject_Length(indices);
        if (n < 0) rc = -1;
        else if (n > 0) {
            values = PyObject_GetAttr(vector, s_values);
            if (values == NULL || call(terms, s_extend, indices) < 0 ||
                column_call(p, s_weights, s_extend, values) < 0 || count_terms(df, indices) < 0)
                rc = -1;
        }
        Py_XDECREF(indices);
        Py_XDECREF(values);
    }
    if (rc == 0) {
        Py_ssize_t n_terms = PyObject_Length(terms);
        PyObject *end = n_terms < 0 ? NULL : PyLong_FromSsize_t(n_terms);
        if (end == NULL || column_call(p, s_ends, s_append, end) < 0) rc = -1;
        Py_XDECREF(end);
    }
    Py_DECREF(terms);
    return rc;
}

static PyObject *add(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *agents, *cls, *ids, *agent_ids, *times, *importances, *topics, *topic_of,
        *new_topic, *vectors, *df;
    if (!PyArg_ParseTuple(args, "O!OO!O!O!O!O!O!OO!O!", &PyDict_Type, &agents, &cls,
                          &PyList_Type, &ids, &PyList_Type, &agent_ids, &PyList_Type, &times,
                          &PyList_Type, &importances, &PyList_Type, &topics, &PyDict_Type,
                          &topic_of, &new_topic, &PyList_Type, &vectors, &PyDict_Type, &df))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ids);
    if (PyList_GET_SIZE(agent_ids) != n || PyList_GET_SIZE(times) != n ||
        PyList_GET_SIZE(importances) != n || PyList_GET_SIZE(topics) != n ||
        PyList_GET_SIZE(vectors) != n) {
        PyErr_SetString(PyExc_ValueError, "add: the columns differ in length");
        return NULL;
    }
    PyObject *unsorted = PyList_New(0);
    if (unsorted == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *agent = PyList_GET_ITEM(agent_ids, i), *id = PyList_GET_ITEM(ids, i);
        long long memory_id = PyLong_AsLongLong(id);
        if (memory_id == -1 && PyErr_Occurred()) goto fail;
        PyObject *p = PyDict_GetItemWithError(agents, agent); /* borrowed */
        if (p == NULL) {
            if (PyErr_Occurred()) goto fail;
            PyObject *made = PyObject_CallNoArgs(cls);
            if (made == NULL || PyDict_SetItem(agents, agent, made) < 0) {
                Py_XDECREF(made);
                goto fail;
            }
            p = made;
            Py_DECREF(made); /* the dict holds it */
        } else {
            PyObject *p_ids = PyObject_GetAttr(p, s_ids);
            int above = p_ids == NULL ? -1 : out_of_order(p_ids, memory_id);
            Py_XDECREF(p_ids);
            if (above < 0 || (above && PyList_Append(unsorted, agent) < 0)) goto fail;
        }
        PyObject *topic = PyList_GET_ITEM(topics, i);
        PyObject *topic_id = PyDict_GetItemWithError(topic_of, topic);
        if (topic_id != NULL) Py_INCREF(topic_id);
        else if (PyErr_Occurred() || (topic_id = PyObject_CallOneArg(new_topic, topic)) == NULL)
            goto fail;
        int rc = add_row(p, id, PyList_GET_ITEM(times, i), PyList_GET_ITEM(importances, i),
                         topic_id, PyList_GET_ITEM(vectors, i), df);
        Py_DECREF(topic_id);
        if (rc < 0) goto fail;
    }
    return unsorted;
fail:
    Py_DECREF(unsorted);
    return NULL;
}

static PyMethodDef methods[] = {
    {"add", add, METH_VARARGS, "Append a batch of memories to the postings (see the module)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_postings",
                                    "Compiled appends to the RAM sparse index.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__postings(void) {
    PyObject **names[] = {&s_ids,   &s_times,   &s_importances, &s_topics,
                          &s_ends,  &s_terms,   &s_weights,     &s_indices,
                          &s_values, &s_append, &s_extend};
    const char *texts[] = {"ids",   "times",   "importances", "topics", "ends",  "terms",
                           "weights", "indices", "values",    "append", "extend"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if ((*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) return NULL;
    if ((one = PyLong_FromLong(1)) == NULL) return NULL;
    return PyModule_Create(&module);
}
