/* A controller's assignment dump read into Arrow's layout, without a Python object per item.
 *
 * templates/controller.py's _assignments_listed reads "preferred replicas by broker Map(...)" and "topics not in
 * preferred replica Map(...)" (KafkaController.checkAndTriggerPartitionRebalance, DEBUG, every five minutes, one
 * item per partition): on a real corpus most events are these items. assignments(text, head) does what its Python
 * loop does for the common shapes and returns None for anything else, so the Python loop stays the one definition
 * (tests/test_assignment_dump.py holds both equal on every real dump line and on made-up ones):
 *
 *   items: findall of ((\[[^\]]+\]|[^\s,()>]+) -> \w*\(([\d, ]*)\)) over text (Python's str semantics: every
 *     quantifier here is followed by a character its class excludes, so the match is the greedy one, no
 *     backtracking);
 *   partition "topic-N" (split at the last '-') or "[topic,N]", N plain ASCII digits; AR "1, 2, 3" as Scala prints
 *     a Seq (pieces of digits, spaces around them);
 *   raw: head + item + " ...".
 *
 * The columns come back as bytes in Arrow's layout (parsers.schema.Packed): topics and raws as ASCII text with
 * each item's end (int32), partitions as int32, the ARs as int32 values with each item's end among them. Per item
 * nothing is allocated: a dump of thousands of partitions was a list, a string and an int each, and the cyclic
 * collector's passes over those lists.
 *
 * None (the Python path) for: a non-ASCII character in text or head, an item whose partition is not of those two
 * shapes (the Python skips it or reads it otherwise), an empty AR or one Python's int() would refuse, a number
 * past int32 (the event's column type: the Python path gives the int, which the Arrow writer refuses alike).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* [^\s,()>] for ASCII: Python's \s is \t\n\v\f\r, \x1c-\x1f and space */
static int is_tp_char(char c)
{
    if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'))
        return 0;
    return c != ',' && c != '(' && c != ')' && c != '>';
}

/* " -> \w*\([\d, ]*\)" from r: the match's end, or -1; the AR's span in *ar, *ar_end */
static Py_ssize_t rest(const char *s, Py_ssize_t n, Py_ssize_t r, Py_ssize_t *ar, Py_ssize_t *ar_end)
{
    if (r + 4 > n || memcmp(s + r, " -> ", 4) != 0)
        return -1;
    r += 4;
    while (r < n && is_word(s[r]))
        r++;
    if (r >= n || s[r] != '(')
        return -1;
    *ar = ++r;
    while (r < n && (is_digit(s[r]) || s[r] == ',' || s[r] == ' '))
        r++;
    if (r >= n || s[r] != ')')
        return -1;
    *ar_end = r;
    return r + 1;
}

static int parse_int(const char *p, Py_ssize_t n, long long *out)
{
    if (n < 1 || n > 18)
        return 0;
    long long v = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

/* "topic-N" or "[topic,N]": 1 with the topic's span and N, 0 for any other shape */
static int partition_of(const char *s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t *t0, Py_ssize_t *t1, long long *part)
{
    if (s[a] == '[') {
        if (b - a < 3 || s[b - 1] != ']')
            return 0;
        Py_ssize_t c = b - 2;
        while (c > a && s[c] != ',')
            c--;
        if (c == a || !parse_int(s + c + 1, b - 1 - (c + 1), part))
            return 0;
        *t0 = a + 1;
        *t1 = c;
        return 1;
    }
    Py_ssize_t c = b - 1;
    while (c >= a && s[c] != '-')
        c--;
    if (c <= a || !parse_int(s + c + 1, b - (c + 1), part))
        return 0;
    *t0 = a;
    *t1 = c;
    return 1;
}

/* A growing byte buffer: a column's data as Arrow lays it out */
typedef struct {
    char *p;
    Py_ssize_t n, cap;
} Buf;

static int put(Buf *b, const void *src, Py_ssize_t n)
{
    if (b->n + n > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        char *np = PyMem_Realloc(b->p, (size_t)cap);
        if (np == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, (size_t)n);
    b->n += n;
    return 0;
}

static int put_i32(Buf *b, long long v)
{
    int32_t x = (int32_t)v;
    return put(b, &x, 4);
}

/* "1, 2, 3" appended to values as int32: 1, or 0 for a shape int() would refuse, an empty AR or a value past
 * int32 (the Python loop's int, which Arrow's int32 column refuses alike) */
static int replicas_of(const char *s, Py_ssize_t a, Py_ssize_t b, Buf *values)
{
    Py_ssize_t i = a;
    for (;;) {
        Py_ssize_t j = i;
        while (j < b && s[j] != ',')
            j++;
        Py_ssize_t x = i, y = j;
        while (x < y && s[x] == ' ')
            x++;
        while (y > x && s[y - 1] == ' ')
            y--;
        long long v;
        if (!parse_int(s + x, y - x, &v) || v > INT32_MAX)
            return 0;
        if (put_i32(values, v) < 0)
            return -1;
        if (j >= b)
            break;
        i = j + 1;
    }
    return 1;
}

enum { TOPICS, TOPIC_ENDS, PARTS, AR, AR_ENDS, RAWS, RAW_ENDS, NBUF };

static PyObject *assignments(PyObject *self, PyObject *args)
{
    PyObject *text, *head;
    if (!PyArg_ParseTuple(args, "UU", &text, &head))
        return NULL;
    if (!PyUnicode_IS_ASCII(text) || !PyUnicode_IS_ASCII(head))
        Py_RETURN_NONE;
    const char *s = (const char *)PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const char *h = (const char *)PyUnicode_DATA(head);
    Py_ssize_t hn = PyUnicode_GET_LENGTH(head);

    Buf b[NBUF];
    memset(b, 0, sizeof b);
    int python = 0;  /* a shape left to the Python loop */
    PyObject *out = NULL;

    Py_ssize_t p = 0;
    while (p < n && !python) {
        Py_ssize_t end = -1, tp_end = -1, ar = 0, ar_end = 0;
        if (s[p] == '[') {  /* \[[^\]]+\] */
            Py_ssize_t q = p + 1;
            while (q < n && s[q] != ']')
                q++;
            if (q < n && q > p + 1 && (end = rest(s, n, q + 1, &ar, &ar_end)) >= 0)
                tp_end = q + 1;
        }
        Py_ssize_t run = p;  /* [^\s,()>]+ */
        if (end < 0) {
            while (run < n && is_tp_char(s[run]))
                run++;
            if (run > p && (end = rest(s, n, run, &ar, &ar_end)) >= 0)
                tp_end = run;
        }
        if (end < 0) {
            /* from inside the run the second alternative ends where it did and fails alike: only a '[' there
             * can start a match, by the first */
            p++;
            while (p < run && s[p] != '[')
                p++;
            continue;
        }
        Py_ssize_t t0, t1;
        long long part;
        if (!partition_of(s, p, tp_end, &t0, &t1, &part) || part > INT32_MAX) {
            python = 1;
            break;
        }
        int ok = replicas_of(s, ar, ar_end, &b[AR]);
        if (ok < 0)
            goto done;
        if (ok == 0) {
            python = 1;
            break;
        }
        /* every offset an int32, as Arrow's string and list columns hold them */
        if (b[TOPICS].n + (t1 - t0) > INT32_MAX || b[RAWS].n + hn + (end - p) + 4 > INT32_MAX) {
            python = 1;
            break;
        }
        if (put(&b[TOPICS], s + t0, t1 - t0) < 0 || put_i32(&b[TOPIC_ENDS], b[TOPICS].n) < 0
            || put_i32(&b[PARTS], part) < 0 || put_i32(&b[AR_ENDS], b[AR].n / 4) < 0
            || put(&b[RAWS], h, hn) < 0 || put(&b[RAWS], s + p, end - p) < 0 || put(&b[RAWS], " ...", 4) < 0
            || put_i32(&b[RAW_ENDS], b[RAWS].n) < 0)
            goto done;
        p = end;
    }
    if (python) {
        Py_INCREF(Py_None);
        out = Py_None;
        goto done;
    }
    out = PyTuple_New(NBUF);
    if (out == NULL)
        goto done;
    for (int i = 0; i < NBUF; i++) {
        PyObject *o = PyBytes_FromStringAndSize(b[i].p ? b[i].p : "", b[i].n);
        if (o == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyTuple_SET_ITEM(out, i, o);
    }

done:
    for (int i = 0; i < NBUF; i++)
        PyMem_Free(b[i].p);
    return out;
}

static PyMethodDef METHODS[] = {
    {"assignments", assignments, METH_VARARGS,
     "assignments(text, head) -> (topics, topic_ends, partitions, replicas, replica_ends, raws, raw_ends) as bytes "
     "(parsers.schema.Packed), or None for a shape left to Python"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_dumps", NULL, -1, METHODS};

/* LAYOUT: what assignments returns (2: Packed buffers); the Python side leaves a build of another layout unused */
PyMODINIT_FUNC PyInit__dumps(void)
{
    PyObject *m = PyModule_Create(&MODULE);
    if (m != NULL && PyModule_AddIntConstant(m, "LAYOUT", 2) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
