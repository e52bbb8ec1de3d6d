/* control_probe — test helper for test/control/run.sh (no GPU).
 *
 *   control_probe tenant --socket S [--name N] [--mps] [--no-answer] [--blocks K]
 *       A tenant using tidal_client_*: prints "snap gen G NAME=SMSET ..." after open and
 *       after every CHANGED, "disconnected" (then the snapshot it still has), "stats
 *       answered" (each partition: K blocks on every SM of its mask below 132, violations
 *       1), and "SLOW ..." whenever a wait overran its timeout. SIGTERM: prints "bye", exits.
 *   control_probe raw --socket S [--close-early] [--wait-ms MS]
 *       Sends stdin as is, then shuts down its side and prints every byte tidald answers
 *       until EOF (exit 0) or MS (default 3000) pass (exit 3). --close-early: send, close at
 *       once, read nothing.
 *   control_probe idle --socket S --ms MS
 *       Connects and says nothing for MS ms.
 *   control_probe fake-daemon --socket S --mode silent|garbage|hello-garbage [--shm NAME]
 *       A broken tidald for one connection: never answers, answers garbage, or answers a
 *       valid hello (shm NAME) followed by garbage, then closes after 1.5 s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "tidal_client.h"

static volatile sig_atomic_t g_stop;
static void on_term(int sig) { (void)sig; g_stop = 1; }

static const char *arg(int argc, char **argv, const char *name)
{
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return NULL;
}
static int flag(int argc, char **argv, const char *name)
{
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], name)) return 1;
    return 0;
}

static void print_snap(tidal_client *c, const char *prefix)
{
    tidal_client_part parts[64];
    unsigned n = 0;
    uint32_t gen = 0;
    int rc = tidal_client_snapshot(c, parts, 64, &n, &gen);
    if (rc != TIDAL_OK) {
        printf("%s error %d\n", prefix, rc);
        return;
    }
    printf("%s gen %u", prefix, gen);
    for (unsigned i = 0; i < n; i++) {
        tidal_smset s;
        memcpy(s.bits, parts[i].mask, sizeof s.bits);
        char buf[1100];
        tidal_smset_format(&s, buf, sizeof buf);
        printf(" %s=%s", parts[i].name, buf);
    }
    printf("\n");
}

static int tenant(int argc, char **argv)
{
    const char *sock = arg(argc, argv, "--socket");
    const char *name = arg(argc, argv, "--name");
    const char *blocks = arg(argc, argv, "--blocks");
    uint64_t k = blocks ? strtoull(blocks, NULL, 10) : 1;
    int no_answer = flag(argc, argv, "--no-answer");
    tidal_client *c;
    int rc = tidal_client_open(sock, NULL, name ? name : "probe", flag(argc, argv, "--mps"), &c);
    if (rc != TIDAL_OK) {
        printf("open failed %d (%s)\n", rc, rc == TIDAL_ERR_NOT_FOUND ? "not found" : "other");
        return 3;
    }
    printf("open ok\n");
    print_snap(c, "snap");
    while (!g_stop) {
        const int timeout = 100;
        uint64_t t0 = tidal_control_now_ns();
        int ev = tidal_client_wait(c, timeout);
        uint64_t ms = (tidal_control_now_ns() - t0) / 1000000;
        if (ms > (uint64_t)timeout + 50) printf("SLOW wait %llu ms (event %d)\n", (unsigned long long)ms, ev);
        if (ev == TIDAL_CLIENT_CHANGED) {
            print_snap(c, "snap");
        } else if (ev == TIDAL_CLIENT_DISCONNECTED) {
            printf("disconnected\n");
            print_snap(c, "kept");
        } else if (ev == TIDAL_CLIENT_STATS) {
            if (no_answer) {
                printf("stats ignored\n");
                continue;
            }
            tidal_client_part parts[64];
            unsigned n = 0;
            if (tidal_client_snapshot(c, parts, 64, &n, NULL) == TIDAL_OK)
                for (unsigned i = 0; i < n; i++) {
                    uint64_t sm[256] = {0};
                    for (unsigned s = 0; s < 132; s++)
                        if ((parts[i].mask[s / 64] >> (s % 64)) & 1) sm[s] = k;
                    tidal_client_send_stats(c, parts[i].name, 1, sm);
                }
            tidal_client_stats_end(c);
            printf("stats answered\n");
        } else if (ev < 0) {
            printf("wait error %d\n", ev);
        }
    }
    tidal_client_close(c);
    printf("bye\n");
    return 0;
}

static int connect_to(const char *sock)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock ? sock : "");
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        printf("connect failed: %s\n", strerror(errno));
        exit(69);
    }
    return fd;
}

static int raw(int argc, char **argv)
{
    const char *w = arg(argc, argv, "--wait-ms");
    int wait_ms = w ? atoi(w) : 3000;
    size_t cap = 1 << 16, len = 0;
    char *in = malloc(cap);
    size_t n;
    while (in && (n = fread(in + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap) in = realloc(in, cap *= 2);
    }
    if (!in) return 1;
    int fd = connect_to(arg(argc, argv, "--socket"));
    size_t off = 0;
    int eof = 0;
    uint64_t deadline = tidal_control_now_ns() + (uint64_t)wait_ms * 1000000ull;
    /* send while reading (tidald may answer before all is sent) */
    while (!eof) {
        struct pollfd p = {.fd = fd, .events = POLLIN | (off < len ? POLLOUT : 0)};
        uint64_t now = tidal_control_now_ns();
        if (now >= deadline) break;
        if (poll(&p, 1, (int)((deadline - now) / 1000000 + 1)) <= 0) continue;
        if (p.revents & POLLOUT) {
            ssize_t s = send(fd, in + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (s > 0) off += (size_t)s;
            if (s < 0 && errno != EAGAIN) break;
            if (off == len) {
                if (flag(argc, argv, "--close-early")) {
                    close(fd);
                    free(in);
                    printf("closed early\n");
                    return 0;
                }
                shutdown(fd, SHUT_WR);
            }
        }
        if (p.revents & (POLLIN | POLLHUP)) {
            char buf[4096];
            ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (r > 0) fwrite(buf, 1, (size_t)r, stdout);
            else if (r == 0 || errno != EAGAIN) eof = 1;
        }
    }
    free(in);
    close(fd);
    fflush(stdout);
    return eof ? 0 : 3;
}

static int idle(int argc, char **argv)
{
    int fd = connect_to(arg(argc, argv, "--socket"));
    const char *ms = arg(argc, argv, "--ms");
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 0};
    long v = ms ? atol(ms) : 1000;
    ts.tv_sec = v / 1000;
    ts.tv_nsec = (v % 1000) * 1000000L;
    nanosleep(&ts, NULL);
    close(fd);
    return 0;
}

static int fake_daemon(int argc, char **argv)
{
    const char *sock = arg(argc, argv, "--socket");
    const char *mode = arg(argc, argv, "--mode");
    const char *shm = arg(argc, argv, "--shm");
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock ? sock : "");
    unlink(a.sun_path);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 4) != 0) {
        perror("fake-daemon");
        return 1;
    }
    printf("listening\n");
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) return 1;
    static char junk[20000];
    memset(junk, 'z', sizeof junk);
    junk[sizeof junk - 1] = '\n';
    char hello[400];
    snprintf(hello, sizeof hello, "ok tenant 1 shm %s gen 1\nend\n", shm ? shm : "/none");
    const char *bad[] = {"\x01\x02\xff\n", "stats\n", "stats abc\n", "stats 99999999999\n", "ok tenant x shm ../x gen\n",
                         "gen -1\n", "error: go away\n", "\n\n\n"};
    if (mode && !strcmp(mode, "hello-garbage")) {
        if (send(fd, hello, strlen(hello), MSG_NOSIGNAL) < 0) return 1;
    }
    if (mode && strcmp(mode, "silent")) {
        for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++)
            if (send(fd, bad[i], strlen(bad[i]), MSG_NOSIGNAL) < 0) break;
        if (send(fd, junk, sizeof junk, MSG_NOSIGNAL) < 0) return 1;
        if (send(fd, "stats 5\n", 8, MSG_NOSIGNAL) < 0) return 1; /* valid request: tenant answers */
    }
    struct timespec ts = {1, 500000000L};
    nanosleep(&ts, NULL);
    close(fd);
    close(lfd);
    unlink(a.sun_path);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && !strcmp(argv[1], "tenant")) return tenant(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "raw")) return raw(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "idle")) return idle(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "fake-daemon")) return fake_daemon(argc, argv);
    fprintf(stderr, "usage: control_probe tenant|raw|idle --socket S ...\n");
    return 2;
}
