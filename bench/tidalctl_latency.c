/* tidalctl_latency — host-side reaction time of the control plane: from a `set` request to
 * the moment a tenant's tidal_client_wait returned CHANGED and its snapshot holds the new
 * mask (what libtidal then writes to the device is not measured here).
 *
 *   build/bench/tidalctl_latency [--sets N] [--tenants T] [--tidald PATH] [--spawn N] [--spin]
 *
 * Starts its own tidald (private socket in a temp dir, unique shm name, --reset), forks T
 * tenants (tidal_client_*), then times N sets for each of:
 *   persistent  one controller connection, request after request (libtidal-style API call)
 *   connect     a new connection per set (what tidalctl does, without exec)
 *   spawn       `tidalctl set` run with posix_spawn (includes exec + dynamic loading)
 * For each: request -> answer at the controller, and request -> the last tenant saw the
 * mask. Clocks: CLOCK_MONOTONIC, shared by all processes. --spin: tenants busy-poll
 * (tidal_client_wait with timeout 0) instead of sleeping in ppoll, which shows what the
 * tenant's wake-up costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "tidal_client.h"

#ifndef TIDALD_PATH
#define TIDALD_PATH "tidald"
#endif

extern char **environ;

#define MAX_TENANTS 16
#define MAX_SETS 100000

typedef struct shared {
    volatile uint64_t seen[MAX_TENANTS][MAX_SETS + 1]; /* ns when tenant t saw value v */
} shared;

static shared *S;
static int g_spin; /* tenants busy-poll (tidal_client_wait(c, 0)) instead of sleeping */
static char g_sock[TIDAL_SOCKET_PATH_MAX];

static uint64_t now_ns(void) { return tidal_control_now_ns(); }

static void die(const char *msg)
{
    fprintf(stderr, "tidalctl_latency: %s: %s\n", msg, strerror(errno));
    exit(1);
}

/* The SM set that encodes value v (1..MAX_SETS): its bits, as SM ids 0..16. */
static void set_text(unsigned v, char *buf, size_t n)
{
    tidal_smset s = {{(uint64_t)v, 0, 0, 0}};
    tidal_smset_format(&s, buf, n);
}

static int g_seen_pipe[2]; /* tenants write one byte per newly seen value */

static void tenant_main(int idx, int ready_fd)
{
    tidal_client *c;
    int rc = -1;
    for (int i = 0; i < 100 && rc != TIDAL_OK; i++) {
        rc = tidal_client_open(g_sock, NULL, "bench", 0, &c);
        if (rc != TIDAL_OK) usleep(10000);
    }
    if (rc != TIDAL_OK) _exit(2);
    char one = 1;
    if (write(ready_fd, &one, 1) != 1) _exit(2);
    close(ready_fd);
    for (;;) {
        int ev = tidal_client_wait(c, g_spin ? 0 : 1000);
        if (ev == TIDAL_CLIENT_DISCONNECTED) break;
        if (ev != TIDAL_CLIENT_CHANGED) continue;
        tidal_client_part parts[64];
        unsigned n;
        if (tidal_client_snapshot(c, parts, 64, &n, NULL) != TIDAL_OK) continue;
        uint64_t t = now_ns();
        for (unsigned i = 0; i < n; i++)
            if (!strcmp(parts[i].name, "bench")) {
                uint64_t v = parts[i].mask.bits[0];
                if (v >= 1 && v <= MAX_SETS && !S->seen[idx][v]) {
                    S->seen[idx][v] = t;
                    char one = 1;
                    if (write(g_seen_pipe[1], &one, 1) != 1) _exit(2);
                }
            }
    }
    tidal_client_close(c);
    _exit(0);
}

static int connect_sock(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", g_sock);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) return -1;
    return fd;
}

/* Sends req, reads through "end\n". 0 when the answer starts with "ok". */
static int roundtrip(int fd, const char *req)
{
    size_t len = strlen(req);
    if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) return -1;
    char buf[4096];
    size_t have = 0;
    for (;;) {
        ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        if (n <= 0) return -1;
        have += (size_t)n;
        buf[have] = '\0';
        if (have >= 4 && !strcmp(buf + have - 4, "end\n")) return strncmp(buf, "ok", 2) ? -1 : 0;
        if (have >= sizeof buf - 1) return -1;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    double sum = 0;
    for (unsigned i = 0; i < n; i++) sum += (double)v[i];
    unsigned p99 = (unsigned)((n * 99 + 99) / 100);
    if (p99 > 0) p99--;
    printf("  %-34s median %8.1f us  p99 %8.1f us  mean %8.1f us  max %8.1f us  (n=%u)\n", what, (double)v[n / 2] / 1e3,
           (double)v[p99] / 1e3, sum / n / 1e3, (double)v[n - 1] / 1e3, n);
}

enum { M_PERSISTENT, M_CONNECT, M_SPAWN };

static void run_mode(int mode, unsigned sets, unsigned tenants, unsigned *value, const char *tidalctl)
{
    static uint64_t ans[MAX_SETS], seen[MAX_SETS];
    int pfd = -1;
    if (mode == M_PERSISTENT && (pfd = connect_sock()) < 0) die("connect");
    for (unsigned i = 0; i < sets; i++) {
        unsigned v = ++*value;
        char sms[256], req[300];
        set_text(v, sms, sizeof sms);
        snprintf(req, sizeof req, "set bench %s\n", sms);
        uint64_t t0 = now_ns();
        if (mode == M_PERSISTENT) {
            if (roundtrip(pfd, req) != 0) die("set (persistent)");
        } else if (mode == M_CONNECT) {
            int fd = connect_sock();
            if (fd < 0 || roundtrip(fd, req) != 0) die("set (connect)");
            close(fd);
        } else {
            char *argv[] = {(char *)tidalctl, "--socket", g_sock, "set", "bench", sms, NULL};
            pid_t pid;
            int fd = open("/dev/null", 0);
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_adddup2(&fa, fd, 1);
            if (posix_spawn(&pid, tidalctl, &fa, NULL, argv, environ) != 0) die("posix_spawn tidalctl");
            int st;
            waitpid(pid, &st, 0);
            posix_spawn_file_actions_destroy(&fa);
            close(fd);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("tidalctl set failed");
        }
        uint64_t t1 = now_ns();
        /* wait (blocked, not spinning: the CPUs are for tidald and the tenants) until every
         * tenant saw v; bounded: 2 s */
        uint64_t last = 0;
        for (unsigned got = 0; got < tenants;) {
            struct pollfd p = {.fd = g_seen_pipe[0], .events = POLLIN};
            char b[MAX_TENANTS];
            if (poll(&p, 1, 2000) <= 0) {
                fprintf(stderr, "tidalctl_latency: a tenant never saw set %u\n", v);
                exit(1);
            }
            ssize_t r = read(g_seen_pipe[0], b, tenants - got);
            if (r > 0) got += (unsigned)r;
        }
        for (unsigned t = 0; t < tenants; t++) {
            if (!S->seen[t][v]) {
                fprintf(stderr, "tidalctl_latency: tenant %u missed set %u\n", t, v);
                exit(1);
            }
            if (S->seen[t][v] > last) last = S->seen[t][v];
        }
        ans[i] = t1 - t0;
        seen[i] = last - t0;
    }
    if (pfd >= 0) close(pfd);
    static const char *names[] = {"persistent connection", "new connection per set", "tidalctl (posix_spawn)"};
    char a[96], b[96];
    snprintf(a, sizeof a, "%s: answer", names[mode]);
    snprintf(b, sizeof b, "%s: last tenant", names[mode]);
    report(a, ans, sets);
    report(b, seen, sets);
}

int main(int argc, char **argv)
{
    unsigned sets = 1000, tenants = 1, spawn_sets = 200;
    const char *tidald = TIDALD_PATH;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sets") && i + 1 < argc)
            sets = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tenants") && i + 1 < argc)
            tenants = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--spawn") && i + 1 < argc)
            spawn_sets = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tidald") && i + 1 < argc)
            tidald = argv[++i];
        else if (!strcmp(argv[i], "--spin"))
            g_spin = 1;
        else {
            fprintf(stderr, "usage: tidalctl_latency [--sets N] [--tenants T] [--spawn N] [--tidald PATH] [--spin]\n");
            return 2;
        }
    }
    if (sets < 1 || sets > MAX_SETS / 3 || tenants < 1 || tenants > MAX_TENANTS || spawn_sets > MAX_SETS / 3) {
        fprintf(stderr, "tidalctl_latency: --sets 1..%d, --tenants 1..%d\n", MAX_SETS / 3, MAX_TENANTS);
        return 2;
    }
    char tidalctl[4096];
    snprintf(tidalctl, sizeof tidalctl, "%s", tidald);
    char *slash = strrchr(tidalctl, '/');
    snprintf(slash ? slash + 1 : tidalctl, sizeof tidalctl - (size_t)(slash ? slash + 1 - tidalctl : 0), "tidalctl");

    char dir[] = "/tmp/tidal-bench.XXXXXX";
    if (!mkdtemp(dir)) die("mkdtemp");
    snprintf(g_sock, sizeof g_sock, "%s/tidald.sock", dir);
    char shm[64];
    snprintf(shm, sizeof shm, "/tidal-bench-%d", (int)getpid());
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) die("mmap");
    signal(SIGPIPE, SIG_IGN);

    pid_t dpid = fork();
    if (dpid == 0) {
        int null = open("/dev/null", 1);
        dup2(null, 2); /* tidald logs every set */
        execl(tidald, tidald, "--socket", g_sock, "--shm", shm, "--reset", (char *)NULL);
        _exit(127);
    }
    int fd = -1;
    for (int i = 0; i < 500 && fd < 0; i++) {
        fd = connect_sock();
        if (fd < 0) usleep(10000);
    }
    if (fd < 0) die("tidald did not start");
    if (roundtrip(fd, "create bench 0\n") != 0) die("create");
    close(fd);

    int ready[2];
    if (pipe(ready) != 0 || pipe(g_seen_pipe) != 0) die("pipe");
    pid_t tp[MAX_TENANTS];
    for (unsigned t = 0; t < tenants; t++) {
        tp[t] = fork();
        if (tp[t] == 0) {
            close(ready[0]);
            tenant_main((int)t, ready[1]);
        }
    }
    close(ready[1]);
    for (unsigned t = 0; t < tenants; t++) {
        char b;
        if (read(ready[0], &b, 1) != 1) die("tenant did not start");
    }
    close(ready[0]);

    struct utsname u;
    uname(&u);
    printf("tidalctl_latency: %u sets, %u tenant%s%s, %ld CPUs, %s %s\n", sets, tenants, tenants == 1 ? "" : "s",
           g_spin ? " (busy-polling)" : "", sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release);
    unsigned value = 0;
    run_mode(M_PERSISTENT, sets, tenants, &value, tidalctl);
    run_mode(M_CONNECT, sets, tenants, &value, tidalctl);
    if (spawn_sets) {
        if (access(tidalctl, X_OK) == 0)
            run_mode(M_SPAWN, spawn_sets, tenants, &value, tidalctl);
        else
            printf("  (no %s: spawn mode skipped)\n", tidalctl);
    }

    kill(dpid, SIGTERM);
    waitpid(dpid, NULL, 0);
    for (unsigned t = 0; t < tenants; t++) {
        kill(tp[t], SIGKILL);
        waitpid(tp[t], NULL, 0);
    }
    shm_unlink(shm);
    rmdir(dir);
    return 0;
}
