/* test_runtime_tenant.c — libtidal as a tidald tenant, with the fake driver table (no GPU):
 * a real tidald and tidalctl (TIDALD_PATH, TIDALCTL_PATH) on a private socket and shm name.
 * Checks that tidald's partitions appear in the process, that `tidalctl set` reaches the
 * partition's device control block while the process runs, that a tidald partition cannot
 * be changed locally, and that a killed tidald leaves the last mask in force. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_driver.h"

extern char **environ;

static char dir[64], sock[128], shm[64];
static pid_t daemon_pid;

static pid_t spawn(const char *const argv[])
{
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)argv, environ) != 0) return -1;
    return pid;
}

static int run(const char *const argv[])
{
    pid_t pid = spawn(argv);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int start_daemon(int reset)
{
    const char *argv[] = {TIDALD_PATH, reset ? "--reset" : "--socket", reset ? "--socket" : sock, reset ? sock : NULL,
                          NULL};
    daemon_pid = spawn(argv);
    const char *ping[] = {TIDALCTL_PATH, "ping", NULL};
    for (int i = 0; i < 100; i++) {
        struct stat sb;
        if (stat(sock, &sb) == 0 && run(ping) == 0) return 0;
        sleep_ms(20);
    }
    return -1;
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    snprintf(dir, sizeof dir, "/tmp/tidal-tenant-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(sock, sizeof sock, "%s/tidald.sock", dir);
    snprintf(shm, sizeof shm, "/tidal-tenant-test-%d", (int)getpid());
    setenv("TIDAL_SOCKET", sock, 1);
    setenv("TIDAL_SHM", shm, 1);
    unsetenv("TIDAL_NO_DAEMON");
    setenv("TIDAL_PARTITION", "be", 1);
    setenv("TIDAL_TENANT", "unit-test", 1);
    assert_int_equal(start_daemon(1), 0);
    const char *create[] = {TIDALCTL_PATH, "create", "be", "48-131", NULL};
    assert_int_equal(run(create), 0);
    tidal__set_driver(&fake);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tidal_shutdown();
    tidal__set_driver(NULL);
    if (daemon_pid > 0) {
        kill(daemon_pid, SIGTERM);
        waitpid(daemon_pid, NULL, 0);
    }
    char p[128];
    snprintf(p, sizeof p, "/dev/shm%s", shm);
    unlink(p);
    unlink(sock);
    rmdir(dir);
    return 0;
}

/* The partition the default stream's launches get (launch k once). */
static const tidal_partition *launched_partition(void)
{
    uint64_t a = 0;
    void *params[] = {&a, &a};
    assert_int_equal(tidal_launch_kernel(&fk, 1000, 1, 1, 128, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    tidal_launch tl;
    memcpy(&tl, last.params[2], sizeof tl);
    return (const tidal_partition *)(uintptr_t)tl.partition;
}

static int wait_mask0(const volatile tidal_partition *p, uint64_t want)
{
    for (int i = 0; i < 200; i++) {
        if (p->mask[0] == want) return 1;
        sleep_ms(10);
    }
    return 0;
}

static void test_tidald_partitions_follow_tidalctl(void **state)
{
    (void)state;
    assert_int_equal(tidal_init(0), TIDAL_OK);
    tidal_part *be;
    assert_int_equal(tidal_partition_find("be", &be), TIDAL_OK);
    const tidal_partition *dp = launched_partition();
    assert_int_equal(dp->mask[0], ~0ull << 48);
    assert_int_equal(dp->mask[2], (1ull << 4) - 1); /* 128-131 */

    /* tidalctl set reaches the device block of the running process */
    const char *set[] = {TIDALCTL_PATH, "set", "be", "0-9", NULL};
    assert_int_equal(run(set), 0);
    assert_true(wait_mask0(dp, 0x3ffull));
    assert_int_equal(dp->mask[2], 0);

    /* "all" in tidald is 0-255: clipped to this device's 132 SMs */
    const char *all[] = {TIDALCTL_PATH, "set", "be", "all", NULL};
    assert_int_equal(run(all), 0);
    assert_true(wait_mask0(dp, ~0ull));
    tidal_smset m;
    tidal_partition_get_mask(be, &m);
    assert_int_equal(tidal_smset_count(&m), 132);

    /* owned by tidald: not changeable here */
    assert_int_equal(tidal_partition_set(be, "0-3"), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "tidalctl"));

    /* a partition created later appears too */
    const char *create[] = {TIDALCTL_PATH, "create", "ls", "0-47", NULL};
    assert_int_equal(run(create), 0);
    tidal_part *ls = NULL;
    for (int i = 0; i < 200 && tidal_partition_find("ls", &ls) != TIDAL_OK; i++) sleep_ms(10);
    assert_non_null(ls);

    /* tidald dies: the last mask stays; nothing hangs */
    const char *narrow[] = {TIDALCTL_PATH, "set", "be", "64-71", NULL};
    assert_int_equal(run(narrow), 0);
    assert_true(wait_mask0(dp, 0));
    assert_int_equal(dp->mask[1], 0xffull);
    kill(daemon_pid, SIGKILL);
    waitpid(daemon_pid, NULL, 0);
    daemon_pid = -1;
    sleep_ms(300);
    assert_int_equal(dp->mask[1], 0xffull);
    assert_ptr_equal(launched_partition(), dp);

    /* a restarted tidald resumes; the watcher reconnects and follows it again */
    assert_int_equal(start_daemon(0), 0);
    const char *again[] = {TIDALCTL_PATH, "set", "be", "1", NULL};
    assert_int_equal(run(again), 0);
    assert_true(wait_mask0(dp, 0x2ull));
}

static void test_tidald_absent(void **state)
{
    (void)state;
    kill(daemon_pid, SIGTERM);
    waitpid(daemon_pid, NULL, 0);
    daemon_pid = -1;
    /* TIDAL_PARTITION names a partition nobody has: init succeeds (it may appear later) and
     * launches run unmasked meanwhile */
    assert_int_equal(tidal_init(0), TIDAL_OK);
    tidal_part *p;
    assert_int_equal(tidal_partition_find("be", &p), TIDAL_ERR_NOT_FOUND);
    uint64_t a = 0;
    void *params[] = {&a, &a};
    assert_int_equal(tidal_launch_kernel(&fk, 10, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    tidal_stats st;
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.launches_unmasked, 1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tidald_partitions_follow_tidalctl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tidald_absent, setup, teardown),
    };
    return cmocka_run_group_tests_name("runtime_tenant", tests, NULL, NULL);
}
