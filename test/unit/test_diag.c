/* The library's diagnostics contract (ptx.h): user errors come back in a ptx_diag that
 * the caller prints; internal errors go to the program's fatal handler, or abort()
 * without one; the library itself prints nothing. */
#include "tidal_test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf back;
static ptx_fatal_kind got_kind;
static char got_msg[256];
static int calls;

/* A handler that does not return: it jumps back into the test. */
static void record(ptx_fatal_kind kind, const char *msg)
{
    got_kind = kind;
    snprintf(got_msg, sizeof got_msg, "%s", msg);
    calls++;
    longjmp(back, 1);
}

static void ice_goes_to_the_handler(void **state)
{
    (void)state;
    ptx_set_fatal_handler(record);
    calls = 0;
    if (!setjmp(back)) ptx_ice("statement %u out of range", 7u);
    assert_int_equal(calls, 1);
    assert_int_equal(got_kind, PTX_FATAL_INTERNAL);
    assert_string_equal(got_msg, "statement 7 out of range");
    if (!setjmp(back)) ptx_fatal(PTX_FATAL_LLVM, "Cannot select: %s", "intrinsic");
    assert_int_equal(calls, 2);
    assert_int_equal(got_kind, PTX_FATAL_LLVM);
    assert_string_equal(got_msg, "Cannot select: intrinsic");
    ptx_set_fatal_handler(NULL);
}

/* A library internal error reached from a public entry point: ptx_stmt_set_text on a
 * statement that does not exist. */
static void library_invariant_reaches_the_handler(void **state)
{
    (void)state;
    ptx_module *m = parse_ok(PTX_HDR ".visible .entry k()\n{\n\tret;\n}\n");
    ptx_func *f = ptx_func_at(m, 0);
    ptx_set_fatal_handler(record);
    calls = 0;
    if (!setjmp(back)) ptx_stmt_set_text(f, f->nstmts + 3, "ret;");
    ptx_set_fatal_handler(NULL);
    assert_int_equal(calls, 1);
    assert_int_equal(got_kind, PTX_FATAL_INTERNAL);
    assert_non_null(strstr(got_msg, "out of range"));
    ptx_module_free(m);
}

/* Without a handler the process aborts, silently: the library does not choose an exit
 * status or print. */
static void no_handler_aborts_without_a_word(void **state)
{
    (void)state;
    int err[2];
    assert_int_equal(pipe(err), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(err[1], 2);
        dup2(err[1], 1);
        ptx_set_fatal_handler(NULL);
        ptx_ice("no handler");
    }
    close(err[1]);
    char buf[64];
    ssize_t n = read(err[0], buf, sizeof buf);
    close(err[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_int_equal(n, 0);
}

static char *printed(const ptx_diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ptx_diag_print(d, f);
    fclose(f);
    return buf;
}

static void diag_prints_its_position(void **state)
{
    (void)state;
    ptx_diag d;
    ptx_diag_init(&d, "x.ll");
    ptx_diag_error(&d, 3, 19, "use of undefined value '%s'", "%y");
    ptx_diag_error(&d, 9, 9, "later errors are fallout");
    char *s = printed(&d);
    assert_string_equal(s, "x.ll:3:19: error: use of undefined value '%y'\n");
    free(s);
    assert_int_equal(d.nerrors, 2);

    ptx_diag_init(&d, "x.ll");
    ptx_diag_error(&d, 3, 0, "no column");
    s = printed(&d);
    assert_string_equal(s, "x.ll:3: error: no column\n");
    free(s);

    ptx_diag_init(&d, NULL);
    ptx_diag_error(&d, 0, 0, "no position");
    s = printed(&d);
    assert_string_equal(s, "<input>: error: no position\n");
    free(s);
}

static void diag_long_message_says_it_was_cut(void **state)
{
    (void)state;
    ptx_diag d;
    ptx_diag_init(&d, "x.ll");
    char big[6000];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ptx_diag_error(&d, 1, 1, "verifier: %s", big);
    size_t n = strlen(d.msg);
    assert_int_equal(n, sizeof d.msg - 1);
    assert_string_equal(d.msg + n - 6, " [...]");
    assert_memory_equal(d.msg, "verifier: vvv", 13);

    ptx_diag_init(&d, "x.ll");
    ptx_diag_error(&d, 1, 1, "%s", "short"); /* a message that fits is not marked */
    assert_string_equal(d.msg, "short");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ice_goes_to_the_handler),           cmocka_unit_test(library_invariant_reaches_the_handler),
        cmocka_unit_test(no_handler_aborts_without_a_word),  cmocka_unit_test(diag_prints_its_position),
        cmocka_unit_test(diag_long_message_says_it_was_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
