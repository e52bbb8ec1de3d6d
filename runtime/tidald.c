/* tidald — owns tidal's cross-process partitions: publishes them in a shared-memory
 * segment (tidal_shm.h), takes requests on a UNIX socket (protocol: control_proto.h),
 * notifies tenants of every change and collects their SM counters for `hist`.
 * One thread, poll() over non-blocking sockets. `tidald --help` for usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "tidal_shm.h"

#define MAX_CONNS 1024
#define OUT_CAP_CLIENT (4u << 20)  /* a client that does not read its answers is dropped */
#define OUT_CAP_TENANT (256u << 10)
#define MAX_TENANT_PARTS 64

static const char *g_prog = "tidald";

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- state ------------------------------------------------------------------------------ */

typedef struct conn {
    int fd;
    uint64_t id;
    tidal_linebuf in;
    char *out;
    size_t outlen, outcap;
    int eof;      /* peer closed its side: answer what is buffered, then close */
    int dead;     /* close at the end of this round */
    int waiting;  /* an answer is being collected (hist / tenants stats): input paused */
    int tenant;
    int64_t pid;
    int mps;
    char name[TIDAL_TENANT_NAME_MAX];
    int64_t since; /* CLOCK_REALTIME seconds */
    uint32_t stats_seq; /* last stats request sent */
} conn;

typedef struct coll_part {
    char name[TIDAL_PART_NAME_MAX];
    uint64_t violations, blocks;
} coll_part;

typedef struct coll_tenant {
    uint64_t conn_id;
    int64_t pid;
    int mps;
    int64_t since;
    char name[TIDAL_TENANT_NAME_MAX];
    int state; /* 0 waiting, 1 answered, 2 gone */
    unsigned nparts;
    coll_part parts[MAX_TENANT_PARTS];
} coll_tenant;

typedef struct collection {
    uint32_t seq;
    uint64_t requester;
    int hist; /* 1: hist NAME, 0: tenants stats */
    char name[TIDAL_PART_NAME_MAX];
    uint64_t deadline_ns;
    unsigned ntenants;
    coll_tenant *t;
    uint64_t sm[256];
    uint64_t violations;
    struct collection *next;
} collection;

static struct {
    char socket_path[TIDAL_SOCKET_PATH_MAX];
    char shm_name[256];
    const char *group;
    gid_t gid;
    int have_gid;
    int reset;
    int stats_ms;

    int shm_fd;
    tidal_shm *shm;
    int listen_fd;
    dev_t sock_dev;
    ino_t sock_ino;

    conn *conns[MAX_CONNS];
    unsigned nconns;
    uint64_t next_id;
    uint32_t next_seq;
    collection *colls;
} D;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

/* ---- output ----------------------------------------------------------------------------- */

static void out_append(conn *c, const char *s, size_t n)
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

static void outf(conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(conn *c, const char *fmt, ...)
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

static void flush_out(conn *c)
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

static void reply_error(conn *c, const char *msg)
{
    outf(c, "error: %s\nend\n", msg);
}

/* ---- partitions ------------------------------------------------------------------------- */

static int find_part(const char *name)
{
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++)
        if ((D.shm->part[i].flags & TIDAL_SHM_PART_USED) && !strcmp(D.shm->part[i].name, name)) return (int)i;
    return -1;
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void notify_tenants(uint32_t gen)
{
    for (unsigned i = 0; i < D.nconns; i++) {
        conn *c = D.conns[i];
        if (c->tenant && !c->dead) {
            outf(c, "gen %" PRIu32 "\n", gen);
            flush_out(c);
        }
    }
}

static void fmt_set(const tidal_smset *s, int all, char *buf, size_t n)
{
    if (all)
        snprintf(buf, n, "all");
    else
        tidal_smset_format(s, buf, n);
}

static void do_create_set(conn *c, const tidal_req *r)
{
    char sms[1100];
    int i = find_part(r->name);
    if (r->verb == TIDAL_REQ_CREATE && i >= 0) {
        outf(c, "error: exists: %s\nend\n", r->name);
        return;
    }
    if (r->verb == TIDAL_REQ_SET && i < 0) {
        outf(c, "error: no such partition: %s\nend\n", r->name);
        return;
    }
    if (i < 0) {
        for (unsigned k = 0; k < TIDAL_SHM_MAX_PARTS; k++)
            if (!(D.shm->part[k].flags & TIDAL_SHM_PART_USED)) {
                i = (int)k;
                break;
            }
        if (i < 0) {
            outf(c, "error: partition table full (%u partitions)\nend\n", TIDAL_SHM_MAX_PARTS);
            return;
        }
    }
    tidal_shm_part *p = &D.shm->part[i];
    tidal_shm_write_begin(D.shm);
    if (r->verb == TIDAL_REQ_CREATE) {
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s", r->name);
        p->created_ns = realtime_ns();
        D.shm->h.nparts++;
    }
    memcpy(p->mask, r->set.bits, sizeof p->mask);
    p->flags = TIDAL_SHM_PART_USED | (r->is_all ? TIDAL_SHM_PART_ALL : 0);
    p->generation = tidal_shm_next_generation(D.shm);
    uint32_t gen = tidal_shm_write_end(D.shm);
    fmt_set(&r->set, r->is_all, sms, sizeof sms);
    const char *what = r->verb == TIDAL_REQ_CREATE ? "created" : "set";
    logmsg("%s %s %s (gen %" PRIu32 ")", what, r->name, sms, gen);
    outf(c, "ok %s %s %s gen %" PRIu32 "\nend\n", what, r->name, sms, gen);
    notify_tenants(gen);
}

static void do_destroy(conn *c, const tidal_req *r)
{
    int i = find_part(r->name);
    if (i < 0) {
        outf(c, "error: no such partition: %s\nend\n", r->name);
        return;
    }
    tidal_shm_write_begin(D.shm);
    memset(&D.shm->part[i], 0, sizeof D.shm->part[i]);
    if (D.shm->h.nparts) D.shm->h.nparts--;
    uint32_t gen = tidal_shm_write_end(D.shm);
    logmsg("destroyed %s (gen %" PRIu32 ")", r->name, gen);
    outf(c, "ok destroyed %s gen %" PRIu32 "\nend\n", r->name, gen);
    notify_tenants(gen);
}

static void do_list(conn *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) n += (D.shm->part[i].flags & TIDAL_SHM_PART_USED) != 0;
    outf(c, "ok %u\n", n);
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) {
        const tidal_shm_part *p = &D.shm->part[i];
        if (!(p->flags & TIDAL_SHM_PART_USED)) continue;
        tidal_smset s;
        memcpy(s.bits, p->mask, sizeof s.bits);
        char sms[1100];
        tidal_smset_format(&s, sms, sizeof sms);
        outf(c, "part %s %s count %u gen %" PRIu32 "%s\n", p->name, sms, tidal_smset_count(&s), p->generation,
             (p->flags & TIDAL_SHM_PART_ALL) ? " all" : "");
    }
    out_append(c, "end\n", 4);
}

static void print_tenant(conn *c, const char *prefix, int64_t pid, const char *name, int64_t since, int mps,
                         uint64_t id, const char *suffix)
{
    outf(c, "%s %" PRIu64 " pid %" PRId64 " name %s since %" PRId64 " mps %d%s\n", prefix, id, pid, name, since, mps,
         suffix);
}

static void do_tenants_plain(conn *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < D.nconns; i++) n += D.conns[i]->tenant && !D.conns[i]->dead;
    outf(c, "ok %u\n", n);
    for (unsigned i = 0; i < D.nconns; i++) {
        conn *t = D.conns[i];
        if (t->tenant && !t->dead) print_tenant(c, "tenant", t->pid, t->name, t->since, t->mps, t->id, "");
    }
    out_append(c, "end\n", 4);
}

/* ---- stats collection ------------------------------------------------------------------- */

static conn *conn_by_id(uint64_t id)
{
    for (unsigned i = 0; i < D.nconns; i++)
        if (D.conns[i]->id == id && !D.conns[i]->dead) return D.conns[i];
    return NULL;
}

static void process_input(conn *c);

static const char *state_name(int s) { return s == 1 ? "answered" : s == 2 ? "gone" : "timeout"; }

static void finish_collection(collection *k)
{
    conn *c = conn_by_id(k->requester);
    if (c) {
        unsigned answered = 0;
        for (unsigned i = 0; i < k->ntenants; i++) answered += k->t[i].state == 1;
        if (k->hist) {
            outf(c, "ok hist %s tenants %u answered %u violations %" PRIu64 "\n", k->name, k->ntenants, answered,
                 k->violations);
            for (unsigned i = 0; i < k->ntenants; i++)
                outf(c, "tenant %" PRIu64 " pid %" PRId64 " name %s %s\n", k->t[i].conn_id, k->t[i].pid,
                     k->t[i].name, state_name(k->t[i].state));
            for (unsigned s = 0; s < 256; s++)
                if (k->sm[s]) outf(c, "sm %u %" PRIu64 "\n", s, k->sm[s]);
        } else {
            outf(c, "ok %u answered %u\n", k->ntenants, answered);
            for (unsigned i = 0; i < k->ntenants; i++) {
                coll_tenant *t = &k->t[i];
                char suffix[32];
                snprintf(suffix, sizeof suffix, " stats %s", state_name(t->state));
                print_tenant(c, "tenant", t->pid, t->name, t->since, t->mps, t->conn_id, suffix);
                for (unsigned p = 0; p < t->nparts; p++)
                    outf(c, "stats %s violations %" PRIu64 " blocks %" PRIu64 "\n", t->parts[p].name,
                         t->parts[p].violations, t->parts[p].blocks);
            }
        }
        out_append(c, "end\n", 4);
        c->waiting = 0;
        process_input(c);
        flush_out(c);
    }
    free(k->t);
    free(k);
}

static void check_collections(int force_now)
{
    uint64_t now = tidal_control_now_ns();
    collection **pp = &D.colls;
    while (*pp) {
        collection *k = *pp;
        int done = 1;
        for (unsigned i = 0; i < k->ntenants; i++)
            if (k->t[i].state == 0) {
                if (!conn_by_id(k->t[i].conn_id))
                    k->t[i].state = 2;
                else
                    done = 0;
            }
        if (done || force_now || now >= k->deadline_ns) {
            *pp = k->next;
            finish_collection(k);
        } else {
            pp = &k->next;
        }
    }
}

static void start_collection(conn *c, const tidal_req *r)
{
    collection *k = calloc(1, sizeof *k);
    unsigned n = 0;
    for (unsigned i = 0; i < D.nconns; i++) n += D.conns[i]->tenant && !D.conns[i]->dead;
    if (!k || !(k->t = calloc(n ? n : 1, sizeof *k->t))) {
        free(k);
        reply_error(c, "out of memory");
        return;
    }
    k->seq = ++D.next_seq;
    k->requester = c->id;
    k->hist = r->verb == TIDAL_REQ_HIST;
    snprintf(k->name, sizeof k->name, "%s", r->name);
    k->deadline_ns = tidal_control_now_ns() + (uint64_t)D.stats_ms * 1000000ull;
    for (unsigned i = 0; i < D.nconns; i++) {
        conn *t = D.conns[i];
        if (!t->tenant || t->dead) continue;
        coll_tenant *ct = &k->t[k->ntenants++];
        ct->conn_id = t->id;
        ct->pid = t->pid;
        ct->mps = t->mps;
        ct->since = t->since;
        snprintf(ct->name, sizeof ct->name, "%s", t->name);
        outf(t, "stats %" PRIu32 "\n", k->seq);
        flush_out(t);
    }
    c->waiting = 1;
    k->next = D.colls;
    D.colls = k;
}

static coll_tenant *coll_find(uint32_t seq, uint64_t conn_id, collection **kout)
{
    for (collection *k = D.colls; k; k = k->next)
        if (k->seq == seq)
            for (unsigned i = 0; i < k->ntenants; i++)
                if (k->t[i].conn_id == conn_id) {
                    *kout = k;
                    return &k->t[i];
                }
    return NULL;
}

static void tenant_stats(conn *c, const tidal_req *r)
{
    collection *k;
    coll_tenant *t = coll_find(r->seq, c->id, &k);
    if (!t || t->state != 0) return; /* late or repeated: dropped */
    if (r->verb == TIDAL_REQ_STATS_END) {
        t->state = 1;
        return;
    }
    uint64_t total = 0;
    for (unsigned s = 0; s < 256; s++) total += r->sm_blocks[s];
    if (k->hist) {
        if (strcmp(r->name, k->name)) return;
        for (unsigned s = 0; s < 256; s++) k->sm[s] += r->sm_blocks[s];
        k->violations += r->violations;
    }
    unsigned p;
    for (p = 0; p < t->nparts; p++)
        if (!strcmp(t->parts[p].name, r->name)) break;
    if (p == t->nparts) {
        if (t->nparts == MAX_TENANT_PARTS) return;
        t->nparts++;
        snprintf(t->parts[p].name, sizeof t->parts[p].name, "%s", r->name);
    }
    t->parts[p].violations += r->violations;
    t->parts[p].blocks += total;
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
    case TIDAL_REQ_HIST: start_collection(c, &r); break;
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

static void process_input(conn *c)
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

/* ---- setup ------------------------------------------------------------------------------ */

static int open_shm(void)
{
    int fd = shm_open(D.shm_name, O_RDWR | O_CREAT | O_CLOEXEC, 0660);
    if (fd < 0) {
        logmsg("shm_open %s: %s", D.shm_name, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        logmsg("shared memory %s is held by another tidald (flock: %s)", D.shm_name, strerror(errno));
        close(fd);
        return -1;
    }
    if (D.reset) {
        shm_unlink(D.shm_name);
        close(fd);
        fd = shm_open(D.shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
            logmsg("shm_open %s (reset): %s", D.shm_name, strerror(errno));
            if (fd >= 0) close(fd);
            return -1;
        }
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        logmsg("fstat %s: %s", D.shm_name, strerror(errno));
        close(fd);
        return -1;
    }
    int fresh = st.st_size == 0;
    if (fresh && ftruncate(fd, (off_t)TIDAL_SHM_SIZE) != 0) {
        logmsg("ftruncate %s: %s", D.shm_name, strerror(errno));
        close(fd);
        return -1;
    }
    if (!fresh && (size_t)st.st_size < TIDAL_SHM_SIZE) {
        logmsg("shared memory %s is %lld bytes, not a tidal segment (use --reset to replace it)", D.shm_name,
               (long long)st.st_size);
        close(fd);
        return -1;
    }
    void *m = mmap(NULL, TIDAL_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        logmsg("mmap %s: %s", D.shm_name, strerror(errno));
        close(fd);
        return -1;
    }
    tidal_shm *s = m;
    if (fresh) {
        memset(s, 0, TIDAL_SHM_SIZE);
        s->h.version = TIDAL_SHM_VERSION;
        s->h.header_size = sizeof(tidal_shm_header);
        s->h.part_size = sizeof(tidal_shm_part);
        s->h.max_parts = TIDAL_SHM_MAX_PARTS;
        s->h.created_ns = realtime_ns();
        s->h.instance = realtime_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)s;
        atomic_thread_fence(memory_order_release);
        s->h.magic = TIDAL_SHM_MAGIC;
        logmsg("created shared memory %s (%zu bytes, %u partitions max)", D.shm_name, TIDAL_SHM_SIZE,
               TIDAL_SHM_MAX_PARTS);
    } else if (tidal_shm_check(s, (size_t)st.st_size) != 0) {
        logmsg("shared memory %s has another layout (magic/version); use --reset to replace it", D.shm_name);
        munmap(m, TIDAL_SHM_SIZE);
        close(fd);
        return -1;
    } else {
        /* a previous tidald may have died mid-update: make seq even, recount */
        uint32_t q = atomic_load(&s->h.seq);
        if (q & 1u) atomic_store(&s->h.seq, q + 1u);
        unsigned n = 0;
        for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) {
            tidal_shm_part *p = &s->part[i];
            p->name[sizeof p->name - 1] = '\0';
            if ((p->flags & TIDAL_SHM_PART_USED) && tidal_control_name_ok(p->name))
                n++;
            else
                memset(p, 0, sizeof *p);
        }
        s->h.nparts = n;
        logmsg("resumed shared memory %s: %u partitions, generation %" PRIu32, D.shm_name, n,
               tidal_shm_generation(s));
    }
    if (fchmod(fd, 0660) != 0) logmsg("fchmod %s: %s", D.shm_name, strerror(errno));
    if (D.have_gid && fchown(fd, (uid_t)-1, D.gid) != 0)
        logmsg("chgrp %s %s: %s", D.group, D.shm_name, strerror(errno));
    atomic_store(&s->h.daemon_pid, (int32_t)getpid());
    /* a new daemon is a change: tenants that reconnect compare generations */
    tidal_shm_write_begin(s);
    tidal_shm_write_end(s);
    D.shm_fd = fd;
    D.shm = s;
    return 0;
}

/* 1 when a tidald answers on the socket path. */
static int daemon_answers(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    close(fd);
    return rc == 0;
}

static int make_parent_dir(const char *path)
{
    char dir[TIDAL_SOCKET_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    struct stat st;
    if (lstat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            logmsg("%s is not a directory", dir);
            return -1;
        }
        return 0;
    }
    /* the default directories (…/tidal, /tmp/tidal-UID) are created here, one level */
    if (mkdir(dir, D.have_gid ? 0750 : 0700) != 0 && errno != EEXIST) {
        logmsg("mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        logmsg("%s is not a directory owned by uid %u", dir, (unsigned)geteuid());
        return -1;
    }
    if (D.have_gid) {
        if (chown(dir, (uid_t)-1, D.gid) != 0) logmsg("chgrp %s %s: %s", D.group, dir, strerror(errno));
        if (chmod(dir, 0750) != 0) logmsg("chmod %s: %s", dir, strerror(errno));
    }
    return 0;
}

static int open_socket(void)
{
    struct stat st;
    if (lstat(D.socket_path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            logmsg("%s exists and is not a socket; not touching it", D.socket_path);
            return -1;
        }
        if (daemon_answers(D.socket_path)) {
            logmsg("another tidald answers on %s; not starting", D.socket_path);
            return -1;
        }
        logmsg("replacing stale socket %s", D.socket_path);
        unlink(D.socket_path);
    } else if (make_parent_dir(D.socket_path) != 0) {
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        logmsg("socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", D.socket_path);
    mode_t old = umask(0117);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc != 0) {
        logmsg("bind %s: %s", D.socket_path, strerror(errno));
        close(fd);
        return -1;
    }
    if (chmod(D.socket_path, 0660) != 0) logmsg("chmod %s: %s", D.socket_path, strerror(errno));
    if (D.have_gid && chown(D.socket_path, (uid_t)-1, D.gid) != 0)
        logmsg("chgrp %s %s: %s", D.group, D.socket_path, strerror(errno));
    if (listen(fd, 128) != 0) {
        logmsg("listen: %s", strerror(errno));
        close(fd);
        unlink(D.socket_path);
        return -1;
    }
    if (stat(D.socket_path, &st) == 0) {
        D.sock_dev = st.st_dev;
        D.sock_ino = st.st_ino;
    }
    D.listen_fd = fd;
    return 0;
}

static void usage_short(FILE *f)
{
    fprintf(f, "usage: tidald [--socket PATH] [--shm NAME] [--group GROUP] [--reset] [--stats-timeout MS]\n"
               "       tidald --help\n");
}

static void help(void)
{
    printf(
        "NAME\n"
        "    tidald - tidal's partition daemon: SM masks shared by every process on the GPU\n"
        "\n"
        "SYNOPSIS\n"
        "    tidald [--foreground] [--socket PATH] [--shm NAME] [--group GROUP] [--reset]\n"
        "           [--stats-timeout MS]\n"
        "    tidald --help\n"
        "\n"
        "DESCRIPTION\n"
        "    tidald owns the partitions (named SM sets) that processes using libtidal (tenants)\n"
        "    run their rewritten kernels on. It publishes them in a POSIX shared-memory segment\n"
        "    that tenants map read-only, takes requests from tidalctl(1) on a UNIX socket, tells\n"
        "    every connected tenant about each change (\"gen N\") and, for `tidalctl hist`,\n"
        "    collects and sums the tenants' per-SM block counters.\n"
        "\n"
        "    tidald runs in the foreground and logs to standard error (systemd runs it; see\n"
        "    runtime/tidald.service). On SIGTERM or SIGINT it removes its socket and exits; the\n"
        "    shared memory stays, so tenants keep their masks and the next tidald resumes with\n"
        "    the same partitions. tidald refuses to start when another tidald answers on the\n"
        "    socket or holds the segment; a stale socket file is replaced.\n"
        "\n"
        "    tidald does not know any GPU's SM count: SM ids are checked against 256, \"all\" is\n"
        "    stored as 0-255, and every tenant clips masks to its own device.\n"
        "\n"
        "OPTIONS\n"
        "    --foreground       accepted for compatibility; tidald always runs in the foreground\n"
        "    --socket PATH      control socket (default: see ENVIRONMENT)\n"
        "    --shm NAME         shared-memory name, \"/\" then [A-Za-z0-9_.-] (default: see ENVIRONMENT)\n"
        "    --group GROUP      give the socket, its directory and the segment to GROUP (mode 0660):\n"
        "                       members of GROUP may run tenants and tidalctl\n"
        "    --reset            start with no partitions (replace the existing segment)\n"
        "    --stats-timeout MS how long `hist` and `tenants --stats` wait for tenants (default %d)\n"
        "    --help             this text\n"
        "\n"
        "ENVIRONMENT\n"
        "    TIDAL_SOCKET       control socket; else $XDG_RUNTIME_DIR/tidal/tidald.sock when\n"
        "                       XDG_RUNTIME_DIR is set, else /tmp/tidal-UID/tidald.sock\n"
        "                       (tidalctl and libtidal use the same rule)\n"
        "    TIDAL_SHM          shared-memory name; else /tidal-UID (UID of tidald). Tenants\n"
        "                       learn it from tidald when they connect.\n"
        "\n"
        "FILES\n"
        "    /dev/shm/tidal-UID                 the segment (layout: runtime/tidal_shm.h)\n"
        "    $XDG_RUNTIME_DIR/tidal/tidald.sock, /tmp/tidal-UID/tidald.sock   the socket\n"
        "\n"
        "EXIT STATUS\n"
        "    0  stopped by SIGTERM or SIGINT\n"
        "    1  could not start (another tidald, segment of another layout, socket errors)\n"
        "    2  usage error\n"
        "\n"
        "EXAMPLES\n"
        "    tidald &                              # as yourself, default paths\n"
        "    tidalctl create ls 0-47 && tidalctl create be 48-131\n"
        "    TIDAL_SOCKET=/run/tidal/tidald.sock tidald --group tidal --shm /tidal\n"
        "    tidald --reset                        # forget every partition\n",
        TIDAL_PROTO_STATS_MS);
}

int main(int argc, char **argv)
{
    enum { OPT_SOCKET = 256, OPT_SHM, OPT_GROUP, OPT_RESET, OPT_FG, OPT_HELP, OPT_STATS };
    static const struct option opts[] = {
        {"socket", required_argument, NULL, OPT_SOCKET}, {"shm", required_argument, NULL, OPT_SHM},
        {"group", required_argument, NULL, OPT_GROUP},   {"reset", no_argument, NULL, OPT_RESET},
        {"foreground", no_argument, NULL, OPT_FG},       {"help", no_argument, NULL, OPT_HELP},
        {"stats-timeout", required_argument, NULL, OPT_STATS}, {NULL, 0, NULL, 0},
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

    /* the socket check first: a running tidald must not see its segment touched */
    struct stat st;
    if (lstat(D.socket_path, &st) == 0 && S_ISSOCK(st.st_mode) && daemon_answers(D.socket_path)) {
        logmsg("another tidald answers on %s; not starting", D.socket_path);
        return 1;
    }
    if (open_shm() != 0) return 1;
    if (open_socket() != 0) {
        atomic_store(&D.shm->h.daemon_pid, 0);
        return 1;
    }
    logmsg("listening on %s (pid %d, shm %s, generation %" PRIu32 ")", D.socket_path, (int)getpid(), D.shm_name,
           tidal_shm_generation(D.shm));

    struct pollfd *pfd = calloc(MAX_CONNS + 1, sizeof *pfd);
    if (!pfd) return 1;
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
    if (lstat(D.socket_path, &st) == 0 && st.st_dev == D.sock_dev && st.st_ino == D.sock_ino) unlink(D.socket_path);
    close(D.listen_fd);
    atomic_store(&D.shm->h.daemon_pid, 0);
    munmap(D.shm, TIDAL_SHM_SIZE);
    close(D.shm_fd);
    return 0;
}
