/* tidal_client.c — a tenant's connection to tidald (tidal_client.h). */
#define _GNU_SOURCE
#include "tidal_client.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "tidal_shm.h"

#define RECONNECT_NS 250000000ull
#define OPEN_HANDSHAKE_MS 1000
#define SEND_MS 100
#define SNAPSHOT_TRIES 20000

struct tidal_client {
    char socket_path[TIDAL_SOCKET_PATH_MAX];
    char shm_forced[256]; /* shm_name given to open, else "" */
    char shm_name[256];   /* the mapped one */
    char tenant[TIDAL_TENANT_NAME_MAX];
    int is_mps;
    int fd;         /* -1: disconnected */
    int registered; /* "ok tenant" seen on fd */
    const tidal_shm *shm;
    uint32_t gen_acked;
    uint32_t stats_seq; /* pending stats request, 0 = none */
    uint64_t next_reconnect_ns;
    tidal_linebuf in;
};

/* ---- helpers ---------------------------------------------------------------------------- */

static int map_shm(tidal_client *c, const char *name)
{
    int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return errno == ENOENT ? TIDAL_ERR_NOT_FOUND : TIDAL_ERR_DAEMON;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= TIDAL_SHM_SIZE)
        m = mmap(NULL, TIDAL_SHM_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return TIDAL_ERR_DAEMON;
    if (tidal_shm_check(m, TIDAL_SHM_SIZE) != 0) {
        munmap(m, TIDAL_SHM_SIZE);
        return TIDAL_ERR_DAEMON;
    }
    if (c->shm) munmap((void *)c->shm, TIDAL_SHM_SIZE);
    c->shm = m;
    snprintf(c->shm_name, sizeof c->shm_name, "%s", name);
    return TIDAL_OK;
}

static void drop_conn(tidal_client *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->registered = 0;
    c->stats_seq = 0;
    memset(&c->in, 0, sizeof c->in);
    c->next_reconnect_ns = tidal_control_now_ns() + RECONNECT_NS;
}

/* Sends all of s, waiting at most SEND_MS for buffer space. */
static int send_all(tidal_client *c, const char *s, size_t n)
{
    if (c->fd < 0) return TIDAL_ERR_DAEMON;
    uint64_t deadline = tidal_control_now_ns() + SEND_MS * 1000000ull;
    while (n > 0) {
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            uint64_t now = tidal_control_now_ns();
            if (now >= deadline) break;
            struct pollfd p = {.fd = c->fd, .events = POLLOUT};
            int ms = (int)((deadline - now + 999999) / 1000000);
            if (poll(&p, 1, ms) >= 0) continue;
            if (errno == EINTR) continue;
        }
        break;
    }
    if (n > 0) {
        drop_conn(c);
        return TIDAL_ERR_DAEMON;
    }
    return TIDAL_OK;
}

/* Starts a connection and sends the tenant line; registration completes when the answer
 * arrives (handle_line). */
static int start_conn(tidal_client *c)
{
    int fd = tidal_control_connect(c->socket_path, SOCK_NONBLOCK);
    if (fd == TIDAL_CONNECT_NO_SOCKET) return TIDAL_ERR_DAEMON;
    if (fd < 0) return (errno == ENOENT || errno == ECONNREFUSED) ? TIDAL_ERR_NOT_FOUND : TIDAL_ERR_DAEMON;
    c->fd = fd;
    c->registered = 0;
    memset(&c->in, 0, sizeof c->in);
    char line[160];
    int n = snprintf(line, sizeof line, "tenant %d %s%s\n", (int)getpid(), c->tenant, c->is_mps ? " mps" : "");
    return send_all(c, line, (size_t)n);
}

/* Parses "ok tenant ID shm NAME gen G". */
static int parse_hello(const char *line, char *shm, size_t shmsize)
{
    unsigned long long id;
    unsigned gen;
    char name[256];
    if (sscanf(line, "ok tenant %llu shm %255s gen %u", &id, name, &gen) != 3) return -1;
    if (!tidal_control_shm_name_ok(name)) return -1;
    snprintf(shm, shmsize, "%s", name);
    return 0;
}

/* One line from tidald. Returns an event (CHANGED on registration, STATS) or 0; a
 * negative status when the connection must be dropped. */
static int handle_line(tidal_client *c, const char *line)
{
    if (!c->registered) {
        if (!strncmp(line, "ok tenant ", 10)) {
            char shm[256];
            if (parse_hello(line, shm, sizeof shm) != 0) return TIDAL_ERR_DAEMON;
            int rc = map_shm(c, c->shm_forced[0] ? c->shm_forced : shm);
            if (rc != TIDAL_OK) return rc;
            c->registered = 1;
            return TIDAL_CLIENT_CHANGED;
        }
        if (!strncmp(line, "error:", 6)) return TIDAL_ERR_DAEMON;
        return 0; /* anything else before the answer: ignored */
    }
    if (!strncmp(line, "stats ", 6)) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(line + 6, &end, 10);
        if (errno || end == line + 6 || *end || v == 0 || v > UINT32_MAX) return 0;
        c->stats_seq = (uint32_t)v;
        return TIDAL_CLIENT_STATS;
    }
    return 0; /* "gen N" (only a wake-up: the shm generation decides), "end", garbage */
}

/* Reads what is there (non-blocking). 0 = ok, -1 = EOF/error (connection dropped). */
static int read_some(tidal_client *c)
{
    for (;;) {
        size_t avail;
        char *p = tidal_linebuf_space(&c->in, &avail);
        if (avail == 0) return 0; /* cannot happen: drain_lines empties a full buffer */
        ssize_t n = recv(c->fd, p, avail, MSG_DONTWAIT);
        if (n > 0) {
            tidal_linebuf_added(&c->in, (size_t)n);
            return 0;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        drop_conn(c);
        return -1;
    }
}

/* Buffered lines: the first event they produce (0 = none). Negative: drop the connection. */
static int drain_lines(tidal_client *c)
{
    char *line;
    int rc;
    while ((rc = tidal_linebuf_next(&c->in, &line)) != 0) {
        if (rc < 0) continue; /* over-long garbage: skipped */
        int ev = handle_line(c, line);
        if (ev != 0) return ev;
    }
    return 0;
}

static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
    uint64_t now = tidal_control_now_ns();
    uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
    struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ull), .tv_nsec = (long)(left % 1000000000ull)};
    if (fd < 0) {
        nanosleep(&ts, NULL);
        return 0;
    }
    struct pollfd p = {.fd = fd, .events = events};
    int rc = ppoll(&p, 1, &ts, NULL);
    return rc < 0 ? (errno == EINTR ? 0 : -1) : rc;
}

static int shm_gen(const tidal_client *c) { return (int)tidal_shm_generation(c->shm); }

/* ---- API -------------------------------------------------------------------------------- */

int tidal_client_open(const char *socket_path, const char *shm_name, const char *tenant_name, int is_mps,
                      tidal_client **out)
{
    if (!out) return TIDAL_ERR_INVALID;
    *out = NULL;
    if (shm_name && !tidal_control_shm_name_ok(shm_name)) return TIDAL_ERR_INVALID;
    tidal_client *c = calloc(1, sizeof *c);
    if (!c) return TIDAL_ERR_NO_MEMORY;
    c->fd = -1;
    if (socket_path) {
        if (strlen(socket_path) >= TIDAL_SOCKET_PATH_MAX) {
            free(c);
            return TIDAL_ERR_INVALID;
        }
        snprintf(c->socket_path, sizeof c->socket_path, "%s", socket_path);
    } else if (tidal_control_socket_path(c->socket_path, sizeof c->socket_path) != 0) {
        free(c);
        return TIDAL_ERR_INVALID;
    }
    if (shm_name) snprintf(c->shm_forced, sizeof c->shm_forced, "%s", shm_name);
    const char *tn = tenant_name && *tenant_name ? tenant_name : "tenant";
    size_t i;
    for (i = 0; tn[i] && i < TIDAL_TENANT_NAME_MAX - 1; i++) {
        char ch = tn[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                 ch == '.' || ch == '-';
        c->tenant[i] = ok ? ch : '_';
    }
    c->tenant[i] = '\0';
    c->is_mps = is_mps != 0;

    int rc = start_conn(c);
    uint64_t deadline = tidal_control_now_ns() + OPEN_HANDSHAKE_MS * 1000000ull;
    while (rc == TIDAL_OK && !c->registered) {
        if (c->fd < 0) {
            rc = TIDAL_ERR_NOT_FOUND; /* closed on us */
            break;
        }
        int ev = drain_lines(c);
        if (ev < 0) {
            rc = ev;
            break;
        }
        if (c->registered) break;
        if (tidal_control_now_ns() >= deadline) {
            rc = TIDAL_ERR_DAEMON;
            break;
        }
        if (wait_fd(c->fd, POLLIN, deadline) < 0 || read_some(c) < 0) rc = TIDAL_ERR_NOT_FOUND;
    }
    if (rc != TIDAL_OK) {
        tidal_client_close(c);
        return rc;
    }
    c->gen_acked = (uint32_t)shm_gen(c);
    *out = c;
    return TIDAL_OK;
}

void tidal_client_close(tidal_client *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    if (c->shm) munmap((void *)c->shm, TIDAL_SHM_SIZE);
    free(c);
}

int tidal_client_snapshot(tidal_client *c, tidal_client_part *parts, unsigned max, unsigned *count,
                          uint32_t *generation)
{
    if (!c || !count || (max && !parts)) return TIDAL_ERR_INVALID;
    if (!c->shm) return TIDAL_ERR_NOT_FOUND;
    static _Thread_local tidal_shm_part copy[TIDAL_SHM_MAX_PARTS];
    uint32_t gen = 0;
    int ok = 0;
    for (int tries = 0; tries < SNAPSHOT_TRIES; tries++) {
        uint32_t seq = tidal_shm_read_begin(c->shm);
        if (!(seq & 1u)) {
            memcpy(copy, c->shm->part, sizeof copy);
            gen = atomic_load_explicit(&((tidal_shm *)c->shm)->h.generation, memory_order_relaxed);
            if (!tidal_shm_read_retry(c->shm, seq)) {
                ok = 1;
                break;
            }
        }
        if (tries >= 16) sched_yield();
    }
    if (!ok) return TIDAL_ERR_DAEMON;
    unsigned n = 0;
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS && n < max; i++) {
        const tidal_shm_part *p = &copy[i];
        if (!(p->flags & TIDAL_SHM_PART_USED)) continue;
        memcpy(parts[n].name, p->name, sizeof parts[n].name);
        parts[n].name[sizeof parts[n].name - 1] = '\0';
        parts[n].mask = p->mask;
        parts[n].generation = p->generation;
        n++;
    }
    *count = n;
    if (generation) *generation = gen;
    c->gen_acked = gen;
    return TIDAL_OK;
}

int tidal_client_wait(tidal_client *c, int timeout_ms)
{
    if (!c || timeout_ms < 0) return TIDAL_ERR_INVALID;
    uint64_t deadline = tidal_control_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (;;) {
        uint64_t now = tidal_control_now_ns();
        if (c->fd < 0) {
            if (now >= c->next_reconnect_ns) {
                if (start_conn(c) != TIDAL_OK) {
                    if (c->fd >= 0) close(c->fd);
                    c->fd = -1;
                    c->next_reconnect_ns = now + RECONNECT_NS;
                }
                continue;
            }
            if (now >= deadline) return TIDAL_CLIENT_TIMEOUT;
            uint64_t until = c->next_reconnect_ns < deadline ? c->next_reconnect_ns : deadline;
            wait_fd(-1, 0, until);
            continue;
        }
        if (c->registered && (uint32_t)shm_gen(c) != c->gen_acked) {
            c->gen_acked = (uint32_t)shm_gen(c);
            return TIDAL_CLIENT_CHANGED;
        }
        int ev = drain_lines(c);
        if (ev < 0) { /* refused, or a segment we cannot map: try again later */
            drop_conn(c);
            continue;
        }
        if (ev == TIDAL_CLIENT_CHANGED) { /* (re)registered */
            c->gen_acked = (uint32_t)shm_gen(c);
            return TIDAL_CLIENT_CHANGED;
        }
        if (ev == TIDAL_CLIENT_STATS) return ev;
        if (c->registered && (uint32_t)shm_gen(c) != c->gen_acked) continue;
        int rc = wait_fd(c->fd, POLLIN, deadline);
        if (rc < 0) {
            drop_conn(c);
            return TIDAL_CLIENT_DISCONNECTED;
        }
        if (rc > 0) {
            int was_registered = c->registered;
            if (read_some(c) < 0) {
                if (was_registered) return TIDAL_CLIENT_DISCONNECTED;
                continue; /* the handshake of a reconnect failed: retry later */
            }
            continue;
        }
        if (tidal_control_now_ns() >= deadline) return TIDAL_CLIENT_TIMEOUT;
    }
}

int tidal_client_send_stats(tidal_client *c, const char *part_name, uint64_t violations, const uint64_t sm_blocks[256])
{
    if (!c || !tidal_control_name_ok(part_name)) return TIDAL_ERR_INVALID;
    if (c->fd < 0 || !c->registered) return TIDAL_ERR_DAEMON;
    if (c->stats_seq == 0) return TIDAL_ERR_INVALID;
    char line[TIDAL_PROTO_MAX_LINE];
    size_t n = (size_t)snprintf(line, sizeof line, "stats %" PRIu32 " %s violations %" PRIu64 " sm", c->stats_seq,
                                part_name, violations);
    for (unsigned s = 0; sm_blocks && s < 256; s++) {
        if (!sm_blocks[s]) continue;
        /* at most 256 * 26 bytes: always fits in TIDAL_PROTO_MAX_LINE */
        n += (size_t)snprintf(line + n, sizeof line - n, " %u:%" PRIu64, s, sm_blocks[s]);
    }
    line[n++] = '\n';
    return send_all(c, line, n);
}

int tidal_client_stats_end(tidal_client *c)
{
    if (!c) return TIDAL_ERR_INVALID;
    if (c->fd < 0 || !c->registered) return TIDAL_ERR_DAEMON;
    if (c->stats_seq == 0) return TIDAL_ERR_INVALID;
    char line[48];
    int n = snprintf(line, sizeof line, "stats-end %" PRIu32 "\n", c->stats_seq);
    c->stats_seq = 0;
    return send_all(c, line, (size_t)n);
}

int tidal_client_fd(const tidal_client *c) { return c ? c->fd : -1; }
