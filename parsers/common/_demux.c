/* A block of `docker compose logs` lines, as bytes, handed to its services in one pass (compose.split_texts).
 *
 * split(body, width, keys, first) -> (texts, positions, last, stamp) or None. body: whole lines, each ending
 * with an LF (textranges.RawBlock); keys: the service prefixes of one width ("kafka-1  | "). Per key i:
 * texts[i], the lines that start with it, without it and without their LF, and positions[i], their line
 * numbers (the first line is `first`); last: the key of the block's last line; stamp: may a collector's stamp
 * follow a bar (a line's text starts with a digit or holds a bar: the caller then searches for one). None
 * when a line is shorter than width or starts with no key, or a byte is not ASCII.
 *
 * In Python that was a decode of the block into prefixed lines, numpy columns of their first bytes per key,
 * then a new string per line cut from its prefix and its number picked by the key's mask: ~0.13 CPU s per
 * 96 MB beyond the decode a whole file's lines cost. Here each line's text becomes its string once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_KEYS 64

/* Every byte below 0x80, eight at a time: a str of kind 1 made from the bytes is then their ASCII text. */
static int ascii(const unsigned char *p, Py_ssize_t n)
{
    uint64_t any = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        any |= x;
    }
    for (; i < n; i++)
        any |= p[i];
    return (any & 0x8080808080808080ULL) == 0;
}

static PyObject *split(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t width, first;
    PyObject *keys;
    if (!PyArg_ParseTuple(args, "y*nO!n", &view, &width, &PyTuple_Type, &keys, &first))
        return NULL;
    Py_ssize_t nkeys = PyTuple_GET_SIZE(keys);
    const char *key[MAX_KEYS];
    PyObject *texts = NULL, *positions = NULL, *result = NULL;
    if (nkeys < 1 || nkeys > MAX_KEYS || width < 1) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    for (Py_ssize_t k = 0; k < nkeys; k++) {
        PyObject *kb = PyTuple_GET_ITEM(keys, k);
        if (!PyBytes_Check(kb) || PyBytes_GET_SIZE(kb) != width) {
            PyErr_SetString(PyExc_ValueError, "every key is bytes of the prefix width");
            goto done;
        }
        key[k] = PyBytes_AS_STRING(kb);
    }
    texts = PyList_New(nkeys);
    positions = PyList_New(nkeys);
    if (texts == NULL || positions == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < nkeys; k++) {
        PyObject *a = PyList_New(0), *b = PyList_New(0);
        if (a == NULL || b == NULL) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            goto done;
        }
        PyList_SET_ITEM(texts, k, a);
        PyList_SET_ITEM(positions, k, b);
    }
    const unsigned char *p = (const unsigned char *)view.buf, *end = p + view.len;
    Py_ssize_t line = first, last = -1;
    int stamp = 0, bar = 0, mismatch = 0;
    if (!ascii(p, view.len)) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    while (p < end) {
        const unsigned char *lf = memchr(p, '\n', (size_t)(end - p));
        Py_ssize_t len = lf == NULL ? -1 : lf - p;
        Py_ssize_t k = 0;
        if (len >= width)
            for (; k < nkeys && memcmp(p, key[k], (size_t)width) != 0; k++)
                ;
        if (len < width || k == nkeys) {
            mismatch = 1;
            break;
        }
        Py_ssize_t n = len - width;
        const unsigned char *s = p + width;
        if (n > 0 && s[0] >= '0' && s[0] <= '9')
            stamp = 1;
        if (!bar && n > 0 && memchr(s, '|', (size_t)n) != NULL)
            bar = stamp = 1;
        PyObject *text = PyUnicode_New(n, 127);
        if (text == NULL)
            goto done;
        memcpy(PyUnicode_DATA(text), s, (size_t)n);
        PyObject *no = PyLong_FromSsize_t(line);
        if (no == NULL) {
            Py_DECREF(text);
            goto done;
        }
        int bad = PyList_Append(PyList_GET_ITEM(texts, k), text) < 0 ||
                  PyList_Append(PyList_GET_ITEM(positions, k), no) < 0;
        Py_DECREF(text);
        Py_DECREF(no);
        if (bad)
            goto done;
        last = k;
        line++;
        p = lf + 1;
    }
    if (mismatch || last < 0) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        result = Py_BuildValue("(OOnO)", texts, positions, last, stamp ? Py_True : Py_False);
    }
done:
    Py_XDECREF(texts);
    Py_XDECREF(positions);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef METHODS[] = {
    {"split", split, METH_VARARGS,
     "split(body, width, keys, first) -> (texts, positions, last, stamp), or None: a block of prefixed "
     "ASCII lines handed to their keys, each line's text cut from its prefix and its LF"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_demux", NULL, -1, METHODS};

PyMODINIT_FUNC PyInit__demux(void)
{
    return PyModule_Create(&MODULE);
}
