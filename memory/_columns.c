/* A write's rows appended to the hot tier's few-valued columns and text column in one
 * call each, instead of a Python loop a row (memory.code_column, text_column,
 * hot_store). Each function leaves its column exactly as the Python path does
 * (tests/memory/test_columns_kernel.py):
 *
 *   codes_extend(column, values)          CodeColumn.extend: each value's code (a new value
 *                                         coded by the column's own `_code`), appended
 *   codes_extend_rows(column, src, rows)  CodeColumn.extend_rows: src's values at rows
 *   texts_extend(column, texts)           TextColumn.extend: UTF-8 (lone surrogates kept,
 *                                         as "surrogatepass") appended, one end offset each
 *
 * Codes are appended once a batch is coded: `_code` may widen the column's codes (2 → 4
 * bytes past 65,535 values) and the batch goes to the array the column holds then.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_arrays.h"

static PyObject *s_code, *s_code_of, *s_codes, *s_values, *s_data, *s_ends, *s_frombytes,
    *s_append, *s_itemsize;

/* `array.frombytes(bytes of n items of `size` bytes at buf)`: straight into its storage
 * where the array allows it (memory/_arrays.h), else through the method. */
static int array_append_raw(PyObject *array, const void *buf, Py_ssize_t n, Py_ssize_t size) {
    ArrayHead *a = direct_any(array);
    if (a != NULL && a->ob_descr->itemsize == size) {
        if (n == 0) return 0;
        char *at = grown(a, n);
        if (at == NULL) return -1;
        memcpy(at, buf, n * size);
        return 0;
    }
    PyObject *bytes = PyBytes_FromStringAndSize(buf, n * size);
    if (bytes == NULL) return -1;
    PyObject *r = PyObject_CallMethodOneArg(array, s_frombytes, bytes);
    Py_DECREF(bytes);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* The column's current codes array gets `codes` (n of them), narrowed to its item size. */
static int append_codes(PyObject *column, const uint32_t *codes, Py_ssize_t n) {
    PyObject *array = PyObject_GetAttr(column, s_codes);
    if (array == NULL) return -1;
    PyObject *size_obj = PyObject_GetAttr(array, s_itemsize);
    Py_ssize_t size = size_obj ? PyLong_AsSsize_t(size_obj) : -1;
    Py_XDECREF(size_obj);
    int rc = -1;
    if (size == 4) {
        rc = array_append_raw(array, codes, n, 4);
    } else if (size == 2) {
        uint16_t *narrow = PyMem_Malloc(n ? n * 2 : 1);
        if (narrow == NULL) {
            PyErr_NoMemory();
        } else {
            for (Py_ssize_t i = 0; i < n; i++) narrow[i] = (uint16_t)codes[i];
            rc = array_append_raw(array, narrow, n, 2);
            PyMem_Free(narrow);
        }
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_TypeError, "CodeColumn codes must be an array of 2- or 4-byte codes");
    }
    Py_DECREF(array);
    return rc;
}

/* `column._code(value)` as a C integer (a new value: the column codes it, may widen). */
static int new_code(PyObject *column, PyObject *value, uint32_t *out) {
    PyObject *code = PyObject_CallMethodOneArg(column, s_code, value);
    if (code == NULL) return -1;
    unsigned long c = PyLong_AsUnsignedLong(code);
    Py_DECREF(code);
    if (c == (unsigned long)-1 && PyErr_Occurred()) return -1;
    *out = (uint32_t)c;
    return 0;
}

static PyObject *codes_extend(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *column, *values;
    if (!PyArg_ParseTuple(args, "OO", &column, &values)) return NULL;
    PyObject *seq = PySequence_Fast(values, "codes_extend: values must be iterable");
    if (seq == NULL) return NULL;
    PyObject *code_of = PyObject_GetAttr(column, s_code_of), *result = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    uint32_t *codes = PyMem_Malloc(n ? n * 4 : 1);
    if (code_of == NULL || codes == NULL) {
        if (codes == NULL) PyErr_NoMemory();
        goto done;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *code = PyDict_GetItemWithError(code_of, items[i]);
        if (code != NULL) {
            codes[i] = (uint32_t)PyLong_AsUnsignedLong(code);
            if (PyErr_Occurred()) goto done;
        } else if (PyErr_Occurred() || new_code(column, items[i], &codes[i]) < 0) {
            goto done;
        }
    }
    if (append_codes(column, codes, n) == 0) result = Py_NewRef(Py_None);
done:
    PyMem_Free(codes);
    Py_XDECREF(code_of);
    Py_DECREF(seq);
    return result;
}

/* Rows as C indexes below `limit` (IndexError naming one past it, as the list would). */
static Py_ssize_t *rows_of(PyObject *rows_seq, Py_ssize_t n, Py_ssize_t limit) {
    Py_ssize_t *rows = PyMem_Malloc(n ? n * sizeof(Py_ssize_t) : 1);
    if (rows == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(rows_seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t r = PyNumber_AsSsize_t(items[i], PyExc_IndexError);
        if (r == -1 && PyErr_Occurred()) goto fail;
        if (r < 0 || r >= limit) {
            PyErr_Format(PyExc_IndexError, "row %zd out of range (%zd rows)", r, limit);
            goto fail;
        }
        rows[i] = r;
    }
    return rows;
fail:
    PyMem_Free(rows);
    return NULL;
}

static PyObject *codes_extend_rows(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *column, *src, *rows_arg;
    if (!PyArg_ParseTuple(args, "OOO", &column, &src, &rows_arg)) return NULL;
    PyObject *seq = PySequence_Fast(rows_arg, "codes_extend_rows: rows must be iterable");
    if (seq == NULL) return NULL;
    PyObject *src_codes = PyObject_GetAttr(src, s_codes), *src_values = NULL, *result = NULL,
             *code_of = NULL; /* one dict the column's `_code` adds to: read once */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), *rows = NULL;
    uint32_t *codes = NULL, *mine = NULL;
    Py_buffer b = {0};
    if (src_codes == NULL || PyObject_GetBuffer(src_codes, &b, PyBUF_FORMAT) < 0) goto done;
    src_values = PyObject_GetAttr(src, s_values);
    code_of = src_values ? PyObject_GetAttr(column, s_code_of) : NULL;
    if (code_of == NULL) goto release;
    if (!PyList_Check(src_values)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "CodeColumn values must be a list");
        goto release;
    }
    if (b.itemsize != 2 && b.itemsize != 4) {
        PyErr_SetString(PyExc_TypeError, "CodeColumn codes must be an array of 2- or 4-byte codes");
        goto release;
    }
    Py_ssize_t count = b.len / b.itemsize, vocabulary = PyList_GET_SIZE(src_values);
    rows = rows_of(seq, n, count);
    codes = PyMem_Malloc(n ? n * 4 : 1);
    /* src code -> this column's code, for the values met (UINT32_MAX: not yet). A batch's
     * rows hold few distinct values, but the vocabulary may be large (places): a table a
     * call sized by the vocabulary, or none when it is far larger than the batch. */
    Py_ssize_t table = vocabulary <= 4 * n + 1024 ? vocabulary : 0;
    mine = PyMem_Malloc(table ? table * 4 : 1);
    if (rows == NULL || codes == NULL || mine == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto release;
    }
    memset(mine, 0xff, table * 4);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t r = rows[i];
        uint32_t theirs = b.itemsize == 2 ? ((uint16_t *)b.buf)[r] : ((uint32_t *)b.buf)[r];
        if ((Py_ssize_t)theirs >= vocabulary) {
            PyErr_Format(PyExc_ValueError, "code %u of row %zd has no value", theirs, r);
            goto release;
        }
        if (table && mine[theirs] != UINT32_MAX) {
            codes[i] = mine[theirs];
            continue;
        }
        PyObject *value = PyList_GET_ITEM(src_values, theirs);
        PyObject *known = PyDict_GetItemWithError(code_of, value);
        if (known != NULL) {
            codes[i] = (uint32_t)PyLong_AsUnsignedLong(known);
        } else if (!PyErr_Occurred()) {
            Py_INCREF(value); /* _code may run Python code: keep the value alive */
            new_code(column, value, &codes[i]);
            Py_DECREF(value);
        }
        if (PyErr_Occurred()) goto release;
        if (table) mine[theirs] = codes[i];
    }
    PyBuffer_Release(&b);
    if (append_codes(column, codes, n) == 0) result = Py_NewRef(Py_None);
    goto done;
release:
    PyBuffer_Release(&b);
done:
    PyMem_Free(rows);
    PyMem_Free(codes);
    PyMem_Free(mine);
    Py_XDECREF(src_codes);
    Py_XDECREF(src_values);
    Py_XDECREF(code_of);
    Py_DECREF(seq);
    return result;
}

/* The column's bytearray and end offsets, checked. */
static int text_parts(PyObject *column, PyObject **data, PyObject **ends) {
    *data = PyObject_GetAttr(column, s_data);
    *ends = *data ? PyObject_GetAttr(column, s_ends) : NULL;
    if (*ends == NULL) {
        Py_XDECREF(*data);
        return -1;
    }
    if (!PyByteArray_Check(*data)) {
        PyErr_SetString(PyExc_TypeError, "TextColumn data must be a bytearray");
        Py_DECREF(*data);
        Py_DECREF(*ends);
        return -1;
    }
    return 0;
}

static PyObject *texts_extend(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *column, *texts;
    if (!PyArg_ParseTuple(args, "OO", &column, &texts)) return NULL;
    PyObject *seq = PySequence_Fast(texts, "texts_extend: texts must be iterable");
    if (seq == NULL) return NULL;
    PyObject *data, *ends, *result = NULL;
    if (text_parts(column, &data, &ends) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject **encoded = PyMem_Calloc(n ? n : 1, sizeof(PyObject *)); /* bytes, if needed */
    const char **utf8 = PyMem_Malloc((n ? n : 1) * sizeof(char *));
    Py_ssize_t *lengths = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    int64_t *offsets = PyMem_Malloc((n ? n : 1) * 8);
    if (encoded == NULL || utf8 == NULL || lengths == NULL || offsets == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t start = PyByteArray_GET_SIZE(data), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = items[i];
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "texts must be str, got %.100s", Py_TYPE(text)->tp_name);
            goto done;
        }
        if (PyUnicode_IS_ASCII(text)) { /* its own bytes are its UTF-8: nothing made */
            utf8[i] = PyUnicode_AsUTF8AndSize(text, &lengths[i]);
            if (utf8[i] == NULL) goto done;
        } else { /* a temporary bytes, as the Python path's encode (no UTF-8 copy cached in
                  * the str); lone surrogates kept */
            encoded[i] = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
            if (encoded[i] == NULL) goto done;
            utf8[i] = PyBytes_AS_STRING(encoded[i]);
            lengths[i] = PyBytes_GET_SIZE(encoded[i]);
        }
        total += lengths[i];
        offsets[i] = start + total;
    }
    if (PyByteArray_Resize(data, start + total) < 0) goto done;
    char *out = PyByteArray_AS_STRING(data) + start;
    for (Py_ssize_t i = 0; i < n; i++) {
        memcpy(out, utf8[i], lengths[i]);
        out += lengths[i];
    }
    if (array_append_raw(ends, offsets, n, 8) == 0) result = Py_NewRef(Py_None);
done:
    if (encoded != NULL)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(encoded[i]);
    PyMem_Free(encoded);
    PyMem_Free(utf8);
    PyMem_Free(lengths);
    PyMem_Free(offsets);
    Py_DECREF(data);
    Py_DECREF(ends);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef methods[] = {
    {"codes_extend", codes_extend, METH_VARARGS, "CodeColumn.extend in one call."},
    {"codes_extend_rows", codes_extend_rows, METH_VARARGS, "CodeColumn.extend_rows in one call."},
    {"texts_extend", texts_extend, METH_VARARGS, "TextColumn.extend in one call."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_columns", "Compiled appends to the hot tier's columns.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__columns(void) {
    PyObject **names[] = {&s_code, &s_code_of, &s_codes,    &s_values,  &s_data,
                          &s_ends, &s_frombytes, &s_append, &s_itemsize};
    const char *texts[] = {"_code", "_code_of", "codes",  "values",  "_data",
                           "_ends", "frombytes", "append", "itemsize"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *names[i] = PyUnicode_InternFromString(texts[i]);
        if (*names[i] == NULL) return NULL;
    }
    if ((direct_arrays = arrays_checked()) < 0) return NULL;
    return PyModule_Create(&module);
}
