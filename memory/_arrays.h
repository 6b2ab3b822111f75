/* Typed arrays (`array.array`) appended to in C, straight into their storage: the start of
 * CPython's array object and of its type descriptor (Modules/arraymodule.c, 3.8 to 3.13), as
 * far as appends need them, and numbers stored as their items with `array`'s checks.
 * Included by the kernels that append (_postings.c, _columns.c, _rows.c);
 * each checks the layout once at import (`arrays_checked`) and otherwise calls the arrays'
 * own methods. Storage grows by a quarter again (`grown`), not by `array`'s own sixteenth. */
#ifndef SOCIETAS_ARRAYS_H
#define SOCIETAS_ARRAYS_H

#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char typecode;
    int itemsize;
} DescrHead;
typedef struct {
    PyObject_VAR_HEAD char *ob_item;
    Py_ssize_t allocated;
    const DescrHead *ob_descr;
    PyObject *weakreflist;
    Py_ssize_t ob_exports;
} ArrayHead;
static PyTypeObject *array_type;
static int direct_arrays; /* whether arrays lay out as ArrayHead says (checked at import) */

/* `obj` as an array (or a subclass: the same start) whose storage can take items directly,
 * none of its buffer exported, else NULL. */
static ArrayHead *direct_any(PyObject *obj) {
    if (!direct_arrays || !PyObject_TypeCheck(obj, array_type)) return NULL;
    ArrayHead *a = (ArrayHead *)obj;
    return a->ob_exports == 0 ? a : NULL;
}

/* `direct_any(obj)` if its type code is `typecode`, else NULL. */
static ArrayHead *direct(PyObject *obj, char typecode) {
    ArrayHead *a = direct_any(obj);
    return a != NULL && a->ob_descr->typecode == typecode ? a : NULL;
}

/* Room for `more` (> 0) items at the end of `a`; where they go (an empty array's storage may
 * be NULL: nothing is asked of it for no items). Storage grows by a quarter again (plus 3 or 7
 * items): an array appended to n items has had up to ~4n items copied by `realloc` on the
 * way, against ~16n under `array`'s own rule (a sixteenth again), 1.4 M of a 300 x 200 run's
 * 31.7 M last-level misses (1 MB, cachegrind: RESULTS.md); at most a fifth of an array's
 * storage is headroom. */
static char *grown(ArrayHead *a, Py_ssize_t more) {
    Py_ssize_t size = Py_SIZE(a), need = size + more, itemsize = a->ob_descr->itemsize;
    if (need > a->allocated) {
        Py_ssize_t alloc = (need >> 2) + (size < 8 ? 3 : 7) + need;
        char *items = (size_t)alloc <= PY_SSIZE_T_MAX / (size_t)itemsize
                          ? PyMem_Realloc(a->ob_item, alloc * itemsize)
                          : NULL;
        if (items == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        a->ob_item = items;
        a->allocated = alloc;
    }
    Py_SET_SIZE(a, need);
    return a->ob_item + size * itemsize;
}

/* Whether a fresh array('q', [5, 6, 7]) lays out as ArrayHead says: its size, type code, item
 * size and storage (the buffer's address), and its export count while a buffer is held. */
static int arrays_checked(void) {
    PyObject *module = PyImport_ImportModule("array"), *made = NULL;
    if (module == NULL) return -1;
    PyObject *cls = PyObject_GetAttrString(module, "array");
    Py_DECREF(module);
    if (cls == NULL) return -1;
    array_type = (PyTypeObject *)cls; /* held for the module's life */
    made = PyObject_CallFunction(cls, "s(iii)", "q", 5, 6, 7);
    if (made == NULL) return -1;
    ArrayHead *a = (ArrayHead *)made;
    Py_buffer view;
    int ok = 0;
    if (Py_IS_TYPE(made, array_type) && Py_SIZE(a) == 3 && a->allocated >= 3 &&
        a->ob_descr->typecode == 'q' && a->ob_descr->itemsize == 8 && a->ob_exports == 0 &&
        PyObject_GetBuffer(made, &view, PyBUF_SIMPLE) == 0) {
        ok = view.buf == a->ob_item && a->ob_exports == 1 && ((int64_t *)a->ob_item)[2] == 7;
        PyBuffer_Release(&view);
        ok = ok && a->ob_exports == 0;
    }
    Py_DECREF(made);
    return ok;
}

/* The type codes whose items put_item stores (the others go through the arrays' methods). */
static const char NUMBER_CODES[] = "qldfIH";

/* One item of `typecode` from `v` into `at`, checked as `array` checks it; -1 on error. */
static inline int put_item(char typecode, PyObject *v, char *at) {
    if (typecode == 'd' || typecode == 'f') {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) return -1;
        if (typecode == 'd') memcpy(at, &x, sizeof x);
        else {
            float f = (float)x;
            memcpy(at, &f, sizeof f);
        }
        return 0;
    }
    PyObject *index = PyNumber_Index(v);
    if (index == NULL) return -1;
    int rc = 0;
    if (typecode == 'q' || typecode == 'l') {
        long long x = PyLong_AsLongLong(index);
        if (x == -1 && PyErr_Occurred()) rc = -1;
        else if (typecode == 'q') memcpy(at, &x, sizeof x);
        else if (x < LONG_MIN || x > LONG_MAX) {
            PyErr_SetString(PyExc_OverflowError, "signed long is out of range");
            rc = -1;
        } else {
            long l = (long)x;
            memcpy(at, &l, sizeof l);
        }
    } else { /* I or H: unsigned, range-checked */
        unsigned long long x = PyLong_AsUnsignedLongLong(index);
        unsigned long long most = typecode == 'I' ? UINT_MAX : USHRT_MAX;
        if (x == (unsigned long long)-1 && PyErr_Occurred()) rc = -1;
        else if (x > most) {
            PyErr_SetString(PyExc_OverflowError, "unsigned item is out of range");
            rc = -1;
        } else if (typecode == 'I') {
            unsigned int u = (unsigned int)x;
            memcpy(at, &u, sizeof u);
        } else {
            unsigned short u = (unsigned short)x;
            memcpy(at, &u, sizeof u);
        }
    }
    Py_DECREF(index);
    return rc;
}

/* `values`' numbers stored at `at` as `a`'s items; the size set back to `size` plus those
 * stored before a bad one (as array.extend leaves it). */
static inline int put_items(ArrayHead *a, Py_ssize_t size, char *at, PyObject *values) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(values);
    PyObject **items = PySequence_Fast_ITEMS(values);
    char typecode = a->ob_descr->typecode;
    int itemsize = a->ob_descr->itemsize;
    for (Py_ssize_t i = 0; i < n; i++)
        if (put_item(typecode, items[i], at + i * itemsize) < 0) {
            Py_SET_SIZE(a, size + i);
            return -1;
        }
    return 0;
}

/* A new array of `seed`'s type (a one-item array) holding `values`, a list or tuple of
 * numbers: a repeat of the seed (one allocation of the exact size, as array(typecode, list)
 * makes it) with each item stored in C. */
static inline PyObject *filled(PyObject *seed, PyObject *values) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(values);
    PyObject *made = PySequence_Repeat(seed, n);
    ArrayHead *a = (ArrayHead *)made;
    if (made != NULL && n && put_items(a, 0, a->ob_item, values) < 0) Py_CLEAR(made);
    return made;
}

/* array(typecode, values): `filled` from `seed` (a one-item array of that type code) for a
 * list or tuple, else the array type's own constructor. */
static inline PyObject *array_of(PyObject *seed, char typecode, PyObject *values) {
    if (!direct_arrays || (!PyList_CheckExact(values) && !PyTuple_CheckExact(values)))
        return PyObject_CallFunction((PyObject *)array_type, "CO", typecode, values);
    return filled(seed, values);
}

/* `array` as a direct array of a type code stored here, if `values` is a list or tuple. */
static inline ArrayHead *numbers_target(PyObject *array, PyObject *values) {
    if (!PyList_CheckExact(values) && !PyTuple_CheckExact(values)) return NULL;
    ArrayHead *a = direct_any(array);
    return a != NULL && strchr(NUMBER_CODES, a->ob_descr->typecode) ? a : NULL;
}

#endif
