/* tidal_test.h — helpers shared by the cmocka unit tests in test/unit/.
 * Not a test itself (CMake builds only test_*.c). */
#ifndef TIDAL_TEST_H
#define TIDAL_TEST_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ptx.h"

/* The usual three header lines; most test inputs start with them. */
#define PTX_HDR ".version 8.0\n.target sm_90a\n.address_size 64\n"

/* Parses `src`; fails the test (printing the diagnostic) when it does not parse. */
static inline ptx_module *parse_ok_at(const char *src, const char *file, int line)
{
    ptx_diag d;
    ptx_module *m = ptx_parse("t.ptx", src, strlen(src), &d);
    if (!m) {
        print_error("%s:%d: unexpected parse error: t.ptx:%u:%u: %s\n", file, line, d.line, d.col, d.msg);
        _fail(file, line);
    }
    return m;
}
#define parse_ok(src) parse_ok_at((src), __FILE__, __LINE__)

/* Expects `src` (len bytes) to be rejected at line:col with a message containing `msg`. */
static inline void parse_err_at(const char *src, size_t len, unsigned line, unsigned col, const char *msg,
                                const char *file, int fline)
{
    ptx_diag d;
    ptx_module *m = ptx_parse("t.ptx", src, len, &d);
    if (m) {
        ptx_module_free(m);
        print_error("%s:%d: input parsed, expected error '%s' at %u:%u\n", file, fline, msg, line, col);
        _fail(file, fline);
    }
    if (d.line != line || d.col != col || !strstr(d.msg, msg) || d.nerrors < 1) {
        print_error("%s:%d: got error %u:%u '%s', expected %u:%u '%s'\n", file, fline, d.line, d.col, d.msg, line, col,
                    msg);
        _fail(file, fline);
    }
}
#define parse_err(src, line, col, msg) parse_err_at((src), strlen(src), (line), (col), (msg), __FILE__, __LINE__)
#define parse_err_n(src, len, line, col, msg) parse_err_at((src), (len), (line), (col), (msg), __FILE__, __LINE__)

/* The printed module (malloc'd). */
static inline char *print_str(const ptx_module *m)
{
    size_t n = 0;
    char *s = ptx_print_to_string(m, &n);
    assert_non_null(s);
    assert_int_equal(strlen(s), n);
    return s;
}

/* Asserts the module prints as `want`. */
#define assert_prints(m, want)             \
    do {                                   \
        char *got_ = print_str(m);         \
        assert_string_equal(got_, (want)); \
        free(got_);                        \
    } while (0)

/* Token text as a NUL-terminated string (static buffer: one use per expression). */
static inline const char *tok_s(const ptx_module *m, uint32_t t)
{
    static char buf[256];
    return ptx_tok_str(m, t, buf, sizeof buf);
}

/* Text of the tokens [b, e) joined by single spaces, into buf. */
static inline const char *toks_s(const ptx_module *m, uint32_t b, uint32_t e, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t t = b; t < e && n + 1 < size; t++) {
        int w = snprintf(buf + n, size - n, "%s%.*s", t == b ? "" : " ", (int)m->toks[t].len, m->src + m->toks[t].off);
        if (w < 0) break;
        n += (size_t)w;
    }
    return buf;
}

#endif
