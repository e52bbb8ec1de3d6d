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
 *   control_probe fuzz-replay --socket S [--stats-ms MS] PATH...
 *       Plays fuzz_tidald inputs (test/fuzz/fuzz_tidald_input.h; files, or every file of a
 *       directory) to a real tidald: each client a connection, each read split as the
 *       input says (small sends, a pause between them), EOF = shutdown, CLOSE = close,
 *       STALL = stop reading, TIMEOUT = wait MS (tidald's --stats-timeout, default 300) +
 *       50 ms. After each input every connection is shut and drained, and a new one must
 *       get "ok pong" to "ping" within 2 s; prints "replayed N inputs" (exit 0), or what
 *       failed (exit 1).
 */
#define _GNU_SOURCE
#include <dirent.h>
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
#include "fuzz_tidald_input.h"
#include "tidal_client.h"

static volatile sig_atomic_t g_stop;
static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

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
        char buf[1100];
        tidal_smset_format(&parts[i].mask, buf, sizeof buf);
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
                        if ((parts[i].mask.bits[s / 64] >> (s % 64)) & 1) sm[s] = k;
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
            if (r > 0)
                fwrite(buf, 1, (size_t)r, stdout);
            else if (r == 0 || errno != EAGAIN)
                eof = 1;
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
    const char *bad[] = {
        "\x01\x02\xff\n", "stats\n",          "stats abc\n", "stats 99999999999\n", "ok tenant x shm ../x gen\n",
        "gen -1\n",       "error: go away\n", "\n\n\n"};
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

/* ---- fuzz-replay ---------------------------------------------------------------------- */

typedef struct rclient {
    int fd; /* -1: not connected */
    int eof_sent, stalled;
    uint32_t stats_seq;
    tidal_linebuf in;
} rclient;

static rclient RC[TIDAL_FUZZ_CLIENTS];

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

/* Reads what tidald sent the clients that read (for up to ms), noting "stats SEQ". */
static void pump(int ms)
{
    uint64_t deadline = tidal_control_now_ns() + (uint64_t)ms * 1000000ull;
    do {
        struct pollfd p[TIDAL_FUZZ_CLIENTS];
        int idx[TIDAL_FUZZ_CLIENTS], n = 0;
        for (int i = 0; i < TIDAL_FUZZ_CLIENTS; i++)
            if (RC[i].fd >= 0 && !RC[i].stalled) {
                p[n] = (struct pollfd){.fd = RC[i].fd, .events = POLLIN};
                idx[n++] = i;
            }
        if (n == 0) {
            if (ms) sleep_us(ms * 1000L);
            return;
        }
        uint64_t now = tidal_control_now_ns();
        int wait = now < deadline ? (int)((deadline - now) / 1000000) : 0;
        if (poll(p, (nfds_t)n, wait) <= 0) return;
        for (int j = 0; j < n; j++) {
            rclient *c = &RC[idx[j]];
            if (!(p[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            size_t avail;
            char *buf = tidal_linebuf_space(&c->in, &avail);
            ssize_t r = recv(c->fd, buf, avail, MSG_DONTWAIT);
            if (r <= 0) { /* tidald let it go (or dropped it) */
                if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                    close(c->fd);
                    c->fd = -1;
                }
                continue;
            }
            tidal_linebuf_added(&c->in, (size_t)r);
            char *line;
            int rc;
            while ((rc = tidal_linebuf_next(&c->in, &line)) != 0) {
                unsigned long v;
                char *end;
                if (rc > 0 && !strncmp(line, "stats ", 6) && (v = strtoul(line + 6, &end, 10)) > 0 && !*end)
                    c->stats_seq = (uint32_t)v;
            }
        }
    } while (tidal_control_now_ns() < deadline);
}

/* Sends n bytes in pieces of chunk (0: at once), pausing between them so that tidald reads
 * them apart; reads the others meanwhile. 0, or -1 when tidald took nothing for 2 s. */
static int send_split(rclient *c, const char *p, size_t n, size_t chunk)
{
    size_t off = 0;
    uint64_t deadline = tidal_control_now_ns() + 2000000000ull;
    while (off < n && c->fd >= 0) {
        size_t m = chunk && n - off > chunk ? chunk : n - off;
        ssize_t w = send(c->fd, p + off, m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            off += (size_t)w;
            deadline = tidal_control_now_ns() + 2000000000ull;
            if (chunk) sleep_us(100);
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return 0; /* dropped */
        if (tidal_control_now_ns() > deadline) return -1;
        pump(1);
    }
    return 0;
}

/* "ping" on a new connection: 0 when "ok pong ..." comes within 2 s. */
static int ping_ok(const char *sock)
{
    int fd = connect_to(sock);
    if (send(fd, "ping\n", 5, MSG_NOSIGNAL) != 5) {
        close(fd);
        return -1;
    }
    static tidal_linebuf lb;
    memset(&lb, 0, sizeof lb);
    uint64_t deadline = tidal_control_now_ns() + 2000000000ull;
    int ok = -1;
    while (ok < 0 && tidal_control_now_ns() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        size_t avail;
        char *buf = tidal_linebuf_space(&lb, &avail);
        ssize_t r = recv(fd, buf, avail, 0);
        if (r <= 0) break;
        tidal_linebuf_added(&lb, (size_t)r);
        char *line;
        while (ok < 0 && tidal_linebuf_next(&lb, &line) > 0)
            if (!strncmp(line, "ok pong ", 8)) ok = 0;
    }
    close(fd);
    return ok;
}

static int replay_one(const char *sock, const unsigned char *data, size_t size, int stats_ms)
{
    for (int i = 0; i < TIDAL_FUZZ_CLIENTS; i++) RC[i] = (rclient){.fd = -1};
    size_t pos, fed = 0;
    size_t chunk = tidal_fuzz_chunk(data, size, &pos);
    static char out[TIDAL_FUZZ_MAX_FEED + 16];
    tidal_fuzz_rec r;
    while (tidal_fuzz_next(data, size, &pos, &r)) {
        rclient *c = &RC[r.client];
        pump(0);
        switch (r.op) {
        case TIDAL_FUZZ_SEND:
        case TIDAL_FUZZ_REPEAT: {
            if (c->fd >= 0 && c->eof_sent) { /* a new connection after EOF */
                close(c->fd);
                c->fd = -1;
            }
            if (c->fd < 0) {
                int stalled = c->stalled;
                uint32_t seq = c->stats_seq;
                *c = (rclient){.fd = connect_to(sock), .stalled = stalled, .stats_seq = seq};
            }
            if (memchr(r.bytes, '$', r.len)) pump(20); /* a tenant's answer: the SEQ first */
            size_t n = 0;
            for (unsigned k = 0; k < r.count; k++)
                for (size_t i = 0; i < r.len && fed + n < TIDAL_FUZZ_MAX_FEED; i++)
                    n += tidal_fuzz_expand(r.bytes[i], c->stats_seq, k, out + n);
            fed += n;
            if (send_split(c, out, n, chunk) != 0) {
                printf("tidald took no bytes from client %u for 2 s\n", r.client);
                return -1;
            }
            break;
        }
        case TIDAL_FUZZ_EOF:
            if (c->fd >= 0) shutdown(c->fd, SHUT_WR);
            c->eof_sent = 1;
            break;
        case TIDAL_FUZZ_CLOSE:
            if (c->fd >= 0) close(c->fd);
            c->fd = -1;
            break;
        case TIDAL_FUZZ_STALL: c->stalled = !c->stalled; break;
        case TIDAL_FUZZ_TIMEOUT: pump(stats_ms + 50); break;
        case TIDAL_FUZZ_RESTART: break; /* fuzz_tidald's only: this tidald keeps running */
        }
    }
    /* everyone leaves: shut, read to EOF (tidald closes its side when done) */
    for (int i = 0; i < TIDAL_FUZZ_CLIENTS; i++) {
        RC[i].stalled = 0;
        if (RC[i].fd >= 0) shutdown(RC[i].fd, SHUT_WR);
    }
    uint64_t deadline = tidal_control_now_ns() + (uint64_t)(stats_ms + 2000) * 1000000ull;
    for (;;) {
        int open = 0;
        for (int i = 0; i < TIDAL_FUZZ_CLIENTS; i++) open += RC[i].fd >= 0;
        if (!open) break;
        if (tidal_control_now_ns() > deadline) {
            printf("tidald kept %d connection(s) open after the clients left\n", open);
            return -1;
        }
        pump(50);
    }
    if (ping_ok(sock) != 0) {
        printf("no 'ok pong' after the input\n");
        return -1;
    }
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay_path(const char *sock, const char *path, int stats_ms, unsigned *count)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char **names = NULL;
        size_t n = 0;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                names = realloc(names, (n + 1) * sizeof *names);
                if (!names || asprintf(&names[n], "%s/%s", path, e->d_name) < 0) return -1;
                n++;
            }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp_names);
        int rc = 0;
        for (size_t i = 0; i < n; i++) {
            if (rc == 0) rc = replay_path(sock, names[i], stats_ms, count);
            free(names[i]);
        }
        free(names);
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("cannot open %s\n", path);
        return -1;
    }
    static unsigned char data[1 << 20];
    size_t size = fread(data, 1, sizeof data, f);
    fclose(f);
    printf("replaying %s (%zu bytes)\n", path, size);
    if (replay_one(sock, data, size, stats_ms) != 0) {
        printf("FAILED: %s\n", path);
        return -1;
    }
    (*count)++;
    return 0;
}

static int fuzz_replay(int argc, char **argv)
{
    const char *sock = arg(argc, argv, "--socket");
    const char *ms = arg(argc, argv, "--stats-ms");
    int stats_ms = ms ? atoi(ms) : TIDAL_PROTO_STATS_MS;
    unsigned count = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") || !strcmp(argv[i], "--stats-ms")) {
            i++;
            continue;
        }
        if (replay_path(sock, argv[i], stats_ms, &count) != 0) return 1;
    }
    printf("replayed %u inputs\n", count);
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
    if (argc >= 2 && !strcmp(argv[1], "fuzz-replay")) return fuzz_replay(argc, argv);
    fprintf(stderr, "usage: control_probe tenant|raw|idle|fake-daemon|fuzz-replay --socket S ...\n");
    return 2;
}
