/* libFuzzer target: tidald's request handling — runtime/tidald_conn.c (line buffer, parse,
 * dispatch, a connection's life), tidald_parts.c, tidald_stats.c — driven from memory by up
 * to 8 clients whose bytes interleave. The daemon is the real code (tidald_core); this file
 * is its transport (logmsg, flush_out: what tidald.c is for sockets) and a model of what
 * every answer must be, so the fuzzer finds wrong answers and broken state, not only crashes.
 *
 * Input: records of up to 8 clients (SEND, REPEAT, EOF, CLOSE, STALL, TIMEOUT) after a byte
 * that says how tidald's reads cut the bytes: fuzz_tidald_input.h. Seeds:
 * test/fuzz/seeds/fuzz_tidald/, written by test/fuzz/gen_tidald_seeds.py; control_probe's
 * fuzz-replay plays the same inputs to a real tidald over its socket (test/control/run.sh).
 *
 * Checked after every step (every read of a connection, every deadline), else abort():
 *   - every request line gets exactly one answer, in order, and it is the answer: the
 *     harness cuts the bytes into lines on its own (8192-byte limit, NUL, "\r") and predicts
 *     each answer from tidal_proto_parse and a model of the partitions (exists, table full,
 *     no such partition, gen numbers, list contents, tenant counts); an over-long line gets
 *     "line too long", a line cut by EOF "incomplete request"; tenant lines get no answer;
 *   - every answer is well formed: status line (ok / error: TEXT), data lines that start
 *     with part/tenant/stats/sm, then "end"; printable ASCII and tabs only (an error may
 *     quote the request);
 *   - the segment: magic/layout, seq even, nparts = slots in use, free slots all zero, used
 *     ones with a valid unique name, flags USED[|ALL], ALL = all 256 bits, partition gen <=
 *     header gen; and it equals the model (so a change without an "ok", or an "ok" without
 *     the change, is caught), generation = the last one announced;
 *   - hist / tenants stats answers: the tenants asked, their states, and the sums and
 *     per-partition counters exactly as the tenants' stats lines must make them (SEQ,
 *     stats-end, late lines dropped, a hist's partition only, 64 partitions per tenant);
 *   - tenants: their connection carries only "gen G" and "stats SEQ"; every live tenant has
 *     heard of the current generation; every collection asked each of its tenants once;
 *   - the daemon's tables: connection ids unique and known, buffers in bounds, waiting =
 *     being the requester of exactly one collection, closed connections are exactly the
 *     dead ones and those at EOF with nothing left to do, no collection left unanswered
 *     once all its tenants answered or left, or its deadline passed;
 *   - a restart (RESTART) resumes exactly the partitions announced, whatever a kill left
 *     half written, at a newer generation.
 * At the end every client sends EOF, deadlines pass, and tidald must let every connection
 * and collection go (the leak check sees the rest). TIDAL_FUZZ_LOG=1 prints tidald's log,
 * TIDAL_FUZZ_TRACE=1 every request and its answer. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tidald_input.h"
#include "tidald_internal.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define NCLIENTS TIDAL_FUZZ_CLIENTS
#define MAX_FEED TIDAL_FUZZ_MAX_FEED
#define LINE_MAX_BYTES (TIDAL_PROTO_MAX_LINE - 1)

enum { EXP_LINE, EXP_LONG, EXP_INCOMPLETE };

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_tidald: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

/* ---- the harness's view ------------------------------------------------------------------ */

typedef struct expect { /* a request tidald has read and not answered yet */
    int kind;
    char *line;   /* EXP_LINE: the line as tidald must see it (NUL -> 0x7f, no "\r") */
    uint32_t seq; /* hist / tenants stats: the collection started for it (0: none) */
    struct expect *next;
} expect;

/* A collection as the tenants' answers must make it (tidald_stats.c's rules): each tenant
 * asked counts stats lines with the collection's SEQ until its stats-end; a hist counts
 * only lines for its partition; at most MAX_TENANT_PARTS partitions per tenant. */
typedef struct mtenant {
    uint64_t id;
    int state; /* 0 waiting, 1 answered */
    unsigned nparts;
    struct {
        char name[TIDAL_PART_NAME_MAX];
        uint64_t violations, blocks;
    } parts[MAX_TENANT_PARTS];
} mtenant;

typedef struct mcoll {
    uint32_t seq;
    uint64_t requester;
    int hist;
    char name[TIDAL_PART_NAME_MAX];
    unsigned nt;
    mtenant t[NCLIENTS];
    uint64_t sm[256], violations;
    struct mcoll *next;
} mcoll;

typedef struct client {
    conn *c; /* NULL: not connected */
    uint64_t id;
    char *pend; /* sent, not read by tidald yet (the socket) */
    size_t plen, poff, pcap;
    int eof_sent, closed, stalled;
    int dropped; /* tidald dropped it for not reading (its output cap) */
    /* the request stream, cut into lines as tidald's line buffer must cut it */
    char cur[TIDAL_PROTO_MAX_LINE];
    size_t curlen;
    int discarding;
    expect *head, *tail;
    /* the answer stream */
    size_t seen; /* bytes of c->out already checked (a stalled client leaves them there) */
    char rl[TIDAL_PROTO_MAX_LINE + 1];
    size_t rlen;
    char **resp; /* lines of the answer being read, before "end" */
    unsigned nresp, capresp;
    int tenant;  /* "ok tenant" seen: notifications only from now on */
    int64_t pid; /* tenant: as it registered */
    char tname[TIDAL_TENANT_NAME_MAX];
    uint32_t gen; /* tenant: the last generation it was told of */
    uint32_t stats_seq;
} client;

typedef struct mpart {
    char name[TIDAL_PART_NAME_MAX];
    tidal_smset set;
    int all;
    uint32_t gen;
} mpart;

static client K[NCLIENTS];
static struct {
    mpart p[TIDAL_SHM_MAX_PARTS];
    unsigned n;
    uint32_t gen;
} M;
static mcoll *MC; /* collections started and not answered */
static tidal_shm seg;
static size_t g_chunk;       /* bytes per recv, 0 = all */
static size_t g_fed;         /* bytes sent this input */
static unsigned asked[4096]; /* "stats SEQ" lines sent, per SEQ (seqs restart every input) */
static int g_log = -1;       /* TIDAL_FUZZ_LOG=1: tidald's log on stderr */
static int g_trace = -1;     /* TIDAL_FUZZ_TRACE=1: every request and answer on stderr */
static int g_silent;         /* applying a request whose answer tidald could not queue */

/* ---- the transport tidald_core calls --------------------------------------------------- */

void logmsg(const char *fmt, ...)
{
    char buf[2048]; /* formatted all the same: the sanitizers see every argument */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (g_log) fprintf(stderr, "tidald: %s\n", buf);
}

static client *client_of(const conn *c)
{
    for (unsigned i = 0; i < NCLIENTS; i++)
        if (K[i].c == c) return &K[i];
    die("connection %" PRIu64 " belongs to no client", c->id);
}

static void observe(client *k);
static void check_started(client *k);
static void check_dropped(client *k);
static void collections_round(void);

/* The peer reads everything at once, unless it stalls; a closed one makes send fail. */
void flush_out(conn *c)
{
    client *k = client_of(c);
    check_dropped(k);
    if (c->dead) return;
    observe(k);
    check_started(k);
    if (k->closed && c->outlen) {
        c->dead = 1; /* EPIPE */
        return;
    }
    if (!k->stalled) {
        c->outlen = 0;
        k->seen = 0;
    }
}

/* ---- the model --------------------------------------------------------------------------- */

static mpart *model_find(const char *name)
{
    for (unsigned i = 0; i < M.n; i++)
        if (!strcmp(M.p[i].name, name)) return &M.p[i];
    return NULL;
}

static void fmt_req_set(const tidal_req *r, char *buf, size_t n)
{
    if (r->is_all)
        snprintf(buf, n, "all");
    else
        tidal_smset_format(&r->set, buf, n);
}

static void want(const char *got, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void want(const char *got, const char *fmt, ...)
{
    if (g_silent) return;
    char exp[TIDAL_PROTO_MAX_LINE + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(exp, sizeof exp, fmt, ap);
    va_end(ap);
    if (strcmp(got, exp)) die("answer '%.300s', expected '%.300s'", got, exp);
}

static void want_lines(unsigned n, unsigned expected, const char *what)
{
    if (g_silent) return;
    if (n != expected) die("%s: %u lines in the answer, expected %u", what, n, expected);
}

/* "tenant ID pid PID name NAME" (the start of every tenant data line): the rest after it */
static const char *tenant_prefix(const char *l, uint64_t *id, int live)
{
    unsigned long long tid;
    long long pid;
    char name[TIDAL_TENANT_NAME_MAX + 8];
    int off = 0;
    if (sscanf(l, "tenant %llu pid %lld name %70s%n", &tid, &pid, name, &off) != 3 || off == 0)
        die("bad tenant line '%.200s'", l);
    if (pid <= 0 || pid > INT32_MAX || !tidal_control_tenant_name_ok(name)) die("bad tenant line '%.200s'", l);
    /* `tenants` lists live tenants; a collection may name one that has left since */
    int known = !live && tid > 0 && tid <= D.next_id;
    for (unsigned i = 0; live && i < NCLIENTS; i++) known |= K[i].c && K[i].id == tid && K[i].tenant;
    if (!known) die("tenant line names connection %llu: '%.200s'", tid, l);
    *id = tid;
    return l + off;
}

static void check_list(char **L, unsigned n)
{
    want(L[0], "ok %u", M.n);
    want_lines(n, 1 + M.n, "list");
    for (unsigned i = 1; i < n; i++) {
        char name[64], sms[1200], extra[16] = "";
        unsigned count, gen;
        int k = sscanf(L[i], "part %63s %1199s count %u gen %u %15s", name, sms, &count, &gen, extra);
        if (k < 4) die("bad list line '%.200s'", L[i]);
        const mpart *p = model_find(name);
        if (!p) die("list shows '%s', which does not exist", name);
        for (unsigned j = 1; j < i; j++)
            if (!strncmp(L[j] + 5, name, strlen(name)) && L[j][5 + strlen(name)] == ' ')
                die("list shows '%s' twice", name);
        char fs[1200];
        tidal_smset_format(&p->set, fs, sizeof fs);
        want(L[i], "part %s %s count %u gen %" PRIu32 "%s", p->name, fs, tidal_smset_count(&p->set), p->gen,
             p->all ? " all" : "");
    }
}

/* `tenants` lists the tenants registered and not dropped when tidald read it. What the
 * harness sees is later in the same read at most: a tenant may have been dropped since
 * (a notification to a closed one, later in the batch), none can have come (only this
 * client's lines were read, and its own "ok tenant" would come after this answer). */
static void check_tenants_plain(char **L, unsigned n)
{
    unsigned alive = 0, known = 0;
    for (unsigned i = 0; i < NCLIENTS; i++)
        if (K[i].c && K[i].tenant) {
            known++;
            alive += !K[i].c->dead;
        }
    unsigned t;
    int off = 0;
    if (sscanf(L[0], "ok %u%n", &t, &off) != 1 || L[0][off] || t < alive || t > known)
        die("tenants answer '%.200s' (%u tenants, %u of them alive)", L[0], known, alive);
    want_lines(n, 1 + t, "tenants");
    uint64_t ids[NCLIENTS];
    for (unsigned i = 1; i < n; i++) {
        const char *rest = tenant_prefix(L[i], &ids[i - 1], 1);
        long long since;
        int mps;
        off = 0;
        if (sscanf(rest, " since %lld mps %d%n", &since, &mps, &off) != 2 || rest[off] || (mps != 0 && mps != 1))
            die("bad tenants line '%.200s'", L[i]);
        for (unsigned j = 0; j + 1 < i; j++)
            if (ids[j] == ids[i - 1]) die("tenants lists %" PRIu64 " twice", ids[j]);
        for (unsigned j = 0; j < NCLIENTS; j++) /* as it registered */
            if (K[j].c && K[j].id == ids[i - 1]) {
                char head[160];
                snprintf(head, sizeof head, "tenant %" PRIu64 " pid %" PRId64 " name %s since ", K[j].id, K[j].pid,
                         K[j].tname);
                if (strncmp(L[i], head, strlen(head))) die("'%.200s', expected %s...", L[i], head);
            }
    }
    for (unsigned i = 0; i < NCLIENTS; i++) {
        if (!K[i].c || !K[i].tenant || K[i].c->dead) continue;
        unsigned j = 0;
        while (j < t && ids[j] != K[i].id) j++;
        if (j == t) die("tenants does not list tenant %" PRIu64, K[i].id);
    }
}

static mcoll *mcoll_find(uint32_t seq)
{
    for (mcoll *m = MC; m; m = m->next)
        if (m->seq == seq) return m;
    return NULL;
}

static void mcoll_drop(mcoll *m)
{
    for (mcoll **pp = &MC; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            free(m);
            return;
        }
}

static const client *client_by_id(uint64_t id)
{
    for (unsigned i = 0; i < NCLIENTS; i++)
        if (K[i].c && K[i].id == id) return &K[i];
    return NULL;
}

/* A tenant's line, as tidald's tenant_stats must take it. */
static void model_tenant_line(const client *k, const char *line)
{
    static tidal_req r;
    char err[256];
    if (tidal_proto_parse(line, &r, err, sizeof err) != 0) return;
    if (r.verb != TIDAL_REQ_STATS && r.verb != TIDAL_REQ_STATS_END) return;
    mcoll *m = mcoll_find(r.seq);
    mtenant *t = NULL;
    for (unsigned i = 0; m && i < m->nt; i++)
        if (m->t[i].id == k->id) t = &m->t[i];
    if (!t || t->state != 0) return; /* not asked, or late: dropped */
    if (r.verb == TIDAL_REQ_STATS_END) {
        t->state = 1;
        return;
    }
    uint64_t total = 0;
    for (unsigned sm = 0; sm < 256; sm++) total += r.sm_blocks[sm];
    if (m->hist) {
        if (strcmp(r.name, m->name)) return;
        for (unsigned sm = 0; sm < 256; sm++) m->sm[sm] += r.sm_blocks[sm];
        m->violations += r.violations;
    }
    unsigned p;
    for (p = 0; p < t->nparts && strcmp(t->parts[p].name, r.name); p++) {
    }
    if (p == t->nparts) {
        if (p == MAX_TENANT_PARTS) return;
        t->nparts++;
        snprintf(t->parts[p].name, sizeof t->parts[p].name, "%s", r.name);
    }
    t->parts[p].violations += r.violations;
    t->parts[p].blocks += total;
}

/* The state tidald must report for t: answered; a tenant still there timed out; one that
 * is gone may be either (it may have gone after the deadline). */
static void check_state(const mtenant *t, const char *got, const char *line)
{
    const client *k = client_by_id(t->id);
    int alive = k && k->c && !k->c->dead;
    const char *want_state = t->state == 1 ? "answered" : "timeout";
    if (!strcmp(got, want_state)) return;
    if (t->state == 0 && !alive && !strcmp(got, "gone")) return;
    die("tenant %" PRIu64 " reported '%s', expected %s: '%.200s'", t->id, got, want_state, line);
}

static void check_collection_answer(const expect *e, const tidal_req *r, char **L, unsigned n)
{
    if (!e->seq) die("'%.100s' was answered as a collection, but none was started for it", e->line);
    const mcoll *m = mcoll_find(e->seq);
    if (!m) die("collection %u answered twice", e->seq);
    unsigned answered = 0, i = 1;
    for (unsigned t = 0; t < m->nt; t++) answered += m->t[t].state == 1;
    if (m->hist)
        want(L[0], "ok hist %s tenants %u answered %u violations %" PRIu64, r->name, m->nt, answered, m->violations);
    else
        want(L[0], "ok %u answered %u", m->nt, answered);
    for (unsigned t = 0; t < m->nt; t++, i++) {
        const mtenant *mt = &m->t[t];
        const client *k = client_by_id(mt->id);
        if (i >= n) die("collection %u: %u tenant lines, expected %u", m->seq, t, m->nt);
        char head[160];
        int hn = snprintf(head, sizeof head, "tenant %" PRIu64 " pid ", mt->id);
        if (strncmp(L[i], head, (size_t)hn)) die("collection %u: '%.200s', expected %s...", m->seq, L[i], head);
        uint64_t id;
        const char *rest = tenant_prefix(L[i], &id, 0);
        if (k) { /* still connected: its registration is known */
            snprintf(head, sizeof head, "tenant %" PRIu64 " pid %" PRId64 " name %s", mt->id, k->pid, k->tname);
            if (strncmp(L[i], head, strlen(head))) die("'%.200s', expected %s...", L[i], head);
        }
        if (m->hist) {
            if (*rest != ' ') die("bad hist tenant line '%.200s'", L[i]);
            check_state(mt, rest + 1, L[i]);
            continue;
        }
        long long since;
        int mps, off = 0;
        if (sscanf(rest, " since %lld mps %d stats %n", &since, &mps, &off) != 2 || !off || (mps != 0 && mps != 1))
            die("bad tenants stats line '%.200s'", L[i]);
        check_state(mt, rest + off, L[i]);
        for (unsigned p = 0; p < mt->nparts; p++) {
            if (++i >= n) die("collection %u: tenant %" PRIu64 " lacks its partitions", m->seq, mt->id);
            want(L[i], "stats %s violations %" PRIu64 " blocks %" PRIu64, mt->parts[p].name, mt->parts[p].violations,
                 mt->parts[p].blocks);
        }
    }
    for (unsigned sm = 0; m->hist && sm < 256; sm++) {
        if (!m->sm[sm]) continue;
        if (i >= n) die("hist %s: no line for SM %u", m->name, sm);
        want(L[i++], "sm %u %" PRIu64, sm, m->sm[sm]);
    }
    if (i != n) die("collection %u: extra line '%.200s'", m->seq, L[i]);
}

/* One whole answer (lines before "end") to the request e. */
static void check_answer(client *k, const expect *e, char **L, unsigned n)
{
    if (n == 0 && !g_silent) die("an answer without a status line");
    if (e->kind == EXP_LONG) {
        want_lines(n, 1, "line too long");
        want(L[0], "error: line too long (max %d bytes)", LINE_MAX_BYTES);
        return;
    }
    if (e->kind == EXP_INCOMPLETE) {
        want_lines(n, 1, "incomplete");
        want(L[0], "error: incomplete request (no newline before end of input)");
        return;
    }
    static tidal_req r;
    char err[256], sms[1200];
    if (tidal_proto_parse(e->line, &r, err, sizeof err) != 0) {
        want_lines(n, 1, "error");
        want(L[0], "error: %s", err);
        return;
    }
    if (g_silent && r.verb != TIDAL_REQ_CREATE && r.verb != TIDAL_REQ_SET && r.verb != TIDAL_REQ_DESTROY) return;
    mpart *p = (r.verb == TIDAL_REQ_CREATE || r.verb == TIDAL_REQ_SET || r.verb == TIDAL_REQ_DESTROY ||
                r.verb == TIDAL_REQ_HIST)
                   ? model_find(r.name)
                   : NULL;
    switch (r.verb) {
    case TIDAL_REQ_PING:
        want_lines(n, 1, "ping");
        want(L[0], "ok pong pid %d gen %" PRIu32, (int)getpid(), M.gen);
        break;
    case TIDAL_REQ_LIST: check_list(L, n); break;
    case TIDAL_REQ_CREATE:
    case TIDAL_REQ_SET:
        want_lines(n, 1, "create/set");
        if (r.verb == TIDAL_REQ_CREATE && p) {
            want(L[0], "error: exists: %s", r.name);
        } else if (r.verb == TIDAL_REQ_SET && !p) {
            want(L[0], "error: no such partition: %s", r.name);
        } else if (!p && M.n == TIDAL_SHM_MAX_PARTS) {
            want(L[0], "error: partition table full (%u partitions)", TIDAL_SHM_MAX_PARTS);
        } else {
            fmt_req_set(&r, sms, sizeof sms);
            want(L[0], "ok %s %s %s gen %" PRIu32, r.verb == TIDAL_REQ_CREATE ? "created" : "set", r.name, sms,
                 M.gen + 1);
            if (!p) {
                p = &M.p[M.n++];
                snprintf(p->name, sizeof p->name, "%s", r.name);
            }
            p->set = r.set;
            p->all = r.is_all;
            p->gen = ++M.gen;
        }
        break;
    case TIDAL_REQ_DESTROY:
        want_lines(n, 1, "destroy");
        if (!p) {
            want(L[0], "error: no such partition: %s", r.name);
        } else {
            want(L[0], "ok destroyed %s gen %" PRIu32, r.name, M.gen + 1);
            *p = M.p[--M.n];
            M.gen++;
        }
        break;
    case TIDAL_REQ_TENANTS:
        if (r.with_stats)
            check_collection_answer(e, &r, L, n);
        else
            check_tenants_plain(L, n);
        break;
    case TIDAL_REQ_HIST:
        if (!e->seq) {
            want_lines(n, 1, "hist");
            if (p) die("hist %s refused, but %s exists", r.name, r.name);
            want(L[0], "error: no such partition: %s", r.name);
        } else {
            check_collection_answer(e, &r, L, n);
        }
        break;
    case TIDAL_REQ_TENANT:
        want_lines(n, 1, "tenant");
        want(L[0], "ok tenant %" PRIu64 " shm %s gen %" PRIu32, k->id, D.shm_name, M.gen);
        k->tenant = 1;
        k->gen = M.gen;
        k->pid = r.pid;
        snprintf(k->tname, sizeof k->tname, "%s", r.tenant_name);
        break;
    case TIDAL_REQ_STATS:
    case TIDAL_REQ_STATS_END:
        want_lines(n, 1, "stats");
        want(L[0], "error: stats lines are for tenant connections (send 'tenant PID NAME' first)");
        break;
    default: die("the parser returned verb %d", r.verb);
    }
}

static void free_expects(client *k)
{
    while (k->head) {
        expect *e = k->head;
        k->head = e->next;
        free(e->line);
        free(e);
    }
    k->tail = NULL;
}

static void push_expect(client *k, int kind, const char *line, size_t len)
{
    if (k->tenant) { /* a tenant's lines are not answered; its stats count */
        if (kind == EXP_LINE) {
            char *copy = xrealloc(NULL, len + 1);
            memcpy(copy, line, len);
            copy[len] = '\0';
            model_tenant_line(k, copy);
            free(copy);
        }
        return;
    }
    expect *e = calloc(1, sizeof *e);
    if (!e) die("out of memory");
    e->kind = kind;
    if (kind == EXP_LINE) {
        e->line = xrealloc(NULL, len + 1);
        memcpy(e->line, line, len);
        e->line[len] = '\0';
    }
    if (k->tail)
        k->tail->next = e;
    else
        k->head = e;
    k->tail = e;
}

/* The bytes tidald read from k: lines as tidal_linebuf must cut them. */
static void model_bytes(client *k, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (k->discarding) {
            if (ch == '\n') k->discarding = 0;
            continue;
        }
        if (ch == '\n') {
            size_t len = k->curlen;
            for (size_t j = 0; j < len; j++)
                if (k->cur[j] == '\0') k->cur[j] = 0x7f;
            if (len && k->cur[len - 1] == '\r') len--;
            push_expect(k, EXP_LINE, k->cur, len);
            k->curlen = 0;
            continue;
        }
        k->cur[k->curlen++] = ch;
        if (k->curlen == TIDAL_PROTO_MAX_LINE) { /* the buffer is full without a newline */
            push_expect(k, EXP_LONG, NULL, 0);
            k->curlen = 0;
            k->discarding = 1;
        }
    }
}

static void model_eof(client *k)
{
    if (k->curlen && !k->discarding) push_expect(k, EXP_INCOMPLETE, NULL, 0);
    k->curlen = 0;
}

/* ---- reading the answers ----------------------------------------------------------------- */

static void tenant_line(client *k, const char *l)
{
    if (g_trace) fprintf(stderr, "[%" PRIu64 "] < %.200s (tenant)\n", k->id, l);
    unsigned long long v;
    int off = 0;
    if (sscanf(l, "gen %llu%n", &v, &off) == 1 && !l[off] && l[4] != '+' && l[4] != '-') {
        uint32_t g = tidal_shm_generation(D.shm);
        if (v != g || v <= k->gen)
            die("tenant %" PRIu64 " told 'gen %llu' (was at %u, segment at %u)", k->id, v, k->gen, g);
        k->gen = (uint32_t)v;
        return;
    }
    if (sscanf(l, "stats %llu%n", &v, &off) == 1 && !l[off] && l[6] != '+' && l[6] != '-') {
        /* start_collection asks while it builds the collection: its seq is the newest */
        if (v != D.next_seq || v == 0 || v <= k->stats_seq)
            die("tenant %" PRIu64 " asked 'stats %llu' (newest seq %u, last asked %u)", k->id, v, D.next_seq,
                k->stats_seq);
        k->stats_seq = (uint32_t)v;
        if (v < sizeof asked / sizeof *asked) asked[v]++;
        return;
    }
    die("tenant %" PRIu64 " got '%.200s' (only gen / stats lines go to tenants)", k->id, l);
}

static void answer_line(client *k, char *l)
{
    if (strcmp(l, "end")) {
        if (k->nresp == 0) {
            if (strcmp(l, "ok") && strncmp(l, "ok ", 3) && (strncmp(l, "error: ", 7) || !l[7]))
                die("status line '%.200s' is neither 'ok[ ...]' nor 'error: TEXT'", l);
        } else if (strncmp(l, "part ", 5) && strncmp(l, "tenant ", 7) && strncmp(l, "stats ", 6) &&
                   strncmp(l, "sm ", 3)) {
            die("data line '%.200s' starts with no keyword", l);
        }
        if (k->nresp == k->capresp) {
            k->capresp = k->capresp ? 2 * k->capresp : 16;
            k->resp = xrealloc(k->resp, k->capresp * sizeof *k->resp);
        }
        k->resp[k->nresp] = xrealloc(NULL, strlen(l) + 1);
        strcpy(k->resp[k->nresp++], l);
        return;
    }
    expect *e = k->head;
    if (!e) die("connection %" PRIu64 ": an answer ('%.200s') to no request", k->id, k->nresp ? k->resp[0] : "");
    if (g_trace) {
        fprintf(stderr, "[%" PRIu64 "] > %.200s\n", k->id,
                e->kind == EXP_LINE   ? e->line
                : e->kind == EXP_LONG ? "(over-long line)"
                                      : "(EOF inside a line)");
        for (unsigned i = 0; i < k->nresp; i++) fprintf(stderr, "[%" PRIu64 "] < %.200s\n", k->id, k->resp[i]);
    }
    check_answer(k, e, k->resp, k->nresp);
    if (e->seq) mcoll_drop(mcoll_find(e->seq));
    for (unsigned i = 0; i < k->nresp; i++) free(k->resp[i]);
    k->nresp = 0;
    k->head = e->next;
    if (!k->head) k->tail = NULL;
    free(e->line);
    free(e);
    if (k->tenant) { /* registered: the lines after it, already read, were tenant lines */
        for (expect *t = k->head; t; t = t->next)
            if (t->kind == EXP_LINE) model_tenant_line(k, t->line);
        free_expects(k);
    }
}

/* Checks the bytes tidald queued for k since the last look. */
static void observe(client *k)
{
    conn *c = k->c;
    if (k->seen > c->outlen) die("connection %" PRIu64 ": output shrank under the harness", k->id);
    for (size_t i = k->seen; i < c->outlen; i++) {
        unsigned char ch = (unsigned char)c->out[i];
        if (ch == '\n') {
            k->rl[k->rlen] = '\0';
            if (k->tenant && k->nresp == 0)
                tenant_line(k, k->rl);
            else
                answer_line(k, k->rl);
            k->rlen = 0;
            continue;
        }
        if ((ch < 0x20 && ch != '\t') || ch > 0x7e) die("connection %" PRIu64 ": byte 0x%02x in an answer", k->id, ch);
        if (k->rlen == LINE_MAX_BYTES) die("connection %" PRIu64 ": answer line over %d bytes", k->id, LINE_MAX_BYTES);
        k->rl[k->rlen++] = (char)ch;
    }
    k->seen = c->outlen;
}

/* tidald drops a connection whose unread answers pass its cap: the request it was answering
 * took effect all the same, so the model applies it without its answer. */
static void check_dropped(client *k)
{
    conn *c = k->c;
    if (!c || !c->dead || k->closed || k->dropped) return;
    k->dropped = 1;
    size_t cap = c->tenant ? OUT_CAP_TENANT : OUT_CAP_CLIENT;
    if (c->outlen + 1024 < cap) die("connection %" PRIu64 " dropped with only %zu bytes queued", k->id, c->outlen);
    if (k->head && !k->tenant) {
        static char empty[1];
        char *none[1] = {empty};
        g_silent = 1;
        check_answer(k, k->head, none, 1);
        g_silent = 0;
    }
}

/* A requester that now waits: its oldest unanswered request started the collection. */
static void check_started(client *k)
{
    conn *c = k->c;
    if (!c->waiting || !k->head || k->head->seq) return;
    expect *e = k->head;
    static tidal_req r;
    char err[256];
    if (e->kind != EXP_LINE || tidal_proto_parse(e->line, &r, err, sizeof err) != 0 ||
        !((r.verb == TIDAL_REQ_HIST && model_find(r.name)) || (r.verb == TIDAL_REQ_TENANTS && r.with_stats)))
        die("connection %" PRIu64 " waits after '%.100s'", k->id, e->kind == EXP_LINE ? e->line : "(no line)");
    const collection *found = NULL;
    for (const collection *q = D.colls; q; q = q->next)
        if (q->requester == c->id) {
            if (found) die("connection %" PRIu64 " requested two collections", k->id);
            found = q;
        }
    if (!found) die("connection %" PRIu64 " waits for no collection", k->id);
    if (found->seq != D.next_seq || mcoll_find(found->seq))
        die("collection seq %u (newest %u)", found->seq, D.next_seq);
    unsigned dead = 0; /* a tenant dropped for not reading lost its "stats SEQ" */
    for (unsigned i = 0; i < D.nconns; i++) dead += D.conns[i]->tenant && D.conns[i]->dead;
    if (found->seq < sizeof asked / sizeof *asked &&
        (asked[found->seq] > found->ntenants || asked[found->seq] + dead < found->ntenants))
        die("collection %u has %u tenants, %u were asked", found->seq, found->ntenants, asked[found->seq]);
    /* the tenants it asks: every live registered one, in tidald's connection order */
    mcoll *m = calloc(1, sizeof *m);
    if (!m) die("out of memory");
    m->seq = found->seq;
    m->requester = c->id;
    m->hist = r.verb == TIDAL_REQ_HIST;
    snprintf(m->name, sizeof m->name, "%s", r.name);
    for (unsigned i = 0; i < found->ntenants; i++) {
        const client *t = client_by_id(found->t[i].conn_id);
        if (!t || !t->tenant || m->nt == NCLIENTS)
            die("collection %u asks %" PRIu64 ", no tenant", m->seq, found->t[i].conn_id);
        m->t[m->nt++].id = t->id;
    }
    unsigned live = 0;
    for (unsigned i = 0; i < NCLIENTS; i++) live += K[i].c && K[i].tenant && !K[i].c->dead;
    if (live > found->ntenants) die("collection %u asks %u of %u tenants", m->seq, found->ntenants, live);
    m->next = MC;
    MC = m;
    e->seq = m->seq;
}

/* ---- the daemon's state -------------------------------------------------------------------- */

static void check_shm(void)
{
    const tidal_shm *s = D.shm;
    if (tidal_shm_check(s, TIDAL_SHM_SIZE) != 0) die("segment header damaged");
    uint32_t seq = atomic_load(&((tidal_shm *)s)->h.seq), gen = tidal_shm_generation(s);
    if (seq & 1u) die("segment left mid-update (seq %u)", seq);
    if (gen != M.gen) die("segment at generation %u, the answers announced %u", gen, M.gen);
    unsigned used = 0;
    static const tidal_shm_part zero;
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) {
        const tidal_shm_part *p = &s->part[i];
        if (!(p->flags & TIDAL_SHM_PART_USED)) {
            if (memcmp(p, &zero, sizeof *p)) die("free slot %u is not all zero", i);
            continue;
        }
        used++;
        if (memchr(p->name, '\0', sizeof p->name) == NULL || !tidal_control_name_ok(p->name))
            die("slot %u: bad name", i);
        for (size_t j = strlen(p->name); j < sizeof p->name; j++)
            if (p->name[j]) die("slot %u: bytes after the name", i);
        if (p->flags & ~(TIDAL_SHM_PART_USED | TIDAL_SHM_PART_ALL)) die("slot %u: flags 0x%x", i, p->flags);
        if ((p->flags & TIDAL_SHM_PART_ALL) &&
            (p->mask.bits[0] & p->mask.bits[1] & p->mask.bits[2] & p->mask.bits[3]) != UINT64_MAX)
            die("slot %u (%s): 'all' without all 256 SMs", i, p->name);
        if (p->generation == 0 || p->generation > gen) die("slot %u: generation %u, header %u", i, p->generation, gen);
        if (p->reserved[0] | p->reserved[1] | p->reserved[2] | p->reserved[3]) die("slot %u: reserved bytes", i);
        for (unsigned j = 0; j < i; j++)
            if ((s->part[j].flags & TIDAL_SHM_PART_USED) && !strcmp(s->part[j].name, p->name))
                die("'%s' in slots %u and %u", p->name, j, i);
        const mpart *m = model_find(p->name);
        if (!m) die("segment holds '%s', which the answers never created", p->name);
        if (memcmp(&m->set, &p->mask, sizeof p->mask) || m->all != !!(p->flags & TIDAL_SHM_PART_ALL) ||
            m->gen != p->generation)
            die("segment's '%s' is not what the answers said", p->name);
    }
    if (used != M.n) die("segment holds %u partitions, the answers %u", used, M.n);
    if (s->h.nparts != used) die("nparts %u, %u slots in use", s->h.nparts, used);
}

static void check_daemon(void)
{
    if (D.nconns > MAX_CONNS) die("%u connections", D.nconns);
    unsigned mine = 0;
    for (unsigned i = 0; i < NCLIENTS; i++) mine += K[i].c != NULL;
    if (mine != D.nconns) die("tidald has %u connections, the clients %u", D.nconns, mine);
    for (unsigned i = 0; i < D.nconns; i++) {
        const conn *c = D.conns[i];
        client *k = client_of(c);
        if (k->id != c->id) die("connection id %" PRIu64 " changed (was %" PRIu64 ")", c->id, k->id);
        if (c->in.start > c->in.len || c->in.len > sizeof c->in.buf)
            die("line buffer %zu..%zu", c->in.start, c->in.len);
        if (c->outlen > c->outcap || c->outlen > (c->tenant ? OUT_CAP_TENANT : OUT_CAP_CLIENT))
            die("output %zu of %zu", c->outlen, c->outcap);
        if (c->tenant && (c->pid <= 0 || c->pid > INT32_MAX || !tidal_control_tenant_name_ok(c->name)))
            die("tenant %" PRIu64 ": pid %" PRId64 " name '%.70s'", c->id, c->pid, c->name);
        if (c->tenant != k->tenant && !c->dead)
            die("connection %" PRIu64 ": tenant %d, answers said %d", c->id, c->tenant, k->tenant);
        if (c->dead && !k->closed && !k->dropped) die("connection %" PRIu64 " dead, but its client is there", c->id);
        unsigned reqs = 0;
        for (const collection *q = D.colls; q; q = q->next) reqs += q->requester == c->id;
        if (reqs != (unsigned)(c->waiting != 0))
            die("connection %" PRIu64 ": waiting %d, requester of %u", c->id, c->waiting, reqs);
        if (k->tenant && !c->dead && !k->closed && k->gen != tidal_shm_generation(D.shm))
            die("tenant %" PRIu64 " last told of gen %u, segment at %u", c->id, k->gen, tidal_shm_generation(D.shm));
        /* what it sent and tidald read is answered, except behind a pending collection */
        if (!c->dead && !c->waiting && k->head)
            die("connection %" PRIu64 ": '%.100s' not answered", c->id,
                k->head->kind == EXP_LINE ? k->head->line : "(long/incomplete)");
    }
    for (const collection *q = D.colls; q; q = q->next) {
        if (q->seq == 0 || q->seq > D.next_seq) die("collection seq %u (next %u)", q->seq, D.next_seq);
        for (const collection *o = q->next; o; o = o->next)
            if (o->seq == q->seq) die("two collections with seq %u", q->seq);
        for (unsigned t = 0; t < q->ntenants; t++)
            if (q->t[t].state < 0 || q->t[t].state > 2 || q->t[t].nparts > MAX_TENANT_PARTS)
                die("collection %u: tenant %u state %d, %u partitions", q->seq, t, q->t[t].state, q->t[t].nparts);
    }
}

/* conn_sweep, checking it closes exactly the connections it should. */
static void sweep(void)
{
    int gone[NCLIENTS];
    for (unsigned i = 0; i < NCLIENTS; i++) {
        check_dropped(&K[i]);
        const conn *c = K[i].c;
        gone[i] = c && (c->dead || (c->eof && !c->waiting && c->outlen == 0));
    }
    conn_sweep();
    for (unsigned i = 0; i < NCLIENTS; i++) {
        client *k = &K[i];
        if (!k->c) continue;
        int present = 0;
        for (unsigned j = 0; j < D.nconns; j++) present |= D.conns[j] == k->c;
        if (present == gone[i]) die("connection %" PRIu64 ": %s by the sweep", k->id, present ? "kept" : "closed");
        if (!present) {
            if (!k->closed && !k->dropped && (k->head || k->nresp || k->rlen))
                die("connection %" PRIu64 " closed with a request unanswered", k->id);
            for (mcoll *m = MC, *next; m; m = next) { /* its collections are answered to nobody */
                next = m->next;
                if (m->requester == k->id) mcoll_drop(m);
            }
            k->c = NULL;
            free_expects(k);
            for (unsigned r = 0; r < k->nresp; r++) free(k->resp[r]);
            k->nresp = 0;
        }
    }
}

/* After every round: the daemon's tables, and the segment in full when tidald wrote it
 * (seq moved) — else the slots only at the end of each record (settle), to keep rounds cheap
 * when every byte is a read of its own. */
static uint32_t g_checked_seq = UINT32_MAX;
static void check_all(void)
{
    uint32_t seq = atomic_load(&D.shm->h.seq);
    if (seq != g_checked_seq) {
        check_shm();
        g_checked_seq = seq;
    }
    check_daemon();
}

static void check_all_full(void)
{
    check_shm();
    check_daemon();
}

/* ---- driving it ---------------------------------------------------------------------------- */

/* tidald.c's read_conn, with recv taking from the client's queue. */
static void read_conn(client *k)
{
    conn *c = k->c;
    for (int rounds = 0; rounds < 4 && !c->eof && !c->dead; rounds++) {
        size_t avail;
        char *p = tidal_linebuf_space(&c->in, &avail);
        if (avail == 0) die("connection %" PRIu64 ": a full line buffer", k->id);
        size_t n = k->plen - k->poff;
        if (n == 0) {
            if (k->eof_sent) {
                c->eof = 1;
                model_eof(k);
            }
            break;
        }
        if (n > avail) n = avail;
        if (g_chunk && n > g_chunk) n = g_chunk;
        memcpy(p, k->pend + k->poff, n);
        model_bytes(k, k->pend + k->poff, n);
        k->poff += n;
        tidal_linebuf_added(&c->in, n);
        process_input(c);
        if (c->waiting) break;
    }
    process_input(c);
}

/* One event-loop round in which client k's socket is readable (or writable). */
static void round_for(client *k)
{
    conn *c = k->c;
    if (!c->waiting && !c->eof && !c->dead) {
        read_conn(k);
        check_dropped(k);
        observe(k);
        check_started(k);
    }
    if (c->outlen) flush_out(c);
    collections_round();
    sweep();
    check_all();
}

static int readable(const client *k)
{
    const conn *c = k->c;
    if (!c || c->dead) return c != NULL; /* a dead one goes in the next sweep */
    if (c->outlen && !k->stalled) return 1;
    return !c->waiting && !c->eof && (k->poff < k->plen || k->eof_sent);
}

/* Rounds until no connection has anything to read or write. */
static void settle(void)
{
    for (unsigned guard = 0;; guard++) {
        if (guard > 4 * MAX_FEED) die("tidald does not settle");
        int any = 0;
        for (unsigned i = 0; i < NCLIENTS; i++)
            if (readable(&K[i])) {
                round_for(&K[i]);
                any = 1;
            }
        if (!any) break;
    }
    check_all_full();
}

/* check_collections(0), checking that it leaves no collection it should have answered:
 * none whose tenants have all answered or gone, none past its deadline. */
static void collections_round(void)
{
    check_collections(0);
    uint64_t now = tidal_control_now_ns();
    for (const collection *q = D.colls; q; q = q->next) {
        unsigned waiting = 0;
        for (unsigned t = 0; t < q->ntenants; t++) {
            const client *k = client_by_id(q->t[t].conn_id);
            waiting += q->t[t].state == 0 && k && k->c && !k->c->dead;
        }
        if (!waiting) die("collection %u is complete, yet not answered", q->seq);
        if (q->deadline_ns <= now) die("collection %u is past its deadline, yet not answered", q->seq);
    }
}

/* The stats deadline passes for every collection there is (not for those that answering
 * them starts: they get a deadline of their own). */
static void timeout_all(void)
{
    for (collection *q = D.colls; q; q = q->next) q->deadline_ns = 0;
    collections_round();
    sweep();
    check_all();
}

/* tidald is killed between two requests (SIGKILL: its connections and collections are
 * gone, the segment stays), and a new one resumes the segment as open_shm does. torn: what
 * the kill interrupted, a state a real crash can leave: 0 nothing, 1 an update between
 * write_begin and write_end (seq odd), 2 a create that wrote the name of a free slot but
 * not its flags, 3 nparts counted but the slot not written, 4 a set of an "all" partition
 * to 0-3 that copied the mask but did not write the flags yet (do_create_set's order).
 * The resumed segment must hold exactly the partitions the answers announced (4: with
 * the set that had no answer yet), consistent, with a new generation. */
static void restart(unsigned torn)
{
    while (D.colls) {
        collection *q = D.colls;
        D.colls = q->next;
        free(q->t);
        free(q);
    }
    while (D.nconns) conn_close(D.nconns - 1);
    for (unsigned i = 0; i < NCLIENTS; i++) {
        client *k = &K[i];
        free_expects(k);
        for (unsigned r = 0; r < k->nresp; r++) free(k->resp[r]);
        char *pend = k->pend;
        size_t pcap = k->pcap;
        char **resp = k->resp;
        unsigned capresp = k->capresp;
        int stalled = k->stalled;
        memset(k, 0, sizeof *k); /* its socket went with tidald; what it had queued, too */
        k->pend = pend;
        k->pcap = pcap;
        k->resp = resp;
        k->capresp = capresp;
        k->stalled = stalled;
    }
    while (MC) mcoll_drop(MC);
    memset(asked, 0, sizeof asked);
    switch (torn % 5) {
    case 1: atomic_fetch_or(&seg.h.seq, 1u); break;
    case 4:
        for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) {
            tidal_shm_part *p = &seg.part[i];
            mpart *m = (p->flags & TIDAL_SHM_PART_ALL) ? model_find(p->name) : NULL;
            if (!m) continue;
            atomic_fetch_or(&seg.h.seq, 1u);
            static const uint64_t sm0_3[4] = {0xf, 0, 0, 0};
            memcpy(p->mask.bits, sm0_3, sizeof p->mask.bits);
            memcpy(m->set.bits, sm0_3, sizeof m->set.bits); /* the set took effect */
            m->all = 0;
            break;
        }
        break;
    case 2:
        for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++)
            if (!(seg.part[i].flags & TIDAL_SHM_PART_USED)) {
                snprintf(seg.part[i].name, sizeof seg.part[i].name, "torn");
                seg.part[i].created_ns = 1;
                seg.h.nparts++;
                break;
            }
        break;
    case 3: seg.h.nparts += 7; break;
    }
    memset(&D, 0, sizeof D);
    D.shm = &seg;
    D.shm_fd = D.listen_fd = -1;
    D.stats_ms = 60000;
    snprintf(D.shm_name, sizeof D.shm_name, "/tidal-fuzz");
    if (tidal_shm_check(&seg, TIDAL_SHM_SIZE) != 0) die("the segment does not look like one any more");
    unsigned n = shm_resume(&seg);
    if (n != M.n) die("resumed %u partitions, the answers announced %u", n, M.n);
    tidal_shm_write_begin(&seg);
    uint32_t gen = tidal_shm_write_end(&seg);
    if (gen <= M.gen) die("resumed at generation %u, not after %u", gen, M.gen);
    M.gen = gen;
    g_checked_seq = UINT32_MAX;
    check_all_full();
}

static client *connect_client(unsigned i)
{
    client *k = &K[i];
    if (k->c && (k->eof_sent || k->closed)) return NULL; /* the old one has not gone yet */
    if (!k->c) {
        conn *c = conn_new(-1);
        if (!c) die("conn_new failed with %u connections", D.nconns);
        uint32_t seq = k->stats_seq;
        char *pend = k->pend;
        size_t pcap = k->pcap;
        char **resp = k->resp;
        unsigned capresp = k->capresp;
        int stalled = k->stalled;
        memset(k, 0, sizeof *k);
        k->stalled = stalled;
        k->c = c;
        k->id = c->id;
        k->stats_seq = seq; /* '$' keeps working across a reconnection */
        k->pend = pend;
        k->pcap = pcap;
        k->resp = resp;
        k->capresp = capresp;
    }
    return k;
}

static void send_bytes(client *k, const unsigned char *p, size_t n, unsigned index)
{
    char s[12];
    for (size_t i = 0; i < n && g_fed < MAX_FEED; i++) {
        size_t m = tidal_fuzz_expand(p[i], k->stats_seq, index, s);
        if (k->poff > 0 && k->poff == k->plen) k->poff = k->plen = 0;
        if (k->plen + m > k->pcap) {
            k->pcap = k->pcap ? 2 * k->pcap : 4096;
            while (k->pcap < k->plen + m) k->pcap *= 2;
            k->pend = xrealloc(k->pend, k->pcap);
        }
        memcpy(k->pend + k->plen, s, m);
        k->plen += m;
        g_fed += m;
    }
}

static void reset(void)
{
    memset(&D, 0, sizeof D);
    D.shm = &seg;
    D.shm_fd = D.listen_fd = -1;
    D.stats_ms = 60000; /* deadlines pass only when the input says so (TIMEOUT) */
    snprintf(D.shm_name, sizeof D.shm_name, "/tidal-fuzz");
    shm_format(&seg);
    /* open_shm's last step: a new daemon is a change */
    tidal_shm_write_begin(&seg);
    tidal_shm_write_end(&seg);
    memset(&M, 0, sizeof M);
    M.gen = tidal_shm_generation(&seg);
    memset(asked, 0, sizeof asked);
    while (MC) mcoll_drop(MC);
    g_fed = 0;
    g_checked_seq = UINT32_MAX;
}

static void finish(void)
{
    for (unsigned i = 0; i < NCLIENTS; i++) {
        K[i].stalled = 0;
        if (K[i].c) K[i].eof_sent = 1;
    }
    for (unsigned guard = 0; D.nconns || D.colls; guard++) {
        if (guard > 4 * MAX_FEED) die("tidald keeps %u connections after everyone left", D.nconns);
        settle();
        if (D.colls) timeout_all();
        sweep();
    }
    check_all();
    for (unsigned i = 0; i < NCLIENTS; i++) {
        client *k = &K[i];
        if (k->c) die("client %u still connected", i);
        free(k->pend);
        free(k->resp);
        free_expects(k);
        memset(k, 0, sizeof *k);
    }
}

static int env_flag(const char *name)
{
    const char *e = getenv(name);
    return e && *e && strcmp(e, "0") != 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (g_log < 0) {
        g_log = env_flag("TIDAL_FUZZ_LOG");
        g_trace = env_flag("TIDAL_FUZZ_TRACE");
    }
    reset();
    check_all();
    size_t pos;
    g_chunk = tidal_fuzz_chunk(data, size, &pos);
    tidal_fuzz_rec rec;
    while (tidal_fuzz_next(data, size, &pos, &rec)) {
        client *k = &K[rec.client];
        switch (rec.op) {
        case TIDAL_FUZZ_SEND:
        case TIDAL_FUZZ_REPEAT:
            if (!(k = connect_client(rec.client))) break;
            for (unsigned r = 0; r < rec.count; r++) send_bytes(k, rec.bytes, rec.len, r);
            break;
        case TIDAL_FUZZ_EOF:
            if (k->c) k->eof_sent = 1;
            break;
        case TIDAL_FUZZ_CLOSE:
            if (!k->c) break;
            k->eof_sent = k->closed = 1;
            if (k->c->waiting || k->c->eof) k->c->dead = 1; /* POLLHUP */
            break;
        case TIDAL_FUZZ_STALL: k->stalled = !k->stalled; break;
        case TIDAL_FUZZ_TIMEOUT: timeout_all(); break;
        case TIDAL_FUZZ_RESTART: restart(rec.count); break;
        }
        settle();
    }
    finish();
    if (D.nconns || D.colls) die("connections or collections left");
    return 0;
}
