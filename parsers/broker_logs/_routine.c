/* The one-line entries of a broker log in Kafka's own layout, accounted without a Python object per line.
 *
 * default_layout_scan.scan hands this a run of lines that starts at a strict header. Each
 * entry of printable ASCII (its continuation lines may hold tabs) that the next strict header
 * closes is accounted here exactly as scan's Python would: its stamp on the file's time line
 * (Chronology.see, outside a range's recording), the broker named by its log ident counted; a
 * one-line routine entry (no rule's needles in it) counted as such; one a rule may want, and
 * every entry with continuation lines, handed back by position, stamp, writer and length for
 * the needle screen and the templates. At the first line that is anything else (a header of
 * another form, a non-ASCII or control character, an impossible hour, an entry running to the
 * end of the run) it stops and the Python code takes over there, so every decision that is not
 * bookkeeping stays in one place (tests/test_routine_scan.py holds both paths equal).
 *
 * The header grammar is KafkaDefaultLayout.STRICT's, written out:
 *   \[(\d{4}-\d\d-\d\d \d\d):([0-5]\d):([0-5]\d),(\d{3})\] (LEVEL) (.*) \(([^ (]+)\)$
 * and the log idents are templates/writer.py's _WRITER, alternative by alternative (its bracketed
 * names are handed over by set_idents; the other five alternatives are written out here).
 */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* memmem, memrchr */
#endif
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *p;
    Py_ssize_t n;
    Py_ssize_t msg, msg_end;  /* message [msg, msg_end) */
    Py_ssize_t log, log_end;  /* logger [log, log_end) */
    int level;                /* index in LEVELS */
} Header;

static const char *LEVELS[] = {"TRACE ", "DEBUG ", "INFO ", "WARN ", "ERROR ", "FATAL "};
static PyObject *LEVEL_NAMES[6];  /* the same words without the space, made once */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Are the bytes p[i..n) of an ASCII line all printable (0x20-0x7e), or tab where tab_ok? Eight at a time: a word with
 * no byte below 0x20 and none equal to 0x7f (the only byte above 0x7e in ASCII) is passed whole, with two tests each
 * exact for "some byte is" (a line's bytes were tested one by one: ~5% of the parse of rotated logs). */
static int printable(const char *p, Py_ssize_t i, Py_ssize_t n, int tab_ok)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL, dels = ones * 0x7f;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, d;
        memcpy(&x, p + i, 8);
        d = x ^ dels;
        if ((((x - ones * 0x20) & ~x) | ((d - ones) & ~d)) & highs) {
            for (int k = 0; k < 8; k++) {
                unsigned char c = (unsigned char)p[i + k];
                if ((c < 0x20 && !(tab_ok && c == '\t')) || c > 0x7e)
                    return 0;
            }
        }
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c < 0x20 && !(tab_ok && c == '\t')) || c > 0x7e)
            return 0;
    }
    return 1;
}

/* printable ASCII only: anything else (tab, control, non-ASCII) goes to the Python path */
static int strict_header(PyObject *line, Header *h)
{
    if (!PyUnicode_Check(line) || !PyUnicode_IS_ASCII(line))
        return 0;
    const char *p = (const char *)PyUnicode_DATA(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    if (n < 33 || p[0] != '[')
        return 0;
    static const char shape[] = "[dddd-dd-dd dd:5d:5d,ddd] ";
    for (int i = 0; i < 26; i++) {
        char s = shape[i], c = p[i];
        if (s == 'd') { if (!is_digit(c)) return 0; }
        else if (s == '5') { if (c < '0' || c > '5') return 0; }
        else if (c != s) return 0;
    }
    Py_ssize_t msg = 0;
    int level = -1;
    for (int i = 0; i < 6; i++) {
        size_t k = strlen(LEVELS[i]);
        if ((Py_ssize_t)(26 + k) <= n && memcmp(p + 26, LEVELS[i], k) == 0) {
            msg = 26 + (Py_ssize_t)k;
            level = i;
            break;
        }
    }
    if (!msg || p[n - 1] != ')')
        return 0;
    if (!printable(p, 26, n, 0))
        return 0;
    /* (.*) is greedy: the logger opens at the last '(' */
    const char *open = memrchr(p + msg, '(', (size_t)(n - 1 - msg));
    if (open == NULL)
        return 0;
    Py_ssize_t o = open - p;
    if (o < msg + 1 || p[o - 1] != ' ' || o + 1 > n - 2)
        return 0;
    if (memchr(p + o + 1, ' ', (size_t)(n - 2 - o)) != NULL)
        return 0;
    h->p = p; h->n = n; h->msg = msg; h->msg_end = o - 1; h->log = o + 1; h->log_end = n - 1; h->level = level;
    return 1;
}

/* A line that can only continue the entry above: KafkaDefaultLayout.parse returns None for it
 * before looking further (not '[', or no date's '-' and ' '/'T' where a header has them), and it is
 * printable ASCII or tab (so never binary junk). */
static int continuation(PyObject *line)
{
    if (!PyUnicode_Check(line) || !PyUnicode_IS_ASCII(line))
        return 0;
    const char *p = (const char *)PyUnicode_DATA(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    if (!printable(p, 0, n, 1))
        return 0;
    return n < 27 || p[0] != '[' || p[5] != '-' || (p[11] != ' ' && p[11] != 'T');
}

/* The bracketed log idents, "[<name><id>", in the order writer.py's BRACKETED_IDENTS tries them: set from
 * that tuple by set_idents (default_layout_scan does it on import), so the names live in one place. */
static char **BRACKETED = NULL;
static Py_ssize_t *BRACKETED_LEN = NULL;
static Py_ssize_t N_BRACKETED = 0;

static PyObject *set_idents(PyObject *self, PyObject *arg)
{
    if (!PyTuple_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "set_idents takes a tuple of str");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(arg);
    char **names = PyMem_Calloc((size_t)(n ? n : 1), sizeof(char *));
    Py_ssize_t *lens = PyMem_Calloc((size_t)(n ? n : 1), sizeof(Py_ssize_t));
    if (names == NULL || lens == NULL) {
        PyMem_Free(names);
        PyMem_Free(lens);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len;
        const char *u = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(arg, i), &len);
        if (u == NULL || (names[i] = PyMem_Malloc((size_t)len + 1)) == NULL) {
            for (Py_ssize_t k = 0; k < i; k++)
                PyMem_Free(names[k]);
            PyMem_Free(names);
            PyMem_Free(lens);
            return u == NULL ? NULL : PyErr_NoMemory();
        }
        memcpy(names[i], u, (size_t)len + 1);
        lens[i] = len;
    }
    for (Py_ssize_t k = 0; k < N_BRACKETED; k++)
        PyMem_Free(BRACKETED[k]);
    PyMem_Free(BRACKETED);
    PyMem_Free(BRACKETED_LEN);
    BRACKETED = names;
    BRACKETED_LEN = lens;
    N_BRACKETED = n;
    Py_RETURN_NONE;
}

static int starts(const char *s, Py_ssize_t n, const char *lit)
{
    size_t k = strlen(lit);
    return (Py_ssize_t)k <= n && memcmp(s, lit, k) == 0;
}

/* digits at s[0..]: their count (0 if none) */
static Py_ssize_t digits(const char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n && is_digit(s[i]))
        i++;
    return i;
}

/* The writer's id as _WRITER finds it: 1 and *id set, 0 for none, -1 when the id is too long for
 * a C integer (the caller then leaves the entry to Python). */
static int writer(const char *s, Py_ssize_t n, long long *id)
{
    Py_ssize_t at = -1, len = 0;
    if (n == 0 || (s[0] != '[' && s[0] != 'C' && s[0] != 'B' && s[0] != 'P'))
        return 0;
    if (s[0] == '[') {
        for (Py_ssize_t b = 0; b < N_BRACKETED; b++) {
            Py_ssize_t bl = BRACKETED_LEN[b];
            if (bl <= n - 1 && memcmp(s + 1, BRACKETED[b], (size_t)bl) == 0) {
                Py_ssize_t k = 1 + bl;
                Py_ssize_t d = digits(s + k, n - k);
                if (d) { at = k; len = d; goto found; }
            }
        }
        if (starts(s, n, "[SocketServer listenerType=")) {
            Py_ssize_t k = 27, w = k;
            while (w < n && (is_digit(s[w]) || s[w] == '_' || ((s[w] | 0x20) >= 'a' && (s[w] | 0x20) <= 'z')))
                w++;
            if (w > k && starts(s + w, n - w, ", nodeId=")) {
                k = w + 9;
                Py_ssize_t d = digits(s + k, n - k);
                if (d && k + d < n && s[k + d] == ']') { at = k; len = d; goto found; }
            }
        }
        if (starts(s, n, "[Partition ")) {
            Py_ssize_t k = 11, w = k;
            while (w < n && s[w] != ' ')
                w++;
            if (w > k && starts(s + w, n - w, " broker=")) {
                k = w + 8;
                Py_ssize_t d = digits(s + k, n - k);
                if (d && k + d < n && s[k + d] == ']') { at = k; len = d; goto found; }
            }
        }
        return 0;
    }
    if (starts(s, n, "Partition [")) {
        const char *close = memchr(s + 11, ']', (size_t)(n - 11));
        if (close != NULL) {
            Py_ssize_t k = close - s + 1;
            if (starts(s + k, n - k, " on broker ")) {
                k += 11;
                Py_ssize_t d = digits(s + k, n - k);
                if (d && k + d < n && s[k + d] == ':') { at = k; len = d; goto found; }
            }
        }
        return 0;
    }
    if (starts(s, n, "Controller ")) {
        Py_ssize_t k = 11, d = digits(s + k, n - k);
        if (d && starts(s + k + d, n - k - d, " epoch ")) {
            Py_ssize_t e = k + d + 7, de = digits(s + e, n - e);
            if (de && e + de < n && s[e + de] == ' ') { at = k; len = d; goto found; }
        }
        return 0;
    }
    if (starts(s, n, "Broker ")) {
        Py_ssize_t k = 7, d = digits(s + k, n - k);
        if (d && k + d < n && s[k + d] == ' ' && !starts(s + k + d + 1, n - k - d - 1, "was elected as")) {
            at = k; len = d; goto found;
        }
        return 0;
    }
    return 0;
found:
    if (len > 18)
        return -1;
    long long v = 0;
    for (Py_ssize_t i = 0; i < len; i++)
        v = v * 10 + (s[at + i] - '0');
    *id = v;
    return 1;
}

/* The byte pairs present in the message being screened: PAIRS[pair] == GEN. A needle whose first two bytes
 * are not a pair of the message cannot be in it, so most needles of a routine entry are ruled out by one
 * lookup instead of a memmem each (a generation count spares clearing the table per message). */
static unsigned short PAIRS[65536];
static unsigned short GEN = 0;

static void mark_pairs(const char *m, Py_ssize_t n)
{
    if (++GEN == 0) {
        memset(PAIRS, 0, sizeof PAIRS);
        GEN = 1;
    }
    for (Py_ssize_t i = 0; i + 1 < n; i++)
        PAIRS[(unsigned char)m[i] | ((unsigned)(unsigned char)m[i + 1] << 8)] = GEN;
}

static int contains(const char *m, Py_ssize_t n, const char *needle, Py_ssize_t len, int marked)
{
    if (len == 0)
        return 1;
    if (len > n)
        return 0;
    if (len == 1)
        return memchr(m, needle[0], (size_t)n) != NULL;
    if (marked && PAIRS[(unsigned char)needle[0] | ((unsigned)(unsigned char)needle[1] << 8)] != GEN)
        return 0;
    return memmem(m, (size_t)n, needle, (size_t)len) != NULL;
}

/* Does a rule want this message? screen: a tuple of (first, rest) pairs, RuleSet.screen's needles. -1 on error. */
static int wanted(PyObject *screen, const char *m, Py_ssize_t n)
{
    Py_ssize_t k = PyTuple_GET_SIZE(screen);
    int marked = k >= 3;  /* below that a memmem or two costs less than marking the pairs */
    if (marked)
        mark_pairs(m, n);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *pair = PyTuple_GET_ITEM(screen, i);
        PyObject *rest = PyTuple_GET_ITEM(pair, 1);
        Py_ssize_t len;
        const char *f = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(pair, 0), &len);
        if (f == NULL)
            return -1;
        if (!contains(m, n, f, len, marked))
            continue;
        int all = 1;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(rest); j++) {
            const char *r = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(rest, j), &len);
            if (r == NULL)
                return -1;
            if (!contains(m, n, r, len, marked)) { all = 0; break; }
        }
        if (all)
            return 1;
    }
    return 0;
}

/* Are all of a rule's needles (first, rest) in the text? -1 on error. */
static int all_in(PyObject *pair, const char *m, Py_ssize_t n, int marked)
{
    Py_ssize_t len;
    const char *f = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(pair, 0), &len);
    if (f == NULL)
        return -1;
    if (!contains(m, n, f, len, marked))
        return 0;
    PyObject *rest = PyTuple_GET_ITEM(pair, 1);
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(rest); j++) {
        const char *r = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(rest, j), &len);
        if (r == NULL)
            return -1;
        if (!contains(m, n, r, len, marked))
            return 0;
    }
    return 1;
}

/* next_wanted(needles, thrown_flags, message, thrown, start) -> 2 * i, or 2 * i + 1, or -1
 * RuleSet.classify's needle screen from rule start on: the first rule i >= start whose needles (first, rest) are
 * all in the message (2 * i), or, for a rule that reads a thrown exception's first line (thrown_flags[i] != 0,
 * thrown a str), all in that line (2 * i + 1); -1: no rule from start on. Needles and message are compared as
 * UTF-8 bytes, where a substring of the text is a substring of its bytes and nothing else is. */
static PyObject *next_wanted(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_Check(args[0]) || !PyBytes_Check(args[1]) || !PyUnicode_Check(args[2]) ||
        (args[3] != Py_None && !PyUnicode_Check(args[3]))) {
        PyErr_SetString(PyExc_TypeError, "next_wanted(tuple, bytes, str, str or None, int)");
        return NULL;
    }
    PyObject *screen = args[0];
    Py_ssize_t start = PyLong_AsSsize_t(args[4]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(screen);
    if (PyBytes_GET_SIZE(args[1]) < k) {
        PyErr_SetString(PyExc_ValueError, "a thrown flag for every rule");
        return NULL;
    }
    const char *flags = PyBytes_AS_STRING(args[1]);
    Py_ssize_t n, tn = 0;
    const char *m = PyUnicode_AsUTF8AndSize(args[2], &n);
    if (m == NULL)
        return NULL;
    const char *t = NULL;
    if (args[3] != Py_None) {
        t = PyUnicode_AsUTF8AndSize(args[3], &tn);
        if (t == NULL)
            return NULL;
    }
    if (start < 0)
        start = 0;
    int marked = k - start >= 3;  /* below that a memmem or two costs less than marking the pairs */
    if (marked)
        mark_pairs(m, n);
    for (Py_ssize_t i = start; i < k; i++) {
        PyObject *pair = PyTuple_GET_ITEM(screen, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) < 2 || !PyTuple_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_SetString(PyExc_TypeError, "needles must be (first, rest) pairs");
            return NULL;
        }
        int got = all_in(pair, m, n, marked);
        if (got < 0)
            return NULL;
        if (got)
            return PyLong_FromSsize_t(2 * i);
        if (t != NULL && flags[i]) {
            got = all_in(pair, t, tn, 0);
            if (got < 0)
                return NULL;
            if (got)
                return PyLong_FromSsize_t(2 * i + 1);
        }
    }
    return PyLong_FromLong(-1);
}

/* hour text (13 chars) -> its first microsecond, through clock.hour_base (which caches); 0 and
 * *ok = 0 when the hour is impossible (the Python path reports it). */
static long long hour_base(PyObject *hour_fn, const char *p, int *ok)
{
    *ok = 0;
    PyObject *r = PyObject_CallFunction(hour_fn, "s#", p, (Py_ssize_t)13);
    if (r == NULL) {
        PyErr_Clear();
        return 0;
    }
    long long v = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *ok = 1;
    return v;
}

/* skip(lines, i, end, screen_of, hour_fn, writer_ids, first, last, backwards_us[, lead, lead_cap, line0])
 *   -> (j, routine one-line entries, [(index, stamp in microseconds, writer or None, lines, level, logger,
 *       message) of the ones a rule may want and of every entry with continuation lines],
 *       first, last, latest stamp text or None, entries dated back, index of the first of them
 *       (-1: none), its stamp, the latest stamp above it)
 * Accounts the entries in lines[i:j] (lines[i] a strict header); j is the first line left
 * to the Python scan (j == i: none taken). first and last are the time line's new earliest and
 * latest stamps.
 * screen_of: a dict logger -> needles, filled through screen_of.__missing__ (a defaultdict-like).
 * Optional lead, lead_cap, line0: a range's reader recording its first entries (Chronology.lead, a list, while
 * it holds fewer than lead_cap): each entry not dated back is appended as (stamp, line0 + index), as
 * Chronology.see records it, until the list holds lead_cap. */
static PyObject *skip(PyObject *self, PyObject *args)
{
    PyObject *lines, *screens, *hour_fn, *writer_ids, *lead = Py_None;
    Py_ssize_t i, end, lead_cap = 0, line0 = 0;
    long long first, last, back_us;
    if (!PyArg_ParseTuple(args, "O!nnOOO!LLL|Onn", &PyList_Type, &lines, &i, &end, &screens, &hour_fn,
                          &PyDict_Type, &writer_ids, &first, &last, &back_us, &lead, &lead_cap, &line0))
        return NULL;
    if (lead != Py_None && !PyList_Check(lead)) {
        PyErr_SetString(PyExc_TypeError, "lead must be a list or None");
        return NULL;
    }
    int recording = lead != Py_None && PyList_GET_SIZE(lead) < lead_cap;
    if (end > PyList_GET_SIZE(lines))
        end = PyList_GET_SIZE(lines);
    Py_ssize_t start = i, n_back = 0, back_at = -1, n_routine = 0;
    PyObject *wanted_rows = PyList_New(0);
    if (wanted_rows == NULL)
        return NULL;
    long long back_ts = 0, back_last = 0;
    char hour[13], best[23];
    int have_hour = 0, have_best = 0;
    long long base = 0;
    const char *prev_log = NULL;
    Py_ssize_t prev_log_len = 0;
    PyObject *screen = NULL, *logger = NULL;  /* owned: the current logger's needles and name */
    Header cur, next;
    if (i >= end || !strict_header(PyList_GET_ITEM(lines, i), &cur))
        goto done;
    for (;;) {
        Py_ssize_t k = i + 1;
        while (k < end && continuation(PyList_GET_ITEM(lines, k)))
            k++;
        if (k >= end || !strict_header(PyList_GET_ITEM(lines, k), &next))
            break;  /* the entry may run on to the end of the run, or meets a line Python must judge */
        Py_ssize_t n_lines = k - i;
        const char *p = cur.p;
        /* the stamp */
        if (!have_hour || memcmp(hour, p + 1, 13) != 0) {
            int ok;
            long long b = hour_base(hour_fn, p + 1, &ok);
            if (!ok)
                break;
            memcpy(hour, p + 1, 13);
            base = b;
            have_hour = 1;
        }
        long long ts = base + (long long)((p[15] - '0') * 10 + (p[16] - '0')) * 60000000LL
            + (long long)((p[18] - '0') * 10 + (p[19] - '0')) * 1000000LL
            + (long long)((p[21] - '0') * 100 + (p[22] - '0') * 10 + (p[23] - '0')) * 1000LL;
        /* the needle screen */
        Py_ssize_t ll = cur.log_end - cur.log;
        if (screen == NULL || ll != prev_log_len || memcmp(prev_log, p + cur.log, (size_t)ll) != 0) {
            Py_XDECREF(logger);
            logger = PyUnicode_FromStringAndSize(p + cur.log, ll);
            if (logger == NULL)
                goto error;
            Py_XDECREF(screen);
            screen = PyObject_GetItem(screens, logger);  /* a __missing__ computes it */
            if (screen == NULL)
                goto error;
            if (!PyTuple_Check(screen)) {
                PyErr_SetString(PyExc_TypeError, "needles must be a tuple");
                goto error;
            }
            prev_log = p + cur.log;
            prev_log_len = ll;
        }
        /* an entry with continuation lines is screened in Python (a thrown exception's first line counts) */
        int w = n_lines > 1 ? 1 : wanted(screen, p + cur.msg, cur.msg_end - cur.msg);
        if (w < 0)
            goto error;
        long long id = 0;
        int got = writer(p + cur.msg, cur.msg_end - cur.msg, &id);
        if (got < 0)
            break;
        PyObject *key = NULL;
        if (got) {
            key = PyLong_FromLongLong(id);
            if (key == NULL)
                goto error;
            PyObject *was = PyDict_GetItemWithError(writer_ids, key);
            long long count = 0;
            if (was != NULL) {
                count = PyLong_AsLongLong(was);
                if (count == -1 && PyErr_Occurred()) { Py_DECREF(key); goto error; }
            } else if (PyErr_Occurred()) {
                Py_DECREF(key);
                goto error;
            }
            PyObject *now = PyLong_FromLongLong(count + 1);
            if (now == NULL || PyDict_SetItem(writer_ids, key, now) < 0) {
                Py_XDECREF(now);
                Py_DECREF(key);
                goto error;
            }
            Py_DECREF(now);
        }
        if (w) {
            PyObject *row = Py_BuildValue("nLOnOON", i, ts, key ? key : Py_None, n_lines, LEVEL_NAMES[cur.level],
                                          logger, PyUnicode_FromStringAndSize(p + cur.msg, cur.msg_end - cur.msg));
            if (row == NULL || PyList_Append(wanted_rows, row) < 0) {
                Py_XDECREF(row);
                Py_XDECREF(key);
                goto error;
            }
            Py_DECREF(row);
        } else {
            n_routine++;
        }
        Py_XDECREF(key);
        /* Chronology.see */
        int record = 1;
        if (ts >= last) {
            last = ts;
        } else {
            if (ts < first)
                first = ts;
            if (ts < last - back_us) {
                record = 0;
                if (n_back++ == 0) {
                    back_at = i;
                    back_ts = ts;
                    back_last = last;
                }
            }
        }
        if (record && recording) {
            PyObject *pair = Py_BuildValue("(Ln)", ts, line0 + i);
            if (pair == NULL || PyList_Append(lead, pair) < 0) {
                Py_XDECREF(pair);
                goto error;
            }
            Py_DECREF(pair);
            recording = PyList_GET_SIZE(lead) < lead_cap;
        }
        if (!have_best || memcmp(p + 1, best, 23) > 0) {
            memcpy(best, p + 1, 23);
            have_best = 1;
        }
        i = k;
        cur = next;
    }
done:
    (void)start;
    Py_XDECREF(screen);
    Py_XDECREF(logger);
    PyObject *latest = have_best ? PyUnicode_FromStringAndSize(best, 23) : Py_NewRef(Py_None);
    if (latest == NULL) {
        Py_DECREF(wanted_rows);
        return NULL;
    }
    return Py_BuildValue("nnNLLNnnLL", i, n_routine, wanted_rows, first, last, latest, n_back, back_at, back_ts,
                         back_last);
error:
    Py_XDECREF(screen);
    Py_XDECREF(logger);
    Py_DECREF(wanted_rows);
    return NULL;
}

static PyMethodDef methods[] = {
    {"set_idents", set_idents, METH_O, "The bracketed log-ident names, in writer.py's order."},
    {"skip", skip, METH_VARARGS, "Account the routine one-line entries from lines[i]; see the module comment."},
    {"next_wanted", (PyCFunction)(void (*)(void))next_wanted, METH_FASTCALL,
     "RuleSet.classify's needle screen from a rule on; see its comment."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_routine", NULL, -1, methods};

PyMODINIT_FUNC PyInit__routine(void)
{
    for (int i = 0; i < 6; i++) {
        if (LEVEL_NAMES[i] == NULL) {
            LEVEL_NAMES[i] = PyUnicode_FromStringAndSize(LEVELS[i], (Py_ssize_t)strlen(LEVELS[i]) - 1);
            if (LEVEL_NAMES[i] == NULL)
                return NULL;
            PyUnicode_InternInPlace(&LEVEL_NAMES[i]);
        }
    }
    return PyModule_Create(&module);
}
