/* One search's relevance, score and top k over an agent's RAM postings, in one call.
 *
 * The compiled form of memory.ram_ranking's numpy path (few dozen numpy calls a search,
 * each ~1 us of call overhead on ~1,600 stored terms): the same arithmetic in the same
 * order, so the results are bit-identical to that path (tests/memory/test_rank_kernel.py).
 *
 *   rank(terms, weights, ends, query, score, mask, k_sat, gamma, saturate, relevant_only, k)
 *     terms   uint32 buffer: the agent's stored terms, row after row
 *     weights float32 buffer: their BM25 weights
 *     ends    uint32 buffer: row r's terms are terms[ends[r-1]:ends[r]]
 *     query   list of (term, q(t) * idf(t)) tuples
 *     score   writable float64 buffer, one per row: alpha*recency + beta*importance on
 *             entry, gamma*relevance added in place
 *     mask    1-byte buffer (rows allowed) or None (all rows)
 *   returns (rows, scores, candidates): the k best rows, best first, ties newest (highest
 *   row) first; their scores; how many rows competed. ValueError on a NaN score.
 *
 * raw(row) = sum over the row's terms, in stored order, of (double)weight * query weight,
 * from 0.0 (as numpy's bincount sums); relevance = raw / (raw + k_sat) when saturating.
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

static int read_query(PyObject *query, QueryTerm *q, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(query, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "query items must be (term, weight) tuples");
            return -1;
        }
        unsigned long term = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(pair, 0));
        double weight = PyFloat_AsDouble(PyTuple_GET_ITEM(pair, 1));
        if (PyErr_Occurred())
            return -1;
        q[i].term = (uint32_t)term;
        q[i].weight = weight;
    }
    qsort(q, (size_t)n, sizeof(QueryTerm), by_term);
    return 0;
}

static PyObject *rank(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer terms_b, weights_b, ends_b, score_b;
    PyObject *query, *mask_obj, *out = NULL;
    double k_sat, gamma;
    int saturate, relevant_only, k;
    if (!PyArg_ParseTuple(args, "y*y*y*Ow*Oddppi", &terms_b, &weights_b, &ends_b, &query,
                          &score_b, &mask_obj, &k_sat, &gamma, &saturate, &relevant_only, &k))
        return NULL;
    Py_buffer mask_b = {0};
    int have_mask = mask_obj != Py_None;
    if (have_mask && PyObject_GetBuffer(mask_obj, &mask_b, PyBUF_SIMPLE) < 0)
        goto done_buffers;

    QueryTerm q_stack[STACK_QUERY], *q = q_stack;
    Py_ssize_t best_row_stack[STACK_K], *best_row = best_row_stack;
    double best_stack[STACK_K], *best = best_stack;
    if (!PyList_Check(query)) {
        PyErr_SetString(PyExc_TypeError, "query must be a list of (term, weight) tuples");
        goto done;
    }
    int nq = (int)PyList_GET_SIZE(query);
    if (k < 0) {
        PyErr_SetString(PyExc_ValueError, "k must not be negative");
        goto done;
    }
    if ((nq > STACK_QUERY && !(q = PyMem_Malloc(sizeof(QueryTerm) * nq))) ||
        (k > STACK_K && (!(best_row = PyMem_Malloc(sizeof(Py_ssize_t) * k)) ||
                         !(best = PyMem_Malloc(sizeof(double) * k))))) {
        PyErr_NoMemory();
        goto done;
    }
    if (read_query(query, q, nq) < 0)
        goto done;
    const uint32_t *terms = terms_b.buf, *ends = ends_b.buf;
    const float *weights = weights_b.buf;
    double *score = score_b.buf;
    const unsigned char *mask = have_mask ? mask_b.buf : NULL;
    Py_ssize_t n_terms = terms_b.len / 4, rows = ends_b.len / 4;
    if (weights_b.len / 4 != n_terms || score_b.len / 8 != rows ||
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
        PyList_SET_ITEM(row_list, i, PyLong_FromSsize_t(best_row[i]));
        PyList_SET_ITEM(score_list, i, PyFloat_FromDouble(best[i]));
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
    PyBuffer_Release(&terms_b);
    PyBuffer_Release(&weights_b);
    PyBuffer_Release(&ends_b);
    PyBuffer_Release(&score_b);
    return out;
}

static PyMethodDef methods[] = {
    {"rank", rank, METH_VARARGS, "One search's relevance, score and top k (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rank", "Compiled RAM ranking (memory.ram_ranking).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rank(void) { return PyModule_Create(&module); }
