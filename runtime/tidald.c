/* tidald — owns tidal's cross-process partitions: publishes them in a shared-memory
 * segment (tidal_shm.h), takes requests on a UNIX socket (protocol: control_proto.h),
 * notifies tenants of every change and collects their SM counters for `hist`.
 * One thread, poll() over non-blocking sockets. `tidald --help` for usage.
 * This file: main, the event loop, logging and the connections' sockets (accept, recv,
 * send); what a connection's bytes mean is tidald_conn.c, the other jobs are in tidald_*.c,
 * shared state in tidald_internal.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tidald_internal.h"

#ifndef TIDAL_VERSION
#error "TIDAL_VERSION (the CMake project version) is defined by CMakeLists.txt"
#endif

static const char *g_prog = "tidald";

void logmsg(const char *fmt, ...)
{
    static int stamp = -1;
    if (stamp < 0) {
        const char *e = getenv("TIDAL_DEBUG");
        stamp = e && *e && strcmp(e, "0") != 0;
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    if (stamp) /* TIDAL_DEBUG: CLOCK_MONOTONIC in us, as in libtidal's debug log */
        fprintf(stderr, "[%.1f us] ", (double)tidal_control_now_ns() / 1e3);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

/* ---- sockets: bytes in and out of the connections (tidald_conn.c handles them) ---------- */

void flush_out(conn *c)
{
    while (c->outlen > 0 && !c->dead) {
        ssize_t w = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            c->dead = 1;
            return;
        }
        memmove(c->out, c->out + w, c->outlen - (size_t)w);
        c->outlen -= (size_t)w;
    }
}

static void read_conn(conn *c)
{
    for (int rounds = 0; rounds < 4 && !c->eof && !c->dead; rounds++) {
        size_t avail;
        char *p = tidal_linebuf_space(&c->in, &avail);
        if (avail == 0) break; /* cannot happen: process_input empties a full buffer */
        ssize_t n = recv(c->fd, p, avail, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) c->dead = 1;
            break;
        }
        if (n == 0) {
            c->eof = 1;
            break;
        }
        tidal_linebuf_added(&c->in, (size_t)n);
        process_input(c);
        if (c->waiting) break;
    }
    process_input(c);
}

static void accept_conns(void)
{
    for (;;) {
        int fd = accept4(D.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED) logmsg("accept: %s", strerror(errno));
            return;
        }
        if (!conn_new(fd)) {
            static const char msg[] = "error: too many connections\nend\n";
            ssize_t w = send(fd, msg, sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(fd);
        }
    }
}

int main(int argc, char **argv)
{
    enum { OPT_SOCKET = 256, OPT_SHM, OPT_GROUP, OPT_RESET, OPT_FG, OPT_HELP, OPT_STATS, OPT_SPIN, OPT_VERSION };
    static const struct option opts[] = {
        TIDAL_CONTROL_COMMON_OPTIONS(OPT_SOCKET, OPT_HELP, OPT_VERSION),
        {"shm", required_argument, NULL, OPT_SHM},
        {"group", required_argument, NULL, OPT_GROUP},
        {"reset", no_argument, NULL, OPT_RESET},
        {"foreground", no_argument, NULL, OPT_FG},
        {"stats-timeout", required_argument, NULL, OPT_STATS},
        {"spin", no_argument, NULL, OPT_SPIN},
        {NULL, 0, NULL, 0},
    };
    const char *sock = NULL, *shm = NULL;
    D.stats_ms = TIDAL_PROTO_STATS_MS;
    D.listen_fd = D.shm_fd = -1;
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case OPT_SOCKET: sock = optarg; break;
        case OPT_SHM: shm = optarg; break;
        case OPT_GROUP: D.group = optarg; break;
        case OPT_RESET: D.reset = 1; break;
        case OPT_SPIN: D.spin = 1; break;
        case OPT_FG: break;
        case OPT_STATS: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 60000) {
                logmsg("--stats-timeout wants 1..60000 ms");
                return 2;
            }
            D.stats_ms = (int)v;
            break;
        }
        case 'h':
        case OPT_HELP: help(); return 0;
        case OPT_VERSION:
            printf("tidald (tidal) %s\nshared-memory layout version %u, at most %u partitions\n", TIDAL_VERSION,
                   (unsigned)TIDAL_SHM_VERSION, (unsigned)TIDAL_SHM_MAX_PARTS);
            return 0;
        default: usage_short(stderr); return 2;
        }
    }
    if (optind < argc) {
        logmsg("unexpected argument '%s'", argv[optind]);
        usage_short(stderr);
        return 2;
    }
    if (sock) {
        if (strlen(sock) >= TIDAL_SOCKET_PATH_MAX) {
            logmsg("socket path too long (max %d bytes)", TIDAL_SOCKET_PATH_MAX - 1);
            return 2;
        }
        snprintf(D.socket_path, sizeof D.socket_path, "%s", sock);
    } else if (tidal_control_socket_path(D.socket_path, sizeof D.socket_path) != 0) {
        logmsg("socket path (TIDAL_SOCKET / XDG_RUNTIME_DIR) too long (max %d bytes)", TIDAL_SOCKET_PATH_MAX - 1);
        return 2;
    }
    if (shm) {
        if (!tidal_control_shm_name_ok(shm)) {
            logmsg("bad shm name '%s' (\"/\" then 1..200 characters of A-Z a-z 0-9 _ . -)", shm);
            return 2;
        }
        snprintf(D.shm_name, sizeof D.shm_name, "%s", shm);
    } else if (tidal_control_shm_name(D.shm_name, sizeof D.shm_name) != 0) {
        logmsg("bad TIDAL_SHM (\"/\" then 1..200 characters of A-Z a-z 0-9 _ . -)");
        return 2;
    }
    if (D.group) {
        struct group *g = getgrnam(D.group);
        if (!g) {
            logmsg("no such group: %s", D.group);
            return 2;
        }
        D.gid = g->gr_gid;
        D.have_gid = 1;
    }

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &orig); /* delivered only inside ppoll */

    /* The socket first (another tidald answering there, a path that is no socket, a
     * directory that cannot be made, bind): a running tidald must not see its segment
     * touched, and a tidald that cannot listen must not leave a segment behind. Each
     * step removes what it made when it fails; a failed start removes what the earlier
     * steps made (a resumed segment stays, with daemon_pid cleared). */
    if (open_socket() != 0) return 1;
    if (open_shm() != 0) {
        close_socket(1);
        return 1;
    }
    logmsg("listening on %s (pid %d, shm %s, generation %" PRIu32 ")", D.socket_path, (int)getpid(), D.shm_name,
           tidal_shm_generation(D.shm));

    struct pollfd *pfd = calloc(MAX_CONNS + 1, sizeof *pfd);
    if (!pfd) {
        logmsg("out of memory");
        close_socket(1);
        close_shm(1);
        return 1;
    }
    while (!g_stop) {
        int timeout = -1;
        if (D.colls) {
            uint64_t now = tidal_control_now_ns(), first = UINT64_MAX;
            for (collection *k = D.colls; k; k = k->next)
                if (k->deadline_ns < first) first = k->deadline_ns;
            timeout = first <= now ? 0 : (int)((first - now + 999999) / 1000000);
        }
        pfd[0].fd = D.listen_fd;
        pfd[0].events = POLLIN;
        for (unsigned i = 0; i < D.nconns; i++) {
            conn *c = D.conns[i];
            pfd[i + 1].fd = c->fd;
            pfd[i + 1].events = (short)((c->waiting || c->eof ? 0 : POLLIN) | (c->outlen ? POLLOUT : 0));
            pfd[i + 1].revents = 0;
        }
        unsigned n = D.nconns;
        struct timespec ts, *tsp = NULL;
        if (D.spin) timeout = 0; /* --spin: never sleep in the kernel (one core busy) */
        if (timeout >= 0) {
            ts.tv_sec = timeout / 1000;
            ts.tv_nsec = (long)(timeout % 1000) * 1000000L;
            tsp = &ts;
        }
        int rc = ppoll(pfd, n + 1, tsp, &orig);
        if (rc < 0) {
            if (errno == EINTR) continue;
            logmsg("poll: %s", strerror(errno));
            break;
        }
        /* connections first (indices are stable until the sweep below) */
        for (unsigned i = 0; i < n; i++) {
            conn *c = D.conns[i];
            short re = pfd[i + 1].revents;
            if (re & (POLLIN | POLLHUP | POLLERR)) {
                if (!c->waiting && !c->eof)
                    read_conn(c);
                else if (re & (POLLHUP | POLLERR))
                    c->dead = 1; /* gone both ways: nobody will read an answer */
            }
            if (c->outlen) flush_out(c);
        }
        if (pfd[0].revents & POLLIN) accept_conns();
        check_collections(0);
        conn_sweep();
    }
    logmsg("stopping (signal %d)", (int)g_stop);
    free(pfd);
    /* answer waiting requesters with what was collected, then close everything */
    while (D.colls) check_collections(1);
    for (unsigned i = 0; i < D.nconns; i++) flush_out(D.conns[i]);
    while (D.nconns) conn_close(D.nconns - 1);
    close_socket(0); /* the segment stays: tenants keep their masks, the next tidald resumes */
    close_shm(0);
    return 0;
}
