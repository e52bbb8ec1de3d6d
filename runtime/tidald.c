/* tidald — owns tidal's cross-process partitions: publishes them in a shared-memory
 * segment (tidal_shm.h), takes requests on a UNIX socket (protocol: control_proto.h),
 * notifies tenants of every change and collects their SM counters for `hist`.
 * One thread, poll() over non-blocking sockets. `tidald --help` for usage.
 * This file: main, the event loop, connections (input, output buffering, logging) and
 * request dispatch; the other jobs are in tidald_*.c, shared state in tidald_internal.h. */
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

/* ---- state ------------------------------------------------------------------------------ */

struct tidald_state D;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

/* ---- output ----------------------------------------------------------------------------- */

void out_append(conn *c, const char *s, size_t n)
{
    if (c->dead) return;
    size_t cap = c->tenant ? OUT_CAP_TENANT : OUT_CAP_CLIENT;
    if (c->outlen + n > cap) {
        logmsg("connection %" PRIu64 "%s does not read its answers: dropped", c->id, c->tenant ? " (tenant)" : "");
        c->dead = 1;
        return;
    }
    if (c->outlen + n > c->outcap) {
        size_t nc = c->outcap ? c->outcap : 1024;
        while (nc < c->outlen + n) nc *= 2;
        char *p = realloc(c->out, nc);
        if (!p) {
            c->dead = 1;
            return;
        }
        c->out = p;
        c->outcap = nc;
    }
    memcpy(c->out + c->outlen, s, n);
    c->outlen += n;
}

void outf(conn *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    out_append(c, buf, (size_t)n);
}

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

void reply_error(conn *c, const char *msg)
{
    outf(c, "error: %s\nend\n", msg);
}

/* ---- requests --------------------------------------------------------------------------- */

static void handle_line(conn *c, const char *line)
{
    static tidal_req r; /* 2 KB: not on the stack; one thread */
    char err[256];
    if (tidal_proto_parse(line, &r, err, sizeof err) != 0) {
        if (c->tenant) {
            logmsg("tenant %" PRIu64 " (pid %" PRId64 "): bad line: %s", c->id, c->pid, err);
            return; /* tenants are not answered: their connection carries notifications */
        }
        reply_error(c, err);
        return;
    }
    if (c->tenant) {
        if (r.verb == TIDAL_REQ_STATS || r.verb == TIDAL_REQ_STATS_END)
            tenant_stats(c, &r);
        else
            logmsg("tenant %" PRIu64 " (pid %" PRId64 "): unexpected request ignored", c->id, c->pid);
        return;
    }
    switch (r.verb) {
    case TIDAL_REQ_PING:
        outf(c, "ok pong pid %d gen %" PRIu32 "\nend\n", (int)getpid(), tidal_shm_generation(D.shm));
        break;
    case TIDAL_REQ_LIST: do_list(c); break;
    case TIDAL_REQ_CREATE:
    case TIDAL_REQ_SET: do_create_set(c, &r); break;
    case TIDAL_REQ_DESTROY: do_destroy(c, &r); break;
    case TIDAL_REQ_TENANTS:
        if (r.with_stats)
            start_collection(c, &r);
        else
            do_tenants_plain(c);
        break;
    case TIDAL_REQ_HIST: /* like set and destroy: only tidald's partitions have a histogram */
        if (part_exists(r.name))
            start_collection(c, &r);
        else
            outf(c, "error: no such partition: %s\nend\n", r.name);
        break;
    case TIDAL_REQ_TENANT:
        c->tenant = 1;
        c->pid = r.pid;
        c->mps = r.mps;
        snprintf(c->name, sizeof c->name, "%s", r.tenant_name);
        c->since = (int64_t)time(NULL);
        logmsg("tenant %" PRIu64 " connected: pid %" PRId64 " name %s%s", c->id, c->pid, c->name,
               c->mps ? " (MPS client)" : "");
        if (c->mps) logmsg("tenant %" PRIu64 " is an MPS client: its %%smid ids are compacted per client", c->id);
        outf(c, "ok tenant %" PRIu64 " shm %s gen %" PRIu32 "\nend\n", c->id, D.shm_name,
             tidal_shm_generation(D.shm));
        break;
    case TIDAL_REQ_STATS:
    case TIDAL_REQ_STATS_END: reply_error(c, "stats lines are for tenant connections (send 'tenant PID NAME' first)"); break;
    default: reply_error(c, "internal: unhandled request"); break;
    }
}

void process_input(conn *c)
{
    char *line;
    while (!c->dead && !c->waiting) {
        int rc = tidal_linebuf_next(&c->in, &line);
        if (rc == 0) break;
        if (rc < 0) {
            if (c->tenant)
                logmsg("tenant %" PRIu64 ": over-long line dropped", c->id);
            else
                outf(c, "error: line too long (max %d bytes)\nend\n", TIDAL_PROTO_MAX_LINE - 1);
            continue;
        }
        handle_line(c, line);
    }
    if (c->eof && !c->waiting && !c->dead) {
        if (c->in.len > c->in.start && !c->in.discarding && !c->tenant)
            reply_error(c, "incomplete request (no newline before end of input)");
        c->in.len = c->in.start = 0;
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

static void close_conn(unsigned idx)
{
    conn *c = D.conns[idx];
    if (c->tenant) logmsg("tenant %" PRIu64 " (pid %" PRId64 " %s) disconnected", c->id, c->pid, c->name);
    close(c->fd);
    free(c->out);
    free(c);
    D.conns[idx] = D.conns[--D.nconns];
}

static void accept_conns(void)
{
    for (;;) {
        int fd = accept4(D.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
                logmsg("accept: %s", strerror(errno));
            return;
        }
        conn *c = D.nconns < MAX_CONNS ? calloc(1, sizeof *c) : NULL;
        if (!c) {
            static const char msg[] = "error: too many connections\nend\n";
            ssize_t w = send(fd, msg, sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(fd);
            continue;
        }
        c->fd = fd;
        c->id = ++D.next_id;
        D.conns[D.nconns++] = c;
    }
}

int main(int argc, char **argv)
{
    enum { OPT_SOCKET = 256, OPT_SHM, OPT_GROUP, OPT_RESET, OPT_FG, OPT_HELP, OPT_STATS, OPT_SPIN, OPT_VERSION };
    static const struct option opts[] = {
        {"socket", required_argument, NULL, OPT_SOCKET}, {"shm", required_argument, NULL, OPT_SHM},
        {"group", required_argument, NULL, OPT_GROUP},   {"reset", no_argument, NULL, OPT_RESET},
        {"foreground", no_argument, NULL, OPT_FG},       {"help", no_argument, NULL, OPT_HELP},
        {"stats-timeout", required_argument, NULL, OPT_STATS}, {"spin", no_argument, NULL, OPT_SPIN},
        {"version", no_argument, NULL, OPT_VERSION},           {NULL, 0, NULL, 0},
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
        for (unsigned i = D.nconns; i-- > 0;) {
            conn *c = D.conns[i];
            if (!c->dead && c->eof && !c->waiting && c->outlen == 0) c->dead = 1;
            if (c->dead) close_conn(i);
        }
    }
    logmsg("stopping (signal %d)", (int)g_stop);
    free(pfd);
    /* answer waiting requesters with what was collected, then close everything */
    while (D.colls) check_collections(1);
    for (unsigned i = 0; i < D.nconns; i++) flush_out(D.conns[i]);
    while (D.nconns) close_conn(D.nconns - 1);
    close_socket(0); /* the segment stays: tenants keep their masks, the next tidald resumes */
    close_shm(0);
    return 0;
}
