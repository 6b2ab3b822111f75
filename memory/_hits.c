/* Search hits of hot memories, built from the hot tier's columns in one call a batch.
 *
 * The compiled form of memory.hits' Python path (HotStore.fields, then a model instance
 * with that dict as its state): per hit a 21-field dict and a MemoryHit whose pydantic
 * state is set directly, as `hits._made` does. The same values, keys in the same order,
 * the same objects where the Python path shares them (tags, metadata, the score given);
 * tests/memory/test_batch_builders.py compares the two field for field.
 *
 *   hits(columns, ids, rows, scores, tier, cls, fields_set) -> list
 *     columns   tuple of the hot store's columns (memory.hits.columns_of): typed arrays
 *               agent_ids q, days l, ts d, times d, importances d, layer_since d,
 *               access_counts q, last_accessed d (nan: never), expires d (inf: never);
 *               texts' bytearray and end offsets (q); values list and codes array (H or I)
 *               of topics, locations, layers, types; dicts links, evidence, tags, metadata
 *     ids, rows, scores  lists of one length: each hit's memory id, its hot row, its score
 *     tier      str given to every hit; cls the model class; fields_set the shared set
 *
 *   made(cls, fields, fields_set) -> one model with `fields` as its state (records.trusted)
 *
 *   count_reads(pending, last, ids, now) -> None: for each id in the list `ids`, in order,
 *               pending[id] = pending.get(id, 0) + 1 and last[id] = now (AccessLedger.record)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>

enum { N_NUMBERS = 9, N_CODED = 4, N_COLUMNS = 23 };
static const char *const KEYS[] = {
    "id",     "agent_id",      "text",       "topic",        "day",           "t",
    "time",   "location",      "importance", "cognition_ids", "evidence_ids", "layer",
    "layer_since", "type",     "tags",       "metadata",     "access_count",  "last_accessed",
    "expires_at",  "score",    "tier"};
enum { N_KEYS = 21 };
static PyObject *key_names[N_KEYS];
static PyObject *s_dict, *s_fields_set, *s_extra, *s_private, *empty_tuple;
static PyObject *template; /* every key in KEYS order, each None: copied for each hit */
/* The start of CPython's key-table header (3.11 to 3.13 without free threading), the part
 * read to find a unicode table's entries: each entry is (key, value), after the indices. */
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size, dk_log2_index_bytes, dk_kind;
    uint32_t dk_version;
    Py_ssize_t dk_usable, dk_nentries;
    char dk_indices[];
} KeysHead;
static int direct_entries; /* whether a copy of `template` lays out as KeysHead says */

/* The address of the first entry's value slot in `d` (a copy of `template`): entry k's value
 * is at [2k + 1] from the keys' start, i.e. [2k] from here. */
static PyObject **entry_values(PyObject *d) {
    KeysHead *keys = (KeysHead *)((PyDictObject *)d)->ma_keys;
    PyObject **entries = (PyObject **)(keys->dk_indices + ((size_t)1 << keys->dk_log2_index_bytes));
    return entries + 1;
}

/* Checks once that a copy of `template` has the layout `entry_values` assumes: a combined
 * table of 32 slots with one-byte indices, unicode keys (kind 1), the 21 entries in order,
 * each key one of ours and each value None. Otherwise values go in through PyDict_SetItem. */
static int layout_checked(void) {
    PyObject *d = PyDict_Copy(template);
    if (d == NULL) return -1;
    PyDictObject *mp = (PyDictObject *)d;
    KeysHead *keys = (KeysHead *)mp->ma_keys;
    int ok = mp->ma_values == NULL && mp->ma_used == N_KEYS && keys->dk_log2_size == 5 &&
             keys->dk_log2_index_bytes == 5 && keys->dk_kind == 1 && keys->dk_nentries == N_KEYS;
    if (ok) {
        PyObject **values = entry_values(d);
        for (int k = 0; k < N_KEYS && ok; k++)
            ok = values[2 * k - 1] == key_names[k] && values[2 * k] == Py_None;
    }
    Py_DECREF(d);
    return ok;
}

/* Typed-array columns in `columns` order and the item size each must have. */
static const Py_ssize_t NUMBER_SIZES[N_NUMBERS] = {8, sizeof(long), 8, 8, 8, 8, 8, 8, 8};

typedef struct {
    Py_buffer numbers[N_NUMBERS];
    Py_buffer text_data, text_ends;
    Py_buffer codes[N_CODED];
    PyObject *values[N_CODED];
    PyObject *links, *evidence, *tags, *metadata;
    int held; /* buffers acquired so far (released in reverse) */
} Columns;

static void release(Columns *c) {
    Py_buffer *all[N_NUMBERS + 2 + N_CODED];
    int n = 0;
    for (int i = 0; i < N_NUMBERS; i++) all[n++] = &c->numbers[i];
    all[n++] = &c->text_data;
    all[n++] = &c->text_ends;
    for (int i = 0; i < N_CODED; i++) all[n++] = &c->codes[i];
    for (int i = 0; i < c->held; i++) PyBuffer_Release(all[i]);
    c->held = 0;
}

static int take(Columns *c, Py_buffer *view, PyObject *obj, Py_ssize_t size, Py_ssize_t size2) {
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT) < 0) return -1;
    c->held++;
    if (view->itemsize != size && view->itemsize != size2) {
        PyErr_Format(PyExc_ValueError, "hits: a column has items of %zd bytes", view->itemsize);
        return -1;
    }
    return 0;
}

static int open_columns(Columns *c, PyObject *columns) {
    c->held = 0;
    if (!PyTuple_Check(columns) || PyTuple_GET_SIZE(columns) != N_COLUMNS) {
        PyErr_SetString(PyExc_TypeError, "hits: columns must be a tuple of 23");
        return -1;
    }
    int at = 0;
    for (int i = 0; i < N_NUMBERS; i++, at++)
        if (take(c, &c->numbers[i], PyTuple_GET_ITEM(columns, at), NUMBER_SIZES[i], 0) < 0)
            return -1;
    if (take(c, &c->text_data, PyTuple_GET_ITEM(columns, at++), 1, 1) < 0) return -1;
    if (take(c, &c->text_ends, PyTuple_GET_ITEM(columns, at++), 8, 8) < 0) return -1;
    for (int i = 0; i < N_CODED; i++) {
        c->values[i] = PyTuple_GET_ITEM(columns, at++);
        if (!PyList_Check(c->values[i])) {
            PyErr_SetString(PyExc_TypeError, "hits: coded values must be a list");
            return -1;
        }
        if (take(c, &c->codes[i], PyTuple_GET_ITEM(columns, at++), 2, 4) < 0) return -1;
    }
    PyObject **sparse[] = {&c->links, &c->evidence, &c->tags, &c->metadata};
    for (int i = 0; i < 4; i++) {
        *sparse[i] = PyTuple_GET_ITEM(columns, at++);
        if (!PyDict_Check(*sparse[i])) {
            PyErr_SetString(PyExc_TypeError, "hits: sparse columns must be dicts");
            return -1;
        }
    }
    return 0;
}

static PyObject *coded(Columns *c, int i, Py_ssize_t row) {
    Py_buffer *v = &c->codes[i];
    Py_ssize_t code = v->itemsize == 2 ? ((uint16_t *)v->buf)[row] : ((uint32_t *)v->buf)[row];
    if (code >= PyList_GET_SIZE(c->values[i])) {
        PyErr_SetString(PyExc_IndexError, "hits: a code past its column's values");
        return NULL;
    }
    return Py_NewRef(PyList_GET_ITEM(c->values[i], code));
}

/* `tuple(d.get(id, ())) if d else ()` (as_tuple) or `d.get(id, empty) if d else empty`. */
static PyObject *sparse_get(PyObject *d, PyObject *id, int as_tuple, int dict_default) {
    PyObject *found = PyDict_Size(d) ? PyDict_GetItemWithError(d, id) : NULL;
    if (found == NULL) {
        if (PyErr_Occurred()) return NULL;
        return dict_default ? PyDict_New() : Py_NewRef(empty_tuple);
    }
    return as_tuple ? PySequence_Tuple(found) : Py_NewRef(found);
}

static PyObject *d_at(Py_buffer *v, Py_ssize_t row) { return PyFloat_FromDouble(((double *)v->buf)[row]); }

#define SET(k, expr)                      \
    if ((vals[k] = (expr)) == NULL) goto done

static PyObject *fields_of(Columns *c, PyObject *id, Py_ssize_t row, PyObject *score, PyObject *tier) {
    PyObject *vals[N_KEYS] = {NULL}, *d = NULL;
    const int64_t *ends = c->text_ends.buf;
    int64_t start = row ? ends[row - 1] : 0, end = ends[row];
    double last = ((double *)c->numbers[7].buf)[row], expires = ((double *)c->numbers[8].buf)[row];
    if (start < 0 || start > end || end > c->text_data.len) {
        PyErr_Format(PyExc_ValueError, "hits: row %zd's text lies outside the text buffer", row);
        return NULL;
    }
    SET(0, Py_NewRef(id));
    SET(1, PyLong_FromLongLong(((int64_t *)c->numbers[0].buf)[row]));
    SET(2, PyUnicode_DecodeUTF8((const char *)c->text_data.buf + start, end - start, "surrogatepass"));
    SET(3, coded(c, 0, row));
    SET(4, PyLong_FromLong(((long *)c->numbers[1].buf)[row]));
    SET(5, d_at(&c->numbers[2], row));
    SET(6, d_at(&c->numbers[3], row));
    SET(7, coded(c, 1, row));
    SET(8, d_at(&c->numbers[4], row));
    SET(9, sparse_get(c->links, id, 1, 0));
    SET(10, sparse_get(c->evidence, id, 1, 0));
    SET(11, coded(c, 2, row));
    SET(12, d_at(&c->numbers[5], row));
    SET(13, coded(c, 3, row));
    SET(14, sparse_get(c->tags, id, 0, 0));
    SET(15, sparse_get(c->metadata, id, 0, 1));
    SET(16, PyLong_FromLongLong(((int64_t *)c->numbers[6].buf)[row]));
    SET(17, isnan(last) ? Py_NewRef(Py_None) : PyFloat_FromDouble(last));
    SET(18, isinf(expires) ? Py_NewRef(Py_None) : PyFloat_FromDouble(expires));
    SET(19, Py_NewRef(score));
    SET(20, Py_NewRef(tier));
    /* A copy of the template (its 21 keys in order, each None): CPython copies a dict like
     * it as one block, its keys already hashed and placed. Where the layout check at import
     * passed, each value is put straight into its entry (k: the template's k-th), else
     * replaced through PyDict_SetItem. */
    d = PyDict_Copy(template);
    if (d == NULL) goto done;
    if (direct_entries) {
        PyObject **slot = entry_values(d);
        int track = 0;
        for (int k = 0; k < N_KEYS; k++) {
            PyObject *v = vals[k];
            vals[k] = NULL; /* its reference goes into the dict */
            Py_DECREF(slot[2 * k]); /* the template's None */
            slot[2 * k] = v;
            track |= PyObject_IS_GC(v) && (!PyTuple_CheckExact(v) || PyObject_GC_IsTracked(v));
        }
        if (track && !PyObject_GC_IsTracked(d)) PyObject_GC_Track(d);
        goto done;
    }
    for (int k = 0; k < N_KEYS; k++)
        if (PyDict_SetItem(d, key_names[k], vals[k]) < 0) {
            Py_CLEAR(d);
            goto done;
        }
done:
    for (int k = 0; k < N_KEYS; k++) Py_XDECREF(vals[k]);
    return d;
}

/* The byte offset of `cls`'s object slot `name` (a member descriptor of T_OBJECT_EX, as
 * pydantic's BaseModel declares its three), or -1 when it is not one. */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *name) {
    PyObject *descr = _PyType_Lookup(cls, name); /* borrowed */
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return -1;
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    return member->type == T_OBJECT_EX && !(member->flags & READONLY) ? member->offset : -1;
}

/* The model's three pydantic slots, by offset for the last class seen (looked up again for
 * another class; -1: set through setattr). */
static PyTypeObject *slots_of;
static Py_ssize_t slot_at[3];

static int set_slot(PyObject *obj, int i, PyObject *name, PyObject *value) {
    if (slot_at[i] < 0) return PyObject_GenericSetAttr(obj, name, value);
    PyObject **at = (PyObject **)((char *)obj + slot_at[i]);
    Py_XSETREF(*at, Py_NewRef(value));
    return 0;
}

static PyObject *made(PyTypeObject *cls, PyObject *fields, PyObject *fields_set) {
    if (cls != slots_of) {
        slot_at[0] = slot_offset(cls, s_fields_set);
        slot_at[1] = slot_offset(cls, s_extra);
        slot_at[2] = slot_offset(cls, s_private);
        Py_XSETREF(slots_of, (PyTypeObject *)Py_NewRef(cls)); /* held: its address stays its */
    }
    PyObject *obj = cls->tp_new(cls, empty_tuple, NULL);
    if (obj == NULL) return NULL;
    if (PyObject_GenericSetAttr(obj, s_dict, fields) < 0 ||
        set_slot(obj, 0, s_fields_set, fields_set) < 0 || set_slot(obj, 1, s_extra, Py_None) < 0 ||
        set_slot(obj, 2, s_private, Py_None) < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    return obj;
}

static PyObject *hits(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *columns, *ids, *rows, *scores, *tier, *cls, *fields_set;
    if (!PyArg_ParseTuple(args, "OO!O!O!UO!O!", &columns, &PyList_Type, &ids, &PyList_Type,
                          &rows, &PyList_Type, &scores, &tier, &PyType_Type, &cls, &PySet_Type,
                          &fields_set))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ids);
    if (PyList_GET_SIZE(rows) != n || PyList_GET_SIZE(scores) != n) {
        PyErr_SetString(PyExc_ValueError, "hits: ids, rows and scores differ in length");
        return NULL;
    }
    Columns c;
    PyObject *out = NULL;
    if (open_columns(&c, columns) < 0) goto fail;
    Py_ssize_t n_rows = c.numbers[0].len / 8;
    for (int i = 0; i < N_NUMBERS; i++)
        if (c.numbers[i].len / c.numbers[i].itemsize != n_rows) goto uneven;
    if (c.text_ends.len / 8 != n_rows) goto uneven;
    for (int i = 0; i < N_CODED; i++)
        if (c.codes[i].len / c.codes[i].itemsize != n_rows) goto uneven;
    out = PyList_New(n);
    if (out == NULL) goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t row = PyLong_AsSsize_t(PyList_GET_ITEM(rows, j));
        if (row == -1 && PyErr_Occurred()) goto fail;
        if (row < 0 || row >= n_rows) {
            PyErr_Format(PyExc_IndexError, "hits: row %zd outside the %zd hot rows", row, n_rows);
            goto fail;
        }
        PyObject *fields = fields_of(&c, PyList_GET_ITEM(ids, j), row, PyList_GET_ITEM(scores, j), tier);
        if (fields == NULL) goto fail;
        PyObject *hit = made((PyTypeObject *)cls, fields, fields_set);
        Py_DECREF(fields);
        if (hit == NULL) goto fail;
        PyList_SET_ITEM(out, j, hit);
    }
    release(&c);
    return out;
uneven:
    PyErr_SetString(PyExc_ValueError, "hits: the columns differ in length");
fail:
    release(&c);
    Py_XDECREF(out);
    return NULL;
}

/* made(cls, fields, fields_set): a pydantic model with these (already valid) fields as its
 * state, as memory.records.trusted makes one in Python (one call, not four setattrs). */
static PyObject *made_py(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *cls, *fields, *fields_set;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &cls, &PyDict_Type, &fields, &PySet_Type,
                          &fields_set))
        return NULL;
    return made((PyTypeObject *)cls, fields, fields_set);
}

/* AccessLedger.record's loop: each id's read counted and its time set, in order. */
static PyObject *count_reads(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *pending, *last, *ids, *now;
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyDict_Type, &pending, &PyDict_Type, &last,
                          &PyList_Type, &ids, &now))
        return NULL;
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids); i++) {
        PyObject *id = PyList_GET_ITEM(ids, i);
        Py_INCREF(id);  /* a dict's hash may call back into Python: the list may change */
        PyObject *count = PyDict_GetItemWithError(pending, id);
        PyObject *next = NULL;
        if (count != NULL) next = PyNumber_Add(count, one);
        else if (!PyErr_Occurred()) next = Py_NewRef(one);
        int failed = next == NULL || PyDict_SetItem(pending, id, next) < 0 ||
                     PyDict_SetItem(last, id, now) < 0;
        Py_XDECREF(next);
        Py_DECREF(id);
        if (failed) {
            Py_DECREF(one);
            return NULL;
        }
    }
    Py_DECREF(one);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"hits", hits, METH_VARARGS, "MemoryHits of hot rows, from the columns (see the module doc)."},
    {"made", made_py, METH_VARARGS, "A model with these valid fields as its state."},
    {"count_reads", count_reads, METH_VARARGS, "AccessLedger.record's counting loop."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hits",
                                    "Search hits built from the hot columns.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__hits(void) {
    for (int k = 0; k < N_KEYS; k++)
        if ((key_names[k] = PyUnicode_InternFromString(KEYS[k])) == NULL) return NULL;
    if (!(s_dict = PyUnicode_InternFromString("__dict__")) ||
        !(s_fields_set = PyUnicode_InternFromString("__pydantic_fields_set__")) ||
        !(s_extra = PyUnicode_InternFromString("__pydantic_extra__")) ||
        !(s_private = PyUnicode_InternFromString("__pydantic_private__")) ||
        !(empty_tuple = PyTuple_New(0)) || !(template = PyDict_New()))
        return NULL;
    for (int k = 0; k < N_KEYS; k++)
        if (PyDict_SetItem(template, key_names[k], Py_None) < 0) return NULL;
    if ((direct_entries = layout_checked()) < 0) return NULL;
    return PyModule_Create(&module);
}
