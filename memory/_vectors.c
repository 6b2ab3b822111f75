/* BM25 answers made into the embedder's vectors in one call (memory.embedding.bm25), not a
 * Python comprehension a text (two `typed_array` calls and `sparse_text_vectors` each: ~2 µs
 * a text against the Rust embedding's ~3):
 *
 *   text_vectors(answers, sparse_cls, vectors_cls) -> list
 *     answers      a list of objects with `indices` (term ids) and `values` (weights)
 *     sparse_cls   SparseVector: slots `indices`, `values`
 *     vectors_cls  TextVectors: slots `dense`, `sparse`
 *   Each answer becomes vectors_cls(dense=None, sparse=sparse_cls(array('I', indices),
 *   array('f', values))), made as `sparse_text_vectors` makes them (object.__new__, then the
 *   slots set past the frozen dataclass's __setattr__); the numbers stored with `array`'s
 *   checks (memory/_arrays.h), a list or tuple in C, anything else by `array` itself.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_arrays.h"

static PyObject *s_indices, *s_values, *s_dense, *s_sparse;
static PyObject *seed_terms, *seed_weights; /* array('I', [0]), array('f', [0.0]) */

/* The byte offset of `cls`'s object slot `name` (a member descriptor of its own), or -1 with
 * TypeError. */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *name) {
    PyObject *descr = PyDict_GetItemWithError(cls->tp_dict, name);
    if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if ((member->type == T_OBJECT_EX || member->type == T_OBJECT) &&
            !(member->flags & READONLY))
            return member->offset;
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "text_vectors: %s has no object slot %R", cls->tp_name,
                     name);
    return -1;
}

/* A new instance of `cls` (as object.__new__(cls)) with `a` and `b` in its slots at `at_a`
 * and `at_b` (references taken). */
static PyObject *made(PyTypeObject *cls, Py_ssize_t at_a, PyObject *a, Py_ssize_t at_b,
                      PyObject *b) {
    PyObject *obj = cls->tp_alloc(cls, 0);
    if (obj == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    *(PyObject **)((char *)obj + at_a) = a;
    *(PyObject **)((char *)obj + at_b) = b;
    return obj;
}

static PyObject *text_vectors(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *answers, *out = NULL;
    PyTypeObject *sparse_cls, *vectors_cls;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &answers, &PyType_Type, &sparse_cls,
                          &PyType_Type, &vectors_cls))
        return NULL;
    Py_ssize_t at_indices = slot_offset(sparse_cls, s_indices);
    Py_ssize_t at_values = at_indices < 0 ? -1 : slot_offset(sparse_cls, s_values);
    Py_ssize_t at_dense = at_values < 0 ? -1 : slot_offset(vectors_cls, s_dense);
    Py_ssize_t at_sparse = at_dense < 0 ? -1 : slot_offset(vectors_cls, s_sparse);
    if (at_sparse < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(answers);
    if ((out = PyList_New(n)) == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *answer = PyList_GET_ITEM(answers, i), *terms = NULL, *weights = NULL;
        PyObject *indices = PyObject_GetAttr(answer, s_indices);
        PyObject *values = indices == NULL ? NULL : PyObject_GetAttr(answer, s_values);
        if (values != NULL && (terms = array_of(seed_terms, 'I', indices)) != NULL)
            weights = array_of(seed_weights, 'f', values);
        Py_XDECREF(indices);
        Py_XDECREF(values);
        if (weights == NULL) {
            Py_XDECREF(terms);
            goto fail;
        }
        PyObject *sparse = made(sparse_cls, at_indices, terms, at_values, weights);
        PyObject *vectors = sparse == NULL ? NULL
                                           : made(vectors_cls, at_dense, Py_NewRef(Py_None),
                                                  at_sparse, sparse);
        if (vectors == NULL) goto fail;
        PyList_SET_ITEM(out, i, vectors);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"text_vectors", text_vectors, METH_VARARGS, "BM25 answers as TextVectors (see the module)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_vectors",
                                    "BM25 answers made into the embedder's vectors in C.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__vectors(void) {
    if (!(s_indices = PyUnicode_InternFromString("indices")) ||
        !(s_values = PyUnicode_InternFromString("values")) ||
        !(s_dense = PyUnicode_InternFromString("dense")) ||
        !(s_sparse = PyUnicode_InternFromString("sparse")))
        return NULL;
    if ((direct_arrays = arrays_checked()) < 0) return NULL;
    if (!(seed_terms = PyObject_CallFunction((PyObject *)array_type, "C(i)", 'I', 0)) ||
        !(seed_weights = PyObject_CallFunction((PyObject *)array_type, "C(d)", 'f', 0.0)))
        return NULL;
    return PyModule_Create(&module);
}
