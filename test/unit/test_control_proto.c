/* test_control_proto.c — the control protocol's request parser, line buffer, names and
 * default paths (runtime/control_proto.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control_proto.h"

static tidal_req R;
static char E[256];

static int parse(const char *line) { return tidal_proto_parse(line, &R, E, sizeof E); }

static void expect_error(const char *line, const char *msg)
{
    if (parse(line) == 0) fail_msg("'%s' parsed, expected error '%s'", line, msg);
    if (!strstr(E, msg)) fail_msg("'%s': error '%s', expected '%s'", line, E, msg);
}

static void test_simple_verbs(void **state)
{
    (void)state;
    assert_int_equal(parse("ping"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_PING);
    assert_int_equal(parse("  list\t "), 0);
    assert_int_equal(R.verb, TIDAL_REQ_LIST);
    assert_int_equal(parse("tenants"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_TENANTS);
    assert_int_equal(R.with_stats, 0);
    assert_int_equal(parse("tenants stats"), 0);
    assert_int_equal(R.with_stats, 1);
    expect_error("ping now", "usage: ping");
    expect_error("tenants all", "usage: tenants");
    expect_error("", "empty request");
    expect_error("   ", "empty request");
    expect_error("frob", "unknown request 'frob'");
    expect_error("PING", "unknown request");
}

static void test_create_set(void **state)
{
    (void)state;
    assert_int_equal(parse("create ls 0-47,64"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_CREATE);
    assert_string_equal(R.name, "ls");
    assert_int_equal(R.set.bits[0], (1ull << 48) - 1);
    assert_int_equal(R.set.bits[1], 1);
    assert_int_equal(R.is_all, 0);
    /* the SM set is the rest of the line: blanks inside are fine */
    assert_int_equal(parse("set be 48 - 131 , 200"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_SET);
    assert_int_equal(tidal_smset_count(&R.set), 84 + 1);
    assert_int_equal(parse("set be all"), 0);
    assert_int_equal(R.is_all, 1);
    assert_int_equal(tidal_smset_count(&R.set), 256);
    assert_int_equal(parse("set be none"), 0);
    assert_int_equal(tidal_smset_count(&R.set), 0);
    assert_int_equal(parse("create a.b-c_9 255"), 0);
    assert_int_equal(R.set.bits[3], 1ull << 63);
    expect_error("create x 256", "bad SM set");
    expect_error("create x 0-256", "bad SM set");
    expect_error("create x 5-3", "bad SM set");
    expect_error("create x 1,,2", "bad SM set");
    expect_error("create x abc", "bad SM set");
    expect_error("create x 99999999999999999999", "bad SM set");
    expect_error("create x", "usage: create NAME SMSET");
    expect_error("set", "usage: set NAME SMSET");
    expect_error("create bad/name 1", "bad partition name");
    expect_error("create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1", "bad partition name"); /* 32 chars */
    assert_int_equal(parse("create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1"), 0);          /* 31 chars */
}

static void test_destroy_hist_tenant(void **state)
{
    (void)state;
    assert_int_equal(parse("destroy ls"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_DESTROY);
    assert_int_equal(parse("hist be"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_HIST);
    assert_string_equal(R.name, "be");
    expect_error("destroy", "usage: destroy NAME");
    expect_error("hist a b", "usage: hist NAME");
    assert_int_equal(parse("tenant 1234 python3.11"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_TENANT);
    assert_int_equal(R.pid, 1234);
    assert_string_equal(R.tenant_name, "python3.11");
    assert_int_equal(R.mps, 0);
    assert_int_equal(parse("tenant 7 x mps"), 0);
    assert_int_equal(R.mps, 1);
    expect_error("tenant 0 x", "bad pid");
    expect_error("tenant -5 x", "bad pid");
    expect_error("tenant 99999999999 x", "bad pid");
    expect_error("tenant 5 x yes", "want mps");
    expect_error("tenant 5", "usage: tenant");
    expect_error("tenant 5 a/b", "bad tenant name");
}

static void test_stats_lines(void **state)
{
    (void)state;
    assert_int_equal(parse("stats 17 ls violations 3 sm 0:10 5:20 255:1 5:1"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_STATS);
    assert_int_equal(R.seq, 17);
    assert_string_equal(R.name, "ls");
    assert_int_equal(R.violations, 3);
    assert_int_equal(R.sm_blocks[0], 10);
    assert_int_equal(R.sm_blocks[5], 21);
    assert_int_equal(R.sm_blocks[255], 1);
    assert_int_equal(parse("stats 1 be violations 0 sm"), 0);
    assert_int_equal(parse("stats 1 be violations 0"), 0);
    expect_error("stats 1 be violations", "usage: stats");
    expect_error("stats x be violations 0", "bad stats sequence");
    expect_error("stats 1 be viol 0", "expected 'violations'");
    expect_error("stats 1 be violations 0 sm 256:1", "bad SM counter");
    expect_error("stats 1 be violations 0 sm 3", "bad SM counter");
    expect_error("stats 1 be violations 0 sm 3:x", "bad SM counter");
    expect_error("stats 1 be violations 0 smx 3:1", "expected 'sm'");
    assert_int_equal(parse("stats-end 17"), 0);
    assert_int_equal(R.verb, TIDAL_REQ_STATS_END);
    assert_int_equal(R.seq, 17);
    expect_error("stats-end", "usage: stats-end");
    expect_error("stats-end 4294967296", "usage: stats-end");
    /* the longest stats line tidal_client can send fits */
    char line[TIDAL_PROTO_MAX_LINE];
    size_t n = (size_t)snprintf(line, sizeof line, "stats 4294967295 %s violations 18446744073709551615 sm",
                                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    for (unsigned s = 0; s < 256; s++) n += (size_t)snprintf(line + n, sizeof line - n, " %u:18446744073709551615", s);
    assert_true(n < TIDAL_PROTO_MAX_LINE - 1);
    assert_int_equal(parse(line), 0);
    assert_int_equal(R.sm_blocks[200], UINT64_MAX);
}

static void test_bad_bytes(void **state)
{
    (void)state;
    expect_error("ping\x01", "bad byte 0x01 at offset 4");
    expect_error("list\x7f", "bad byte 0x7f");
    expect_error("create ls 0-3\xc3\xa9", "bad byte 0xc3");
    char big[TIDAL_PROTO_MAX_LINE + 10];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_error(big, "line too long");
}

static void feed(tidal_linebuf *lb, const char *s, size_t n)
{
    while (n) {
        size_t avail;
        char *p = tidal_linebuf_space(lb, &avail);
        assert_true(avail > 0);
        size_t k = n < avail ? n : avail;
        memcpy(p, s, k);
        tidal_linebuf_added(lb, k);
        s += k;
        n -= k;
        if (n) return; /* caller drains */
    }
}

static void test_linebuf(void **state)
{
    (void)state;
    static tidal_linebuf lb;
    char *line;
    memset(&lb, 0, sizeof lb);
    feed(&lb, "pi", 2);
    assert_int_equal(tidal_linebuf_next(&lb, &line), 0);
    feed(&lb, "ng\r\nlist\n\nhalf", 14);
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_string_equal(line, "ping");
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_string_equal(line, "list");
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_string_equal(line, "");
    assert_int_equal(tidal_linebuf_next(&lb, &line), 0);
    feed(&lb, " line\n", 6);
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_string_equal(line, "half line");

    /* embedded NUL becomes a byte the parser rejects */
    feed(&lb, "pi\0ng\n", 6);
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_int_equal(strlen(line), 5);
    assert_int_equal(parse(line), -1);

    /* a line of exactly MAX-1 bytes + "\n" fits */
    static char big[TIDAL_PROTO_MAX_LINE + 100];
    memset(big, 'x', TIDAL_PROTO_MAX_LINE - 1);
    big[TIDAL_PROTO_MAX_LINE - 1] = '\n';
    feed(&lb, big, TIDAL_PROTO_MAX_LINE);
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_int_equal(strlen(line), TIDAL_PROTO_MAX_LINE - 1);

    /* 1 MB without "\n": reported once, skipped up to the next line */
    int reports = 0;
    memset(big, 'y', sizeof big);
    for (int i = 0; i < 128; i++) {
        feed(&lb, big, 8192);
        int rc;
        while ((rc = tidal_linebuf_next(&lb, &line)) != 0) {
            assert_int_equal(rc, -1);
            reports++;
        }
    }
    assert_int_equal(reports, 1);
    feed(&lb, "yyy\nping\n", 9);
    assert_int_equal(tidal_linebuf_next(&lb, &line), 1);
    assert_string_equal(line, "ping");
    assert_int_equal(tidal_linebuf_next(&lb, &line), 0);
}

static void test_names_and_paths(void **state)
{
    (void)state;
    assert_true(tidal_control_name_ok("ls"));
    assert_true(tidal_control_name_ok("A.b-c_0"));
    assert_false(tidal_control_name_ok(""));
    assert_false(tidal_control_name_ok("a b"));
    assert_false(tidal_control_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    assert_true(tidal_control_tenant_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    assert_true(tidal_control_shm_name_ok("/tidal-1000"));
    assert_false(tidal_control_shm_name_ok("tidal"));
    assert_false(tidal_control_shm_name_ok("/"));
    assert_false(tidal_control_shm_name_ok("/a/b"));

    char buf[TIDAL_SOCKET_PATH_MAX], want[TIDAL_SOCKET_PATH_MAX];
    setenv("TIDAL_SOCKET", "/x/y.sock", 1);
    assert_int_equal(tidal_control_socket_path(buf, sizeof buf), 0);
    assert_string_equal(buf, "/x/y.sock");
    unsetenv("TIDAL_SOCKET");
    setenv("XDG_RUNTIME_DIR", "/run/user/42", 1);
    assert_int_equal(tidal_control_socket_path(buf, sizeof buf), 0);
    assert_string_equal(buf, "/run/user/42/tidal/tidald.sock");
    setenv("XDG_RUNTIME_DIR", "relative", 1);
    assert_int_equal(tidal_control_socket_path(buf, sizeof buf), 0);
    snprintf(want, sizeof want, "/tmp/tidal-%u/tidald.sock", (unsigned)getuid());
    assert_string_equal(buf, want);
    unsetenv("XDG_RUNTIME_DIR");
    assert_int_equal(tidal_control_socket_path(buf, sizeof buf), 0);
    assert_string_equal(buf, want);
    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    setenv("TIDAL_SOCKET", longp, 1);
    assert_int_equal(tidal_control_socket_path(buf, sizeof buf), -1);
    unsetenv("TIDAL_SOCKET");

    char shm[256];
    unsetenv("TIDAL_SHM");
    assert_int_equal(tidal_control_shm_name(shm, sizeof shm), 0);
    snprintf(want, sizeof want, "/tidal-%u", (unsigned)getuid());
    assert_string_equal(shm, want);
    setenv("TIDAL_SHM", "/mine", 1);
    assert_int_equal(tidal_control_shm_name(shm, sizeof shm), 0);
    assert_string_equal(shm, "/mine");
    setenv("TIDAL_SHM", "no-slash", 1);
    assert_int_equal(tidal_control_shm_name(shm, sizeof shm), -1);
    unsetenv("TIDAL_SHM");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_verbs),        cmocka_unit_test(test_create_set),
        cmocka_unit_test(test_destroy_hist_tenant), cmocka_unit_test(test_stats_lines),
        cmocka_unit_test(test_bad_bytes),           cmocka_unit_test(test_linebuf),
        cmocka_unit_test(test_names_and_paths),
    };
    return cmocka_run_group_tests_name("control_proto", tests, NULL, NULL);
}
