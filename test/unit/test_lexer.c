/* test_lexer.c — the PTX tokenizer (ptx_lex): token kinds, spans, line/col,
 * literals, dotted opcodes, comments and lexical errors. */
#include "tidal_test.h"

#include "ptx_internal.h"

/* A lexed buffer: the module is only a carrier for src/len/toks here. */
typedef struct lexed {
    ptx_module m;
    ptx_diag d;
    int rc;
} lexed;

static void lex_n(lexed *lx, const char *src, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->m.src = src;
    lx->m.len = len;
    ptx_diag_init(&lx->d, "t.ptx");
    lx->rc = ptx_lex(&lx->m, &lx->d);
}
static void lex(lexed *lx, const char *src) { lex_n(lx, src, strlen(src)); }
static void lex_done(lexed *lx) { free(lx->m.toks); }

/* Checks token i: kind, exact text, line, col. */
static void check_tok_at(const lexed *lx, uint32_t i, ptx_tok_kind kind, const char *text, unsigned line, unsigned col,
                         const char *file, int fline)
{
    if (i >= lx->m.ntoks) {
        print_error("%s:%d: token %u missing (only %u tokens)\n", file, fline, i, lx->m.ntoks);
        _fail(file, fline);
    }
    const ptx_token *t = &lx->m.toks[i];
    size_t n = strlen(text);
    if (t->kind != kind || t->len != n || memcmp(lx->m.src + t->off, text, n) != 0 || t->line != line ||
        t->col != col) {
        print_error("%s:%d: token %u is kind %u '%.*s' at %u:%u; expected kind %u '%s' at %u:%u\n", file, fline, i,
                    t->kind, (int)t->len, lx->m.src + t->off, t->line, t->col, kind, text, line, col);
        _fail(file, fline);
    }
    if (kind == PTX_TK_PUNCT && t->punct != (unsigned char)text[0]) {
        print_error("%s:%d: token %u punct is '%c'\n", file, fline, i, t->punct);
        _fail(file, fline);
    }
}
#define check_tok(lx, i, kind, text, line, col) \
    check_tok_at((lx), (i), (kind), (text), (line), (col), __FILE__, __LINE__)

static void expect_lex_error_at(const char *src, size_t len, unsigned line, unsigned col, const char *msg,
                                const char *file, int fline)
{
    lexed lx;
    lex_n(&lx, src, len);
    if (lx.rc != -1 || lx.d.line != line || lx.d.col != col || strcmp(lx.d.msg, msg) != 0) {
        print_error("%s:%d: got rc %d, %u:%u '%s'; expected %u:%u '%s'\n", file, fline, lx.rc, lx.d.line, lx.d.col,
                    lx.d.msg, line, col, msg);
        _fail(file, fline);
    }
    assert_null(lx.m.toks); /* nothing leaks on error */
}
#define expect_lex_error(src, line, col, msg) \
    expect_lex_error_at((src), strlen(src), (line), (col), (msg), __FILE__, __LINE__)

/* ------------------------------------------------------------------ tests */

static void test_instruction_tokens(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "\tld.global.nc.v4.f32 {%f1, %f2}, [%rd1+16];");
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, 13);
    check_tok(&lx, 0, PTX_TK_IDENT, "ld.global.nc.v4.f32", 1, 2);
    check_tok(&lx, 1, PTX_TK_PUNCT, "{", 1, 22);
    check_tok(&lx, 2, PTX_TK_IDENT, "%f1", 1, 23);
    check_tok(&lx, 3, PTX_TK_PUNCT, ",", 1, 26);
    check_tok(&lx, 4, PTX_TK_IDENT, "%f2", 1, 28);
    check_tok(&lx, 5, PTX_TK_PUNCT, "}", 1, 31);
    check_tok(&lx, 6, PTX_TK_PUNCT, ",", 1, 32);
    check_tok(&lx, 7, PTX_TK_PUNCT, "[", 1, 34);
    check_tok(&lx, 8, PTX_TK_IDENT, "%rd1", 1, 35);
    check_tok(&lx, 9, PTX_TK_PUNCT, "+", 1, 39);
    check_tok(&lx, 10, PTX_TK_INT, "16", 1, 40);
    check_tok(&lx, 11, PTX_TK_PUNCT, "]", 1, 42);
    check_tok(&lx, 12, PTX_TK_PUNCT, ";", 1, 43);
    /* the EOF token after the last one */
    assert_int_equal(lx.m.toks[13].kind, PTX_TK_EOF);
    assert_int_equal(lx.m.toks[13].off, 43);
    assert_int_equal(lx.m.toks[13].len, 0);
    assert_int_equal(lx.m.toks[13].col, 44);
    lex_done(&lx);
}

static void test_long_dotted_opcodes(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r3, %r4}], "
             "[%r5];\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;\n"
             "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 x;");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 0, PTX_TK_IDENT, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", 1,
              1);
    check_tok(&lx, 1, PTX_TK_PUNCT, "[", 1, 77);
    uint32_t i = 0;
    while (lx.m.toks[i].line == 1) i++;
    check_tok(&lx, i, PTX_TK_IDENT, "mbarrier.try_wait.parity.shared::cta.b64", 2, 1);
    check_tok(&lx, i + 1, PTX_TK_IDENT, "P1", 2, 42);
    while (lx.m.toks[i].line == 2) i++;
    check_tok(&lx, i, PTX_TK_IDENT, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", 3, 1);
    lex_done(&lx);
}

static void test_special_and_range_registers(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, ".reg .b32 %r<100>;\nmov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %cluster_ctarank;");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 0, PTX_TK_DIRECTIVE, ".reg", 1, 1);
    check_tok(&lx, 1, PTX_TK_DIRECTIVE, ".b32", 1, 6);
    check_tok(&lx, 2, PTX_TK_IDENT, "%r", 1, 11);
    check_tok(&lx, 3, PTX_TK_PUNCT, "<", 1, 13);
    check_tok(&lx, 4, PTX_TK_INT, "100", 1, 14);
    check_tok(&lx, 5, PTX_TK_PUNCT, ">", 1, 17);
    check_tok(&lx, 6, PTX_TK_PUNCT, ";", 1, 18);
    check_tok(&lx, 7, PTX_TK_IDENT, "mov.u32", 2, 1);
    check_tok(&lx, 10, PTX_TK_IDENT, "%ctaid.x", 2, 14);
    check_tok(&lx, 12, PTX_TK_IDENT, "mov.u32", 3, 1);
    check_tok(&lx, 15, PTX_TK_IDENT, "%cluster_ctarank", 3, 14);
    lex_done(&lx);
}

static void test_directives_and_qualifiers(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, ".visible .entry k()\n.shared::cluster .align 8 .b8 buf[16];");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 0, PTX_TK_DIRECTIVE, ".visible", 1, 1);
    check_tok(&lx, 1, PTX_TK_DIRECTIVE, ".entry", 1, 10);
    check_tok(&lx, 2, PTX_TK_IDENT, "k", 1, 17);
    check_tok(&lx, 3, PTX_TK_PUNCT, "(", 1, 18);
    check_tok(&lx, 4, PTX_TK_PUNCT, ")", 1, 19);
    /* a directive does not swallow dotted tails, but does keep ::qualifiers */
    check_tok(&lx, 5, PTX_TK_DIRECTIVE, ".shared::cluster", 2, 1);
    check_tok(&lx, 6, PTX_TK_DIRECTIVE, ".align", 2, 18);
    check_tok(&lx, 7, PTX_TK_INT, "8", 2, 25);
    check_tok(&lx, 8, PTX_TK_DIRECTIVE, ".b8", 2, 27);
    check_tok(&lx, 9, PTX_TK_IDENT, "buf", 2, 31);
    lex_done(&lx);
}

static void test_integer_literals(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "0x1F 017 0b101 12U 7u 0 0X7fffffff 4294967295");
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, 8);
    check_tok(&lx, 0, PTX_TK_INT, "0x1F", 1, 1);
    check_tok(&lx, 1, PTX_TK_INT, "017", 1, 6);
    check_tok(&lx, 2, PTX_TK_INT, "0b101", 1, 10);
    check_tok(&lx, 3, PTX_TK_INT, "12U", 1, 16);
    check_tok(&lx, 4, PTX_TK_INT, "7u", 1, 20);
    check_tok(&lx, 5, PTX_TK_INT, "0", 1, 23);
    check_tok(&lx, 6, PTX_TK_INT, "0X7fffffff", 1, 25);
    check_tok(&lx, 7, PTX_TK_INT, "4294967295", 1, 36);
    lex_done(&lx);
}

static void test_float_literals(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "0f3F800000 0d3FF0000000000000 0F7FC00000 1.5 1e3 2.5E-2 .5 1.");
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, 8);
    check_tok(&lx, 0, PTX_TK_FLOAT, "0f3F800000", 1, 1);
    check_tok(&lx, 1, PTX_TK_FLOAT, "0d3FF0000000000000", 1, 12);
    check_tok(&lx, 2, PTX_TK_FLOAT, "0F7FC00000", 1, 31);
    check_tok(&lx, 3, PTX_TK_FLOAT, "1.5", 1, 42);
    check_tok(&lx, 4, PTX_TK_FLOAT, "1e3", 1, 46);
    check_tok(&lx, 5, PTX_TK_FLOAT, "2.5E-2", 1, 50);
    check_tok(&lx, 6, PTX_TK_FLOAT, ".5", 1, 57);
    check_tok(&lx, 7, PTX_TK_FLOAT, "1.", 1, 60);
    lex_done(&lx);
}

static void test_negative_immediates_are_two_tokens(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "add.s32 %r1, %r2, -1;");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 5, PTX_TK_PUNCT, "-", 1, 19);
    check_tok(&lx, 6, PTX_TK_INT, "1", 1, 20);
    lex_done(&lx);
}

static void test_strings_with_escapes(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, ".file 1 \"a \\\"quoted\\\" \\\\ path.cu\", 17\n.pragma \"nounroll\";");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 0, PTX_TK_DIRECTIVE, ".file", 1, 1);
    check_tok(&lx, 1, PTX_TK_INT, "1", 1, 7);
    check_tok(&lx, 2, PTX_TK_STRING, "\"a \\\"quoted\\\" \\\\ path.cu\"", 1, 9);
    check_tok(&lx, 3, PTX_TK_PUNCT, ",", 1, 34);
    check_tok(&lx, 4, PTX_TK_INT, "17", 1, 36);
    check_tok(&lx, 5, PTX_TK_DIRECTIVE, ".pragma", 2, 1);
    check_tok(&lx, 6, PTX_TK_STRING, "\"nounroll\"", 2, 9);
    lex_done(&lx);
}

static void test_comments_are_skipped(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "a // line comment ; b\n/* block\n comment */ b/*x*/c // end");
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, 3);
    check_tok(&lx, 0, PTX_TK_IDENT, "a", 1, 1);
    check_tok(&lx, 1, PTX_TK_IDENT, "b", 3, 13);
    check_tok(&lx, 2, PTX_TK_IDENT, "c", 3, 19);
    /* a lone '/' is an operator, not a comment */
    lex_done(&lx);
    lex(&lx, "a / b");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 1, PTX_TK_PUNCT, "/", 1, 3);
    lex_done(&lx);
}

static void test_line_col_tabs_and_crlf(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "\t\tret;\r\n\r\n  exit;\r\n");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 0, PTX_TK_IDENT, "ret", 1, 3); /* a tab is one column (byte) */
    check_tok(&lx, 1, PTX_TK_PUNCT, ";", 1, 6);
    check_tok(&lx, 2, PTX_TK_IDENT, "exit", 3, 3);
    assert_int_equal(lx.m.toks[lx.m.ntoks].kind, PTX_TK_EOF);
    assert_int_equal(lx.m.toks[lx.m.ntoks].line, 4);
    lex_done(&lx);
}

static void test_labels_modulo_and_punct(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "$L__BB0_1: @!%p1 bra $L__BB0_1; x % 4 | ^ ~ ? = & *");
    assert_int_equal(lx.rc, 0);
    check_tok(&lx, 0, PTX_TK_IDENT, "$L__BB0_1", 1, 1);
    check_tok(&lx, 1, PTX_TK_PUNCT, ":", 1, 10);
    check_tok(&lx, 2, PTX_TK_PUNCT, "@", 1, 12);
    check_tok(&lx, 3, PTX_TK_PUNCT, "!", 1, 13);
    check_tok(&lx, 4, PTX_TK_IDENT, "%p1", 1, 14);
    check_tok(&lx, 5, PTX_TK_IDENT, "bra", 1, 18);
    check_tok(&lx, 6, PTX_TK_IDENT, "$L__BB0_1", 1, 22);
    check_tok(&lx, 9, PTX_TK_PUNCT, "%", 1, 35); /* '%' not followed by a name */
    const char *rest = "|^~?=&*";
    for (uint32_t k = 0; rest[k]; k++) {
        char s[2] = {rest[k], 0};
        check_tok(&lx, 11 + k, PTX_TK_PUNCT, s, 1, 39 + 2 * k);
    }
    lex_done(&lx);
}

static void test_empty_and_blank_input(void **state)
{
    (void)state;
    lexed lx;
    lex(&lx, "");
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, 0);
    assert_int_equal(lx.m.toks[0].kind, PTX_TK_EOF);
    lex_done(&lx);
    lex(&lx, "  \n// only a comment\n/* and another */\n");
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, 0);
    assert_int_equal(lx.m.toks[0].line, 4);
    assert_int_equal(lx.m.toks[0].col, 1);
    lex_done(&lx);
}

static void test_many_tokens_grow(void **state)
{
    (void)state;
    /* Far more tokens than the initial len/5 estimate: ";" is one token per byte. */
    size_t n = 100000;
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, ';', n);
    s[n] = 0;
    lexed lx;
    lex(&lx, s);
    assert_int_equal(lx.rc, 0);
    assert_int_equal(lx.m.ntoks, n);
    check_tok(&lx, (uint32_t)n - 1, PTX_TK_PUNCT, ";", 1, (unsigned)n);
    lex_done(&lx);
    free(s);
}

static void test_error_unterminated_comment(void **state)
{
    (void)state;
    expect_lex_error("ret;\n  /* no end\n\n", 2, 3, "unterminated /* comment");
    expect_lex_error("/*", 1, 1, "unterminated /* comment");
    expect_lex_error("a /* x *", 1, 3, "unterminated /* comment");
}

static void test_error_unterminated_string(void **state)
{
    (void)state;
    expect_lex_error(".pragma \"abc", 1, 9, "unterminated string literal");
    expect_lex_error("x\n .file 1 \"abc\n\"", 2, 10, "unterminated string literal");
    expect_lex_error("\"ends in escape\\", 1, 1, "unterminated string literal");
}

static void test_error_bad_numbers(void **state)
{
    (void)state;
    expect_lex_error("mov.f32 %f1, 0f3F80;", 1, 14, "hexadecimal float literal needs exactly 8 hex digits");
    expect_lex_error("\n  0d3FF00000;", 2, 3, "hexadecimal float literal needs exactly 16 hex digits");
    expect_lex_error("0f3F8000000", 1, 1, "hexadecimal float literal needs exactly 8 hex digits");
    expect_lex_error("x, 0x;", 1, 4, "hexadecimal literal has no digits");
    expect_lex_error("12abc", 1, 3, "invalid character 'a' in number");
    expect_lex_error("0b102", 1, 5, "invalid character '2' in number");
    expect_lex_error("1.5f", 1, 4, "invalid character 'f' in number");
}

static void test_error_bad_bytes(void **state)
{
    (void)state;
    expect_lex_error("ret;\n\t#include", 2, 2, "unexpected character '#'");
    expect_lex_error("a `b`", 1, 3, "unexpected character '`'");
    expect_lex_error("ret; \x80\x81", 1, 6, "unexpected byte 0x80");
    expect_lex_error_at("ret;\0x", 6, 1, 5, "unexpected byte 0x00", __FILE__, __LINE__);
    expect_lex_error("\x01", 1, 1, "unexpected byte 0x01");
}

static void test_error_bad_directive_dot(void **state)
{
    (void)state;
    expect_lex_error(".version 8.0\n. entry", 2, 1, "expected a directive name after '.'");
    expect_lex_error(".%r1", 1, 1, "expected a directive name after '.'");
    expect_lex_error("x .", 1, 3, "expected a directive name after '.'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instruction_tokens),
        cmocka_unit_test(test_long_dotted_opcodes),
        cmocka_unit_test(test_special_and_range_registers),
        cmocka_unit_test(test_directives_and_qualifiers),
        cmocka_unit_test(test_integer_literals),
        cmocka_unit_test(test_float_literals),
        cmocka_unit_test(test_negative_immediates_are_two_tokens),
        cmocka_unit_test(test_strings_with_escapes),
        cmocka_unit_test(test_comments_are_skipped),
        cmocka_unit_test(test_line_col_tabs_and_crlf),
        cmocka_unit_test(test_labels_modulo_and_punct),
        cmocka_unit_test(test_empty_and_blank_input),
        cmocka_unit_test(test_many_tokens_grow),
        cmocka_unit_test(test_error_unterminated_comment),
        cmocka_unit_test(test_error_unterminated_string),
        cmocka_unit_test(test_error_bad_numbers),
        cmocka_unit_test(test_error_bad_bytes),
        cmocka_unit_test(test_error_bad_directive_dot),
    };
    return cmocka_run_group_tests_name("lexer", tests, NULL, NULL);
}
