/* A controller's assignment dump read into columns without a Python object per regular-expression match.
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
 * None (the Python path) for: a non-ASCII character in text or head, an item whose partition is not of those two
 * shapes (the Python skips it or reads it otherwise), an empty AR or one Python's int() would refuse, a number of
 * more than 18 digits.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
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

static PyObject *ascii_str(const char *p, Py_ssize_t n)
{
    PyObject *o = PyUnicode_New(n, 127);
    if (o != NULL)
        memcpy(PyUnicode_DATA(o), p, (size_t)n);
    return o;
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

/* "1, 2, 3": a list of ints, NULL with no error set for a shape int() would refuse or an empty AR */
static PyObject *replicas_of(const char *s, Py_ssize_t a, Py_ssize_t b)
{
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
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
        if (!parse_int(s + x, y - x, &v)) {
            Py_DECREF(out);
            return NULL;
        }
        PyObject *o = PyLong_FromLongLong(v);
        if (o == NULL || PyList_Append(out, o) < 0) {
            Py_XDECREF(o);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(o);
        if (j >= b)
            break;
        i = j + 1;
    }
    return out;
}

static int append_new(PyObject *list, PyObject *o)
{
    if (o == NULL)
        return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

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

    PyObject *topics = PyList_New(0), *parts = PyList_New(0), *reps = PyList_New(0), *raws = PyList_New(0);
    PyObject *last_topic = NULL;  /* borrowed from topics: a dump names a topic's partitions one after another */
    char *buf = NULL;
    Py_ssize_t cap = 0;
    int python = 0;  /* a shape left to the Python loop */
    if (topics == NULL || parts == NULL || reps == NULL || raws == NULL)
        goto fail;

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
        if (!partition_of(s, p, tp_end, &t0, &t1, &part)) {
            python = 1;
            break;
        }
        PyObject *ar_list = replicas_of(s, ar, ar_end);
        if (ar_list == NULL) {
            if (PyErr_Occurred())
                goto fail;
            python = 1;
            break;
        }
        if (append_new(reps, ar_list) < 0)
            goto fail;
        if (last_topic != NULL && PyUnicode_GET_LENGTH(last_topic) == t1 - t0
            && memcmp(PyUnicode_DATA(last_topic), s + t0, (size_t)(t1 - t0)) == 0) {
            if (PyList_Append(topics, last_topic) < 0)
                goto fail;
        } else {
            if (append_new(topics, ascii_str(s + t0, t1 - t0)) < 0)
                goto fail;
            last_topic = PyList_GET_ITEM(topics, PyList_GET_SIZE(topics) - 1);
        }
        if (append_new(parts, PyLong_FromLongLong(part)) < 0)
            goto fail;
        Py_ssize_t rn = hn + (end - p) + 4;
        if (rn > cap) {
            char *nb = PyMem_Realloc(buf, (size_t)rn);
            if (nb == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            buf = nb;
            cap = rn;
        }
        memcpy(buf, h, (size_t)hn);
        memcpy(buf + hn, s + p, (size_t)(end - p));
        memcpy(buf + hn + (end - p), " ...", 4);
        if (append_new(raws, ascii_str(buf, rn)) < 0)
            goto fail;
        p = end;
    }
    PyMem_Free(buf);
    if (python) {
        Py_DECREF(topics); Py_DECREF(parts); Py_DECREF(reps); Py_DECREF(raws);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(NNNN)", topics, parts, reps, raws);

fail:
    PyMem_Free(buf);
    Py_XDECREF(topics); Py_XDECREF(parts); Py_XDECREF(reps); Py_XDECREF(raws);
    return NULL;
}

static PyMethodDef METHODS[] = {
    {"assignments", assignments, METH_VARARGS,
     "assignments(text, head) -> (topics, partitions, replicas, raws), or None for a shape left to Python"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_dumps", NULL, -1, METHODS};

PyMODINIT_FUNC PyInit__dumps(void) { return PyModule_Create(&MODULE); }
