/* tidald: connections without their sockets: the daemon state, output buffering, request
 * parsing and dispatch, and a connection's life (new, swept, closed). Everything here works
 * on bytes already received and queues bytes to send; tidald.c moves them over the sockets
 * (read_conn, flush_out), and test/fuzz/fuzz_tidald.c drives the same code from memory. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tidald_internal.h"

struct tidald_state D;

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

void reply_error(conn *c, const char *msg) { outf(c, "error: %s\nend\n", msg); }

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
        outf(c, "ok tenant %" PRIu64 " shm %s gen %" PRIu32 "\nend\n", c->id, D.shm_name, tidal_shm_generation(D.shm));
        break;
    case TIDAL_REQ_STATS:
    case TIDAL_REQ_STATS_END:
        reply_error(c, "stats lines are for tenant connections (send 'tenant PID NAME' first)");
        break;
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

/* ---- a connection's life ---------------------------------------------------------------- */

conn *conn_new(int fd)
{
    conn *c = D.nconns < MAX_CONNS ? calloc(1, sizeof *c) : NULL;
    if (!c) return NULL;
    c->fd = fd;
    c->id = ++D.next_id;
    D.conns[D.nconns++] = c;
    return c;
}

void conn_close(unsigned idx)
{
    conn *c = D.conns[idx];
    if (c->tenant) logmsg("tenant %" PRIu64 " (pid %" PRId64 " %s) disconnected", c->id, c->pid, c->name);
    if (c->fd >= 0) close(c->fd);
    free(c->out);
    free(c);
    D.conns[idx] = D.conns[--D.nconns];
}

void conn_sweep(void)
{
    for (unsigned i = D.nconns; i-- > 0;) {
        conn *c = D.conns[i];
        if (!c->dead && c->eof && !c->waiting && c->outlen == 0) c->dead = 1;
        if (c->dead) conn_close(i);
    }
}
