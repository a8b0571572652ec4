/* What textio.whole_lines must know of a payload before it trusts the fast path, in one pass over its bytes.
 *
 * survey(payload) -> (has_cr, has_ctrl, longest): is a CR byte in it, is any control byte other than tab and LF
 * in it (textio._CTRL_BYTES: 0-8, 11-31, CR included), and the longest line in bytes (the stretches between LF
 * bytes, the one after the last LF included). In Python that was a search for CR, a translate that copies the
 * whole payload to count the control bytes, and a length per decoded line: ~0.5 CPU s per 0.27 GB of rotated
 * logs (parse ~7 s). Here eight bytes are tested at a time for any byte below 0x20 (rare in a log: the LF ending
 * each line, a tab), and only such words are looked at byte by byte.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *survey(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len, i = 0, start = 0, longest = 0;
    int cr = 0, ctrl = 0;
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        /* skip words with no byte below 0x20: (x - 0x20..) & ~x & 0x80.. is zero exactly when there is none */
        while (i + 8 <= n) {
            uint64_t x;
            memcpy(&x, p + i, 8);
            if (((x - ones * 0x20) & ~x & highs) != 0)
                break;
            i += 8;
        }
        Py_ssize_t stop = i + 8 <= n ? i + 8 : n;
        if (i >= stop)
            break;
        for (; i < stop; i++) {
            unsigned char c = p[i];
            if (c >= 0x20 || c == '\t')
                continue;
            if (c == '\n') {
                if (i - start > longest)
                    longest = i - start;
                start = i + 1;
            } else {
                ctrl = 1;
                if (c == '\r')
                    cr = 1;
            }
        }
    }
    if (n - start > longest)
        longest = n - start;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return Py_BuildValue("(OOn)", cr ? Py_True : Py_False, ctrl ? Py_True : Py_False, longest);
}

static PyMethodDef METHODS[] = {
    {"survey", survey, METH_O,
     "survey(payload) -> (has_cr, has_ctrl, longest): CR in it, a control byte other than tab and LF in it, the "
     "longest line in bytes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, METHODS};

PyMODINIT_FUNC PyInit__lines(void)
{
    return PyModule_Create(&MODULE);
}
