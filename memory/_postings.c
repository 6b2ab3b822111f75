/* A batch of memories appended to the RAM sparse index's per-agent postings in one call.
 *
 * The compiled form of the loop in memory.sparse_index.SparseIndex.add: per memory, the
 * agent's postings (made with `cls()` on first use), its id, time, importance and topic id
 * appended, its BM25 terms and weights extended and its row end recorded, and the group's
 * term counts raised by one for each stored term (as Counter.update; a batch's terms are
 * sorted and each distinct term's count raised once, in the end, also when a row failed).
 * The same arrays end up with the same values (tests/memory/test_ram_index.py compares the
 * two paths). Where the layout check at import passes, rows go straight into the arrays'
 * storage, grown by a quarter again (`_arrays.h`); else (and for an array exporting its
 * buffer, or a vector that is not an array of the column's type) through the arrays' methods.
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
 *
 *   extend_numbers(array, values)  array.extend(values), a list or tuple of numbers put
 *                into the storage in C (typecodes q l d f I H; others: the method)
 *   typed_array(typecode, values)  array(typecode, values) the same way
 *   extend_each(obj, names, n, columns)  extend_numbers of each obj.<name>, a number standing
 *                for n of itself (the hot tier's numeric columns in one call)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "_arrays.h"

static PyObject *s_ids, *s_times, *s_importances, *s_topics, *s_ends, *s_terms, *s_weights,
    *s_indices, *s_values, *s_append, *s_extend;

/* obj.<method>(arg), the result dropped. */
static int call(PyObject *obj, PyObject *method, PyObject *arg) {
    PyObject *args[2] = {obj, arg};
    PyObject *out = PyObject_VectorcallMethod(method, args, 2, NULL);
    if (out == NULL) return -1;
    Py_DECREF(out);
    return 0;
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

/* A batch's stored terms, counted into df at the end (one update a distinct term). */
typedef struct {
    uint32_t *items;
    Py_ssize_t n, cap;
} Terms;

static int terms_take(Terms *t, PyObject *indices) {
    Py_buffer view;
    if (open_view(indices, &view, 4, "term ids") < 0) return -1;
    Py_ssize_t k = view.len / 4;
    if (t->n + k > t->cap) {
        Py_ssize_t cap = 2 * (t->n + k) + 64;
        uint32_t *items = PyMem_Realloc(t->items, cap * sizeof(uint32_t));
        if (items == NULL) {
            PyBuffer_Release(&view);
            PyErr_NoMemory();
            return -1;
        }
        t->items = items;
        t->cap = cap;
    }
    memcpy(t->items + t->n, view.buf, k * sizeof(uint32_t));
    t->n += k;
    PyBuffer_Release(&view);
    return 0;
}

static int by_term(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* df[t] += (times t occurs) for each distinct term taken, as Counter.update of them all. */
static int terms_count(Terms *t, PyObject *df) {
    qsort(t->items, t->n, sizeof(uint32_t), by_term);
    for (Py_ssize_t i = 0, j; i < t->n; i = j) {
        for (j = i + 1; j < t->n && t->items[j] == t->items[i]; j++) {
        }
        PyObject *key = PyLong_FromUnsignedLong(t->items[i]), *count = NULL;
        if (key == NULL) return -1;
        PyObject *old = PyDict_GetItemWithError(df, key); /* borrowed */
        if (old != NULL) {
            PyObject *run = PyLong_FromSsize_t(j - i);
            count = run == NULL ? NULL : PyNumber_Add(old, run);
            Py_XDECREF(run);
        } else if (!PyErr_Occurred())
            count = PyLong_FromSsize_t(j - i);
        int rc = count == NULL || PyDict_SetItem(df, key, count) < 0 ? -1 : 0;
        Py_XDECREF(count);
        Py_DECREF(key);
        if (rc < 0) return -1;
    }
    return 0;
}

/* p.<column>.append(value) for a column of `typecode` (q, d or H), checked as `array`
 * checks it (the column left as it was on a bad value). */
static int append(PyObject *p, PyObject *column, char typecode, PyObject *value) {
    PyObject *obj = PyObject_GetAttr(p, column);
    if (obj == NULL) return -1;
    ArrayHead *a = direct(obj, typecode);
    int rc = 0;
    if (a == NULL) rc = call(obj, s_append, value);
    else {
        Py_ssize_t size = Py_SIZE(a);
        char *at = grown(a, 1);
        if (at == NULL || put_item(typecode, value, at) < 0) {
            Py_SET_SIZE(a, size);
            rc = -1;
        }
    }
    Py_DECREF(obj);
    return rc;
}

/* array.extend(src), directly when both are arrays of `typecode`. */
static int extend(PyObject *array, char typecode, PyObject *src) {
    ArrayHead *a = direct(array, typecode), *b = direct(src, typecode);
    if (a == NULL || b == NULL || a == b) return call(array, s_extend, src);
    if (Py_SIZE(b) == 0) return 0;
    char *at = grown(a, Py_SIZE(b));
    if (at == NULL) return -1;
    memcpy(at, b->ob_item, Py_SIZE(b) * (size_t)b->ob_descr->itemsize);
    return 0;
}


/* One memory's row appended to postings `p`; its terms go to `counted` for df. */
static int add_row(PyObject *p, PyObject *id, PyObject *time, PyObject *importance,
                   PyObject *topic_id, PyObject *vector, Terms *counted) {
    if (append(p, s_ids, 'q', id) < 0 || append(p, s_times, 'd', time) < 0 ||
        append(p, s_importances, 'd', importance) < 0 || append(p, s_topics, 'H', topic_id) < 0)
        return -1;
    PyObject *terms = PyObject_GetAttr(p, s_terms);
    if (terms == NULL) return -1;
    int rc = 0;
    if (vector != Py_None) {
        PyObject *indices = PyObject_GetAttr(vector, s_indices), *values = NULL, *weights = NULL;
        Py_ssize_t n = indices == NULL ? -1 : PyObject_Length(indices);
        if (n < 0) rc = -1;
        else if (n > 0) {
            values = PyObject_GetAttr(vector, s_values);
            weights = values == NULL ? NULL : PyObject_GetAttr(p, s_weights);
            if (weights == NULL || extend(terms, 'I', indices) < 0 ||
                extend(weights, 'f', values) < 0 || terms_take(counted, indices) < 0)
                rc = -1;
        }
        Py_XDECREF(indices);
        Py_XDECREF(values);
        Py_XDECREF(weights);
    }
    if (rc == 0) {
        Py_ssize_t n_terms = PyObject_Length(terms);
        PyObject *ends = n_terms < 0 ? NULL : PyObject_GetAttr(p, s_ends);
        ArrayHead *a = ends == NULL ? NULL : direct(ends, 'I');
        char *at = a == NULL || n_terms > UINT_MAX ? NULL : grown(a, 1);
        if (at != NULL) {
            unsigned int end = (unsigned int)n_terms;
            memcpy(at, &end, sizeof end);
        } else if (ends == NULL || PyErr_Occurred()) rc = -1;
        else { /* not a direct array: its append */
            PyObject *end = PyLong_FromSsize_t(n_terms);
            rc = end == NULL ? -1 : call(ends, s_append, end);
            Py_XDECREF(end);
        }
        Py_XDECREF(ends);
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
    Terms counted = {NULL, 0, 0};
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
                         topic_id, PyList_GET_ITEM(vectors, i), &counted);
        Py_DECREF(topic_id);
        if (rc < 0) goto fail;
    }
    if (terms_count(&counted, df) < 0) goto fail_counted;
    PyMem_Free(counted.items);
    return unsorted;
fail: { /* the rows appended before the error keep their terms counted, as row by row */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    terms_count(&counted, df);
    PyErr_Restore(type, value, traceback);
}
fail_counted:
    PyMem_Free(counted.items);
    Py_DECREF(unsorted);
    return NULL;
}


/* array.extend(values), a list or tuple of numbers stored straight into a direct array's
 * storage (the items before a bad one kept, as array.extend keeps them), else the method. */
static int extended(PyObject *array, PyObject *values) {
    ArrayHead *a = numbers_target(array, values);
    if (a == NULL) return call(array, s_extend, values);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(values), size = Py_SIZE(a);
    if (n == 0) return 0;
    char *at = grown(a, n);
    return at == NULL || put_items(a, size, at, values) < 0 ? -1 : 0;
}

/* extend_numbers(array, values): array.extend(values) for a list or tuple of numbers, each
 * checked and stored in C (the array's own extend parses each item through a format
 * string); on a bad item the items before it stay appended, as with array.extend. */
static PyObject *extend_numbers(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "extend_numbers(array, values) takes 2 arguments");
        return NULL;
    }
    return extended(args[0], args[1]) < 0 ? NULL : Py_NewRef(Py_None);
}

/* extend_each(obj, names, n, columns): for each name, obj.<name>.extend(column), a column a
 * sequence of n numbers or one number (int, float, or not a sequence) standing for n of
 * itself (HotStore.append_many: its ten numeric columns in one call), each stored as
 * extend_numbers stores it; on an error the columns before stay extended. */
static PyObject *extend_each(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t n = nargs == 4 ? PyNumber_AsSsize_t(args[2], PyExc_OverflowError) : -1;
    if (n < 0 || !PyTuple_CheckExact(args[1]) || !PyTuple_CheckExact(args[3]) ||
        PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[3])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError,
                            "extend_each(obj, names, n, columns): a tuple of names, n >= 0 and "
                            "a tuple of as many columns");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[1]); i++) {
        PyObject *array = PyObject_GetAttr(args[0], PyTuple_GET_ITEM(args[1], i));
        if (array == NULL) return NULL;
        PyObject *column = PyTuple_GET_ITEM(args[3], i), *values = NULL;
        int rc = 0;
        if (PyList_CheckExact(column) || PyTuple_CheckExact(column)) values = Py_NewRef(column);
        else if (!PyLong_Check(column) && !PyFloat_Check(column) && PySequence_Check(column))
            rc = (values = PySequence_Fast(column, "extend_each: a column")) == NULL ? -1 : 0;
        else if ((values = PyList_New(n)) == NULL) rc = -1;
        else /* one number standing for n */
            for (Py_ssize_t j = 0; j < n; j++) PyList_SET_ITEM(values, j, Py_NewRef(column));
        if (rc == 0 && PySequence_Fast_GET_SIZE(values) != n) {
            PyErr_Format(PyExc_ValueError, "extend_each: column %zd has %zd values, not %zd", i,
                         PySequence_Fast_GET_SIZE(values), n);
            rc = -1;
        }
        if (rc == 0 && n > 0) rc = extended(array, values);
        Py_XDECREF(values);
        Py_DECREF(array);
        if (rc < 0) return NULL;
    }
    Py_RETURN_NONE;
}

/* One-item arrays, one a type code of NUMBER_CODES: a new array is a repeat of one (`filled`). */
static PyObject *seeds[sizeof NUMBER_CODES - 1];

/* typed_array(typecode, values): array(typecode, values) for a list or tuple of numbers. */
static PyObject *typed_array(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyUnicode_Check(args[0]) || PyUnicode_GET_LENGTH(args[0]) != 1) {
        PyErr_SetString(PyExc_TypeError, "typed_array(typecode, values): a one-letter typecode");
        return NULL;
    }
    Py_UCS4 code = PyUnicode_READ_CHAR(args[0], 0);
    const char *found = code < 128 ? strchr(NUMBER_CODES, (int)code) : NULL;
    if (found == NULL || code == 0)
        return PyObject_CallFunctionObjArgs((PyObject *)array_type, args[0], args[1], NULL);
    return array_of(seeds[found - NUMBER_CODES], (char)code, args[1]);
}

static PyMethodDef methods[] = {
    {"add", add, METH_VARARGS, "Append a batch of memories to the postings (see the module)."},
    {"extend_numbers", (PyCFunction)(void (*)(void))extend_numbers, METH_FASTCALL,
     "array.extend of a list of numbers, in C."},
    {"extend_each", (PyCFunction)(void (*)(void))extend_each, METH_FASTCALL,
     "obj.<name>.extend(column) for each name, a number standing for n of itself."},
    {"typed_array", (PyCFunction)(void (*)(void))typed_array, METH_FASTCALL,
     "array(typecode, list of numbers), in C."},
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
    if ((direct_arrays = arrays_checked()) < 0) return NULL;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        if (!(seeds[i] = PyObject_CallFunction((PyObject *)array_type, "C(i)", NUMBER_CODES[i], 0)))
            return NULL;
    return PyModule_Create(&module);
}
