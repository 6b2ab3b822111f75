/* One search's query weights, relevance, score and top k over an agent's RAM postings.
 *
 * The compiled form of memory.ram_ranking's numpy path (a few dozen numpy calls a search,
 * each ~1 us of call overhead over ~1,600 stored terms) and of SparseIndex.query_weights:
 * the same arithmetic in the same order, so the results are bit-identical to that path
 * (tests/memory/test_rank_kernel.py).
 *
 *   rank(ids, terms, weights, ends, q_terms, q_values, df, docs, score, mask,
 *        k_sat, gamma, saturate, relevant_only, k)
 *     ids      int64 buffer: the agent's memory ids, one per row
 *     terms    uint32 buffer: the agent's stored terms, row after row
 *     weights  float32 buffer: their BM25 weights
 *     ends     uint32 buffer: row r's terms are terms[ends[r-1]:ends[r]]
 *     q_terms, q_values  the query's sparse vector (uint32, float32 buffers)
 *     df, docs the group's term counts (dict: term -> memories holding it) and memories
 *     score    writable float64 buffer, one per row: alpha*recency + beta*importance on
 *              entry, gamma*relevance added in place
 *     mask     1-byte buffer (rows allowed) or None (all rows)
 *     relevant_only  only rows sharing a term with the query compete (when it has terms)
 *   returns (ids, scores, candidates): the k best memories, best first, ties newest (highest
 *   row) first; their scores; how many rows competed. ValueError on a NaN score.
 *
 * q(t) * idf(t) = value * ln(1 + (docs - df(t) + 0.5) / (df(t) + 0.5)) for the query's terms
 * any memory holds; raw(row) = sum over the row's terms, in stored order, of (double)weight
 * * q(t) idf(t), from 0.0 (as numpy's bincount sums); relevance = raw / (raw + k_sat) when
 * saturating.
 *
 * decay_args and weigh: alpha*recency + beta*importance around numpy's exp (its bits are
 * numpy's, not libm's), in two passes instead of seven numpy calls: a lone search's rows,
 * or a batch's agents' rows written one after another into one (reused) buffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define STACK_QUERY 64 /* query terms and top k held on the stack up to these; else heap */
#define STACK_K 16

typedef struct {
    uint32_t term;
    double weight;
} QueryTerm;

static int by_term(const void *a, const void *b) {
    uint32_t x = ((const QueryTerm *)a)->term, y = ((const QueryTerm *)b)->term;
    return (x > y) - (x < y);
}

/* Index of `term` among the sorted query terms, or -1. */
static inline int find_term(const QueryTerm *q, int nq, uint32_t term) {
    int lo = 0, hi = nq;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (q[mid].term < term)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < nq && q[lo].term == term) ? lo : -1;
}

/* The query's (term, q(t) * idf(t)) for terms that any memory holds, sorted by term, as
 * SparseIndex.query_weights computes them; returns how many, or -1 with an error set. */
static int read_query(const uint32_t *q_terms, const float *q_values, Py_ssize_t n,
                      PyObject *df, long long docs, QueryTerm *q) {
    int kept = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyLong_FromUnsignedLong(q_terms[i]);
        if (!key)
            return -1;
        PyObject *found = PyDict_GetItemWithError(df, key); /* borrowed */
        Py_DECREF(key);
        if (!found) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        long long count = PyLong_AsLongLong(found);
        if (count == -1 && PyErr_Occurred())
            return -1;
        if (!count)
            continue;
        q[kept].term = q_terms[i];
        q[kept].weight =
            (double)q_values[i] * log(1.0 + ((double)(docs - count) + 0.5) / ((double)count + 0.5));
        kept++;
    }
    qsort(q, (size_t)kept, sizeof(QueryTerm), by_term);
    return kept;
}

static PyObject *rank(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer ids_b, terms_b, weights_b, ends_b, qt_b, qv_b, score_b;
    PyObject *df, *mask_obj, *out = NULL;
    long long docs;
    double k_sat, gamma;
    int saturate, relevant_only, k;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*O!Lw*Oddppi", &ids_b, &terms_b, &weights_b,
                          &ends_b, &qt_b, &qv_b, &PyDict_Type, &df, &docs, &score_b, &mask_obj,
                          &k_sat, &gamma, &saturate, &relevant_only, &k))
        return NULL;
    Py_buffer mask_b = {0};
    int have_mask = mask_obj != Py_None;
    if (have_mask && PyObject_GetBuffer(mask_obj, &mask_b, PyBUF_SIMPLE) < 0)
        goto done_buffers;

    QueryTerm q_stack[STACK_QUERY], *q = q_stack;
    Py_ssize_t best_row_stack[STACK_K], *best_row = best_row_stack;
    double best_stack[STACK_K], *best = best_stack;
    Py_ssize_t n_query = qt_b.len / 4;
    if (qv_b.len / 4 != n_query) {
        PyErr_SetString(PyExc_ValueError, "query terms and values lengths disagree");
        goto done;
    }
    if (k < 0) {
        PyErr_SetString(PyExc_ValueError, "k must not be negative");
        goto done;
    }
    if ((n_query > STACK_QUERY && !(q = PyMem_Malloc(sizeof(QueryTerm) * n_query))) ||
        (k > STACK_K && (!(best_row = PyMem_Malloc(sizeof(Py_ssize_t) * k)) ||
                         !(best = PyMem_Malloc(sizeof(double) * k))))) {
        PyErr_NoMemory();
        goto done;
    }
    int nq = read_query(qt_b.buf, qv_b.buf, n_query, df, docs, q);
    if (nq < 0)
        goto done;
    relevant_only = relevant_only && n_query > 0; /* a query without terms ranks all rows */
    const int64_t *ids = ids_b.buf;
    const uint32_t *terms = terms_b.buf, *ends = ends_b.buf;
    const float *weights = weights_b.buf;
    double *score = score_b.buf;
    const unsigned char *mask = have_mask ? mask_b.buf : NULL;
    Py_ssize_t n_terms = terms_b.len / 4, rows = ends_b.len / 4;
    if (weights_b.len / 4 != n_terms || score_b.len / 8 != rows || ids_b.len / 8 != rows ||
        (have_mask && mask_b.len != rows)) {
        PyErr_SetString(PyExc_ValueError, "postings, score and mask lengths disagree");
        goto done;
    }
    /* A 64-bit filter of the query terms' low bits: most stored terms fail it at once. */
    uint64_t filter = 0;
    for (int i = 0; i < nq; i++)
        filter |= (uint64_t)1 << (q[i].term & 63);
    int found = 0;
    Py_ssize_t candidates = 0, start = 0;
    for (Py_ssize_t r = 0; r < rows; r++) {
        Py_ssize_t end = ends[r];
        if (end > n_terms) {
            PyErr_SetString(PyExc_ValueError, "a row ends past the stored terms");
            goto done;
        }
        double raw = 0.0;
        int matched = 0;
        if (nq)
            for (Py_ssize_t j = start; j < end; j++) {
                if (!(filter >> (terms[j] & 63) & 1))
                    continue;
                int at = find_term(q, nq, terms[j]);
                if (at >= 0) {
                    raw += (double)weights[j] * q[at].weight;
                    matched = 1;
                }
            }
        start = end;
        if (matched && raw != 0.0) {
            double relevance = saturate ? raw / (raw + k_sat) : raw;
            score[r] += gamma == 1.0 ? relevance : gamma * relevance;
        }
        if ((mask && !mask[r]) || (relevant_only && !(raw > 0.0)))
            continue;
        candidates++;
        double s = score[r];
        if (isnan(s)) {
            PyErr_SetString(PyExc_ValueError, "a score is NaN: scores must be comparable");
            goto done;
        }
        /* Later rows win ties (newest first): insert before any entry not above s. */
        int at = found;
        while (at > 0 && best[at - 1] <= s)
            at--;
        if (at >= k)
            continue;
        int last = found < k ? found : k - 1;
        for (int i = last; i > at; i--) {
            best[i] = best[i - 1];
            best_row[i] = best_row[i - 1];
        }
        best[at] = s;
        best_row[at] = r;
        if (found < k)
            found++;
    }
    PyObject *row_list = PyList_New(found), *score_list = PyList_New(found);
    if (!row_list || !score_list) {
        Py_XDECREF(row_list);
        Py_XDECREF(score_list);
        goto done;
    }
    for (int i = 0; i < found; i++) {
        PyObject *id = PyLong_FromLongLong(ids[best_row[i]]), *value = PyFloat_FromDouble(best[i]);
        if (!id || !value) {
            Py_XDECREF(id);
            Py_XDECREF(value);
            Py_DECREF(row_list);
            Py_DECREF(score_list);
            goto done;
        }
        PyList_SET_ITEM(row_list, i, id);
        PyList_SET_ITEM(score_list, i, value);
    }
    out = Py_BuildValue("(NNn)", row_list, score_list, candidates);
done:
    if (q != q_stack)
        PyMem_Free(q);
    if (best_row != best_row_stack)
        PyMem_Free(best_row);
    if (best != best_stack)
        PyMem_Free(best);
    if (have_mask)
        PyBuffer_Release(&mask_b);
done_buffers:
    PyBuffer_Release(&ids_b);
    PyBuffer_Release(&terms_b);
    PyBuffer_Release(&weights_b);
    PyBuffer_Release(&ends_b);
    PyBuffer_Release(&qt_b);
    PyBuffer_Release(&qv_b);
    PyBuffer_Release(&score_b);
    return out;
}

/* The buffers a recency pass reads: `arg` itself, or each item of `arg` when it is a list
 * (a batch's agents, one after another). Returns the count filled (<= MAX_PARTS) or -1. */
#define MAX_PARTS_STACK 64
static Py_ssize_t open_parts(PyObject *arg, Py_buffer *parts, Py_ssize_t cap) {
    PyObject *one[1] = {arg};
    PyObject **items = one;
    Py_ssize_t n = 1;
    if (PyList_Check(arg)) {
        items = PySequence_Fast_ITEMS(arg);
        n = PyList_GET_SIZE(arg);
    }
    if (n > cap) {
        PyErr_SetString(PyExc_RuntimeError, "open_parts: too many buffers for the space given");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyObject_GetBuffer(items[i], &parts[i], PyBUF_SIMPLE) < 0) {
            for (Py_ssize_t j = 0; j < i; j++) PyBuffer_Release(&parts[j]);
            return -1;
        }
    }
    return n;
}

static void release_parts(Py_buffer *parts, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) PyBuffer_Release(&parts[i]);
}

/* The parts hold doubles and, together, exactly `len` bytes; else ValueError naming `what`. */
static int parts_fill(Py_buffer *parts, Py_ssize_t n, Py_ssize_t len, const char *what) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (parts[i].len % 8) goto bad;
        total += parts[i].len;
    }
    if (total == len && len % 8 == 0) return 0;
bad:
    PyErr_Format(PyExc_ValueError, "%s: buffers of doubles of one length expected", what);
    return -1;
}

/* Parts and their buffer space: on the stack for a batch of up to MAX_PARTS_STACK agents. */
typedef struct {
    Py_buffer stack[MAX_PARTS_STACK];
    Py_buffer *parts;
    Py_ssize_t n;
} Parts;

static int parts_open(Parts *p, PyObject *arg) {
    Py_ssize_t cap = PyList_Check(arg) ? PyList_GET_SIZE(arg) : 1;
    p->parts = cap <= MAX_PARTS_STACK ? p->stack : PyMem_Calloc(cap, sizeof(Py_buffer));
    if (p->parts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    p->n = open_parts(arg, p->parts, cap);
    if (p->n < 0) {
        if (p->parts != p->stack) PyMem_Free(p->parts);
        return -1;
    }
    return 0;
}

static void parts_close(Parts *p) {
    release_parts(p->parts, p->n);
    if (p->parts != p->stack) PyMem_Free(p->parts);
}

/* decay_args(times, now, log_decay, out): out[i] = |now - times[i]| * log_decay, the
 * argument of the recency exp (numpy's `abs(now - times) * c`, bit for bit). `times` is one
 * buffer (a lone search) or a list of them (a batch's agents, written one after another). */
static PyObject *decay_args(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *times_arg;
    Py_buffer out_b;
    double now, log_decay;
    if (!PyArg_ParseTuple(args, "Oddw*", &times_arg, &now, &log_decay, &out_b)) return NULL;
    PyObject *result = NULL;
    Parts p;
    if (parts_open(&p, times_arg) == 0) {
        if (parts_fill(p.parts, p.n, out_b.len, "decay_args") == 0) {
            double *out = out_b.buf;
            for (Py_ssize_t k = 0; k < p.n; k++) {
                const double *times = p.parts[k].buf;
                Py_ssize_t n = p.parts[k].len / 8;
                for (Py_ssize_t i = 0; i < n; i++) out[i] = fabs(now - times[i]) * log_decay;
                out += n;
            }
            result = Py_NewRef(Py_None);
        }
        parts_close(&p);
    }
    PyBuffer_Release(&out_b);
    return result;
}

/* weigh(score, importances, alpha, beta): score = alpha * score + beta * importance in
 * numpy's order (`score *= alpha` unless alpha is 1, then `+= importance` or `+= beta * it`);
 * `importances` one buffer or a list of them, as decay_args' times. */
static PyObject *weigh(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer score_b;
    PyObject *imp_arg;
    double alpha, beta;
    if (!PyArg_ParseTuple(args, "w*Odd", &score_b, &imp_arg, &alpha, &beta)) return NULL;
    PyObject *result = NULL;
    Parts p;
    if (parts_open(&p, imp_arg) == 0) {
        if (parts_fill(p.parts, p.n, score_b.len, "weigh") == 0) {
            double *score = score_b.buf;
            for (Py_ssize_t k = 0; k < p.n; k++) {
                const double *imp = p.parts[k].buf;
                Py_ssize_t n = p.parts[k].len / 8;
                for (Py_ssize_t i = 0; i < n; i++) {
                    if (alpha != 1.0) score[i] *= alpha;
                    score[i] += beta == 1.0 ? imp[i] : beta * imp[i];
                }
                score += n;
            }
            result = Py_NewRef(Py_None);
        }
        parts_close(&p);
    }
    PyBuffer_Release(&score_b);
    return result;
}

static PyMethodDef methods[] = {
    {"rank", rank, METH_VARARGS, "One search's relevance, score and top k (see the module)."},
    {"decay_args", decay_args, METH_VARARGS, "A lone search's recency exp arguments."},
    {"weigh", weigh, METH_VARARGS, "alpha * recency + beta * importance, in place."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rank", "Compiled RAM ranking (memory.ram_ranking).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rank(void) { return PyModule_Create(&module); }
