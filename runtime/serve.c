/* serve.c — the serving engine (tidal_server.h): LS services fed by an arrival schedule, BE
 * services in a closed loop, a worker thread per model instance that replays the instance's
 * CUDA graph, around a policy's begin/end. The top of libtidal's stack (docs/design.md §5,
 * "Layers"): it calls the policies' public API, and the driver table and context of
 * device.c; nothing calls it.
 *
 * The queue of an LS service is the range [head, tail) of its arrival schedule: the
 * dispatcher queues requests in schedule order (tail), workers take batches from the front
 * (head, one taker at a time). A request's record is its slot of the service's array, filled
 * by the one thread that owns it at each step (the dispatcher: queued; a worker: the rest).
 * A worker waits for its graph on a pinned word the stream writes after the graph, so its
 * wait makes no driver call that could contend with the other workers' launches. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "control_proto.h"
#include "device.h"
#include "tidal_server.h"

#define SERVE_RATE_WINDOW 64 /* arrivals the rate is measured over (tidal.serve's deque) */
#define SERVE_FLAG_WORDS 16  /* a completion word per 64-byte line: workers spin on their own */
#define SERVE_MAX_INSTANCES 1024
#define SERVE_MAX_BATCH 4096
/* A spinning wait asks the stream now and then whether it failed: a context with a sticky
 * error never writes the word (about every 0.5 ms spinning, every 256 yields) */
#define SERVE_SPIN_CHECK 16384u
#define SERVE_YIELD_CHECK 256u
#define SERVE_BLOCK_NS 1000000u /* a blocked worker looks again at least this often */

struct tidal_server;

typedef struct serve_inst {
    struct tidal_server *server;
    struct serve_svc *svc;
    unsigned index;
    CUstream stream;
    CUgraphExec *graph_of; /* [max_batch]: the graph that runs a batch of b is graph_of[b - 1] */
    /* graphs placed for a mask (tidal_server_share): each a graph_of table of its own */
    struct serve_share {
        tidal_smset mask;
        unsigned count; /* SMs in mask */
        CUgraphExec *graph_of;
    } * shares;
    unsigned nshares;
    /* the run */
    pthread_t thread;
    int started;
    _Atomic uint32_t *flag; /* pinned: the stream writes seq after each graph */
    CUdeviceptr flag_dev;
    uint32_t seq;
    tidal_server_record *be; /* BE: this instance's records */
    size_t nbe, cap_be;
} serve_inst;

typedef struct serve_svc {
    char name[32];
    int id, cls, policy_id, wait;
    unsigned max_batch;
    serve_inst *inst;
    unsigned ninst;
    uint64_t *arrivals; /* LS: ns from the run's start, sorted */
    size_t narrivals;
    /* the run (LS): the queue is [head, tail) of the schedule */
    tidal_server_record *rec; /* one per arrival; batch != 0 once served */
    size_t next;              /* the dispatcher's: the next arrival to queue */
    atomic_size_t tail, head;
    pthread_mutex_t take; /* one worker takes a batch at a time */
    pthread_mutex_t lock; /* BLOCK-mode waiters: sleep on cond, counted in sleepers */
    pthread_cond_t cond;
    atomic_uint sleepers;
    atomic_ullong requests, batches;
} serve_svc;

struct tidal_server {
    tidal_policy *policy;
    tidal_server_config cfg;
    serve_svc **svc;
    unsigned nsvc, cap;
    CUgraphExec *execs; /* instantiated here (tidal_server_instantiate) */
    unsigned nexecs, cap_execs;
    uint32_t *pinned; /* completion words, SERVE_FLAG_WORDS per instance */
    unsigned pinned_inst;
    CUdeviceptr pinned_dev;
    /* the run */
    uint64_t t0, duration;
    atomic_int done;   /* the dispatcher is through: no more arrivals, BE stops */
    atomic_int failed; /* a thread failed: everyone stops */
    pthread_mutex_t err_lock;
    int status; /* the first failure */
    char err[TIDAL_ERROR_MAX];
    tidal_server_record *out;
    size_t nout;
};

/* ------------------------------------------------------------------ clock, threads */

static uint64_t mono_ns(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_for(void *ctx, uint64_t ns)
{
    (void)ctx;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static inline uint64_t now(const tidal_server *s) { return s->cfg.now_ns(s->cfg.ctx); }

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Every thread of the engine: Linux's default 50 us timer slack would make the dispatcher
 * queue each request that late (tidal.serve measured ~70 us). */
static void thread_setup(const char *what, const char *name, unsigned k)
{
#if defined(__linux__)
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    char tn[16];
    snprintf(tn, sizeof tn, "%s%.8s%u", what, name, k);
    pthread_setname_np(pthread_self(), tn);
#else
    (void)what, (void)name, (void)k;
#endif
}

static inline int stopping(tidal_server *s) { return atomic_load_explicit(&s->failed, memory_order_relaxed); }

static void wake_all(tidal_server *s)
{
    for (unsigned i = 0; i < s->nsvc; i++) {
        pthread_mutex_lock(&s->svc[i]->lock);
        pthread_cond_broadcast(&s->svc[i]->cond);
        pthread_mutex_unlock(&s->svc[i]->lock);
    }
}

/* The run's first failure, with this thread's tidal_last_error(), stops every thread. */
static int run_fail(tidal_server *s, int status)
{
    pthread_mutex_lock(&s->err_lock);
    if (!s->status) {
        s->status = status;
        snprintf(s->err, sizeof s->err, "%s", tidal_last_error());
    }
    pthread_mutex_unlock(&s->err_lock);
    atomic_store(&s->failed, 1);
    wake_all(s);
    return status;
}

static int cuda_fail(serve_inst *in, CUresult r, const char *call)
{
    char what[128];
    snprintf(what, sizeof what, "%s (service %s, instance %u)", call, in->svc->name, in->index);
    return run_fail(in->server, tidal__cuda_fail(r, what));
}

/* ------------------------------------------------------------------ the queue */

/* The dispatcher: the requests up to v->next are due. They are queued together, so that
 * requests due at one instant can be taken as one batch. */
static void publish(serve_svc *v)
{
    if (atomic_load_explicit(&v->tail, memory_order_relaxed) == v->next) return;
    atomic_store(&v->tail, v->next); /* seq_cst: ordered before the sleepers' count is read */
    if (atomic_load(&v->sleepers)) {
        pthread_mutex_lock(&v->lock);
        pthread_cond_broadcast(&v->cond);
        pthread_mutex_unlock(&v->lock);
    }
}

/* A worker with nothing to take (or waiting for a batch to fill): its service's way of
 * waiting, for at most ns when it blocks. seen: the tail it saw. */
static void idle(tidal_server *s, serve_svc *v, size_t seen, uint64_t ns)
{
    if (v->wait == TIDAL_SERVER_WAIT_SPIN) {
        cpu_relax();
        return;
    }
    if (v->wait == TIDAL_SERVER_WAIT_YIELD) {
        sched_yield();
        return;
    }
    if (ns > SERVE_BLOCK_NS) ns = SERVE_BLOCK_NS;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)ns;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&v->lock);
    atomic_fetch_add(&v->sleepers, 1); /* seq_cst: before the tail is read again */
    if (atomic_load(&v->tail) == seen && !atomic_load(&s->done) && !stopping(s))
        pthread_cond_timedwait(&v->cond, &v->lock, &ts);
    atomic_fetch_sub(&v->sleepers, 1);
    pthread_mutex_unlock(&v->lock);
}

/* The batch to take for the request at the front: the policy's choice at the arrival rate
 * of the last SERVE_RATE_WINDOW queued requests (as tidal.serve measures it) with what is
 * queued now (decided again whenever the queue changes), else what is queued up to
 * max_batch without waiting. */
static int decide(tidal_server *s, serve_svc *v, size_t head, size_t tail, unsigned *b, uint64_t *wait_ns)
{
    *b = v->max_batch;
    *wait_ns = 0;
    if (!s->policy || v->max_batch == 1) return TIDAL_OK;
    size_t k = tail < SERVE_RATE_WINDOW ? tail : SERVE_RATE_WINDOW;
    double rate = 0;
    if (k >= 2 && v->arrivals[tail - 1] > v->arrivals[tail - k])
        rate = (double)(k - 1) * 1e9 / (double)(v->arrivals[tail - 1] - v->arrivals[tail - k]);
    unsigned pb = 1;
    uint64_t w_us = 0;
    size_t queued = tail - head;
    int rc =
        tidal_policy_batch(s->policy, v->policy_id, rate, queued > UINT_MAX ? UINT_MAX : (unsigned)queued, &pb, &w_us);
    if (rc) return run_fail(s, rc);
    *b = pb < 1 ? 1 : pb > v->max_batch ? v->max_batch : pb;
    *wait_ns = w_us * 1000u;
    return TIDAL_OK;
}

/* ------------------------------------------------------------------ one batch */

/* Launch graph_of's graph for a batch of n and wait until it is done. */
static int launch_wait(serve_inst *in, CUgraphExec *const graph_of, unsigned n)
{
    const tidal_cu *cu = tidal__cu();
    const int wait = in->svc->wait;
    CUresult r = cu->GraphLaunch(graph_of[n - 1], in->stream);
    if (r != CUDA_SUCCESS) return cuda_fail(in, r, "cuGraphLaunch");
    if (wait == TIDAL_SERVER_WAIT_BLOCK) {
        r = cu->StreamSynchronize(in->stream);
        return r == CUDA_SUCCESS ? TIDAL_OK : cuda_fail(in, r, "cuStreamSynchronize");
    }
    const uint32_t seq = ++in->seq;
    r = cu->StreamWriteValue32(in->stream, in->flag_dev, seq, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r != CUDA_SUCCESS) return cuda_fail(in, r, "cuStreamWriteValue32");
    const unsigned check = wait == TIDAL_SERVER_WAIT_SPIN ? SERVE_SPIN_CHECK : SERVE_YIELD_CHECK;
    for (unsigned k = 1;; k++) {
        if ((int32_t)(atomic_load_explicit(in->flag, memory_order_acquire) - seq) >= 0) return TIDAL_OK;
        if (wait == TIDAL_SERVER_WAIT_SPIN)
            cpu_relax();
        else
            sched_yield();
        if (k % check == 0) {
            r = cu->StreamQuery(in->stream);
            if (r == CUDA_SUCCESS) return TIDAL_OK; /* all done: the word is on its way */
            if (r != CUDA_ERROR_NOT_READY) return cuda_fail(in, r, "cuStreamQuery");
        }
    }
}

static tidal_server_record *be_slot(serve_inst *in)
{
    if (in->nbe == in->cap_be) {
        size_t cap = in->cap_be ? 2 * in->cap_be : 256;
        tidal_server_record *g = realloc(in->be, cap * sizeof *g);
        if (!g) return NULL;
        in->be = g, in->cap_be = cap;
    }
    return &in->be[in->nbe++];
}

/* 1 + the index of the instance's share with the most SMs among those whose SMs all lie in
 * mask (the first of equals), 0: none does, the instance's own graph runs. A share between
 * two placed sets runs the smaller one's graph (a ladder of LS graphs under GSLICE); a
 * graph never runs on an SM its service was not given. */
static unsigned pick_share(const serve_inst *in, const tidal_smset *mask)
{
    unsigned best = 0, most = 0;
    for (unsigned i = 0; i < in->nshares; i++) {
        if (in->shares[i].count > most && tidal__smset_subset(&in->shares[i].mask, mask))
            best = i + 1, most = in->shares[i].count;
    }
    return best;
}

/* One batch: the policy's begin, the graph, its end; n requests from first (LS: schedule
 * indices; BE: none). */
static int serve_batch(serve_inst *in, size_t first, unsigned n)
{
    tidal_server *s = in->server;
    serve_svc *v = in->svc;
    unsigned sms = 0, share = 0;
    int rc;
    if (s->policy) {
        tidal_smset mask;
        if ((rc = tidal_policy_request_begin(s->policy, v->policy_id, 0)) != TIDAL_OK) return run_fail(s, rc);
        if ((rc = tidal_policy_share(s->policy, v->policy_id, in->nshares ? &mask : NULL, &sms)) != TIDAL_OK)
            return run_fail(s, rc);
        share = pick_share(in, &mask);
    }
    const uint64_t t0 = now(s);
    if ((rc = launch_wait(in, share ? in->shares[share - 1].graph_of : in->graph_of, n)) != TIDAL_OK) return rc;
    const uint64_t t1 = now(s);
    if (s->policy && (rc = tidal_policy_request_end(s->policy, v->policy_id, (double)(t1 - t0) / 1e3, n)) != TIDAL_OK)
        return run_fail(s, rc);
    for (unsigned k = 0; k < n; k++) {
        tidal_server_record *r;
        if (v->cls == TIDAL_SERVICE_LS) {
            r = &v->rec[first + k]; /* service, request and queued_ns are set */
            r->arrival_ns = s->t0 + v->arrivals[first + k];
        } else {
            if (!(r = be_slot(in))) return run_fail(s, tidal__fail(TIDAL_ERR_NO_MEMORY, "BE records of %s", v->name));
            r->service = v->id;
            r->request = in->nbe - 1;
            r->arrival_ns = r->queued_ns = t0;
        }
        r->instance = in->index;
        r->batch = n;
        r->sms = sms;
        r->share = share;
        r->start_ns = t0;
        r->end_ns = t1;
    }
    atomic_fetch_add(&v->batches, 1);
    atomic_fetch_add(&v->requests, n);
    return TIDAL_OK;
}

/* ------------------------------------------------------------------ the threads */

static void *ls_worker(void *arg)
{
    serve_inst *in = arg;
    tidal_server *s = in->server;
    serve_svc *v = in->svc;
    thread_setup("ls.", v->name, in->index);
    tidal__call c = tidal__ctx_enter();
    size_t decided = (size_t)-1, decided_tail = 0; /* the queue the batch was decided for */
    unsigned b = 1;
    uint64_t wait_ns = 0;
    while (!stopping(s)) {
        size_t head = atomic_load(&v->head), tail = atomic_load(&v->tail);
        if (head == tail) {
            /* done is set after the last request was queued: then tail is final */
            if (atomic_load(&s->done) && atomic_load(&v->tail) == atomic_load(&v->head)) break;
            idle(s, v, tail, SERVE_BLOCK_NS);
            continue;
        }
        if (head != decided || tail != decided_tail) {
            if (decide(s, v, head, tail, &b, &wait_ns) != TIDAL_OK) break;
            decided = head, decided_tail = tail;
        }
        if (tail - head < b && !atomic_load(&s->done)) {
            /* wait for the batch to fill, at most until the front request's deadline */
            const uint64_t deadline = s->t0 + v->arrivals[head] + wait_ns, t = now(s);
            if (t < deadline) {
                idle(s, v, tail, deadline - t);
                continue;
            }
        }
        pthread_mutex_lock(&v->take);
        head = atomic_load(&v->head), tail = atomic_load(&v->tail);
        size_t n = tail - head < b ? tail - head : b;
        if (n) atomic_store(&v->head, head + n);
        pthread_mutex_unlock(&v->take);
        if (n && serve_batch(in, head, (unsigned)n) != TIDAL_OK) break;
    }
    tidal__ctx_leave(c);
    return NULL;
}

static void *be_worker(void *arg)
{
    serve_inst *in = arg;
    tidal_server *s = in->server;
    thread_setup("be.", in->svc->name, in->index);
    tidal__call c = tidal__ctx_enter();
    while (!stopping(s) && !atomic_load(&s->done))
        if (serve_batch(in, 0, in->svc->max_batch) != TIDAL_OK) break;
    tidal__ctx_leave(c);
    return NULL;
}

/* The LS service whose next arrival (before the run's end) is the earliest; NULL: none. */
static serve_svc *next_due(tidal_server *s, uint64_t *t)
{
    serve_svc *best = NULL;
    for (unsigned i = 0; i < s->nsvc; i++) {
        serve_svc *v = s->svc[i];
        if (v->cls != TIDAL_SERVICE_LS || v->next >= v->narrivals || v->arrivals[v->next] >= s->duration) continue;
        if (!best || v->arrivals[v->next] < *t) best = v, *t = v->arrivals[v->next];
    }
    return best;
}

/* Queue each request at its time: sleep until spin_us before it (at most tick_us at a
 * time, ticking the policy in between), then spin on the clock. */
static void *dispatcher(void *arg)
{
    tidal_server *s = arg;
    thread_setup("dispatch", "", 0);
    const uint64_t spin = (uint64_t)s->cfg.spin_us * 1000u, tick = (uint64_t)s->cfg.tick_us * 1000u;
    uint64_t last_tick = s->t0;
    while (!stopping(s)) {
        uint64_t t = now(s), rel = t - s->t0, due = 0;
        serve_svc *v;
        while ((v = next_due(s, &due)) && (due <= rel || rel >= s->duration)) v->rec[v->next++].queued_ns = t;
        for (unsigned i = 0; i < s->nsvc; i++)
            if (s->svc[i]->cls == TIDAL_SERVICE_LS) publish(s->svc[i]);
        if (rel >= s->duration) break;
        if (s->policy && t - last_tick >= tick) {
            int rc = tidal_policy_tick(s->policy);
            if (rc) {
                run_fail(s, rc);
                break;
            }
            last_tick = t;
        }
        uint64_t at = v ? due : s->duration;
        rel = now(s) - s->t0;
        if (at > rel + spin) {
            uint64_t d = at - rel - spin;
            s->cfg.sleep_ns(s->cfg.ctx, d < tick ? d : tick);
        } else {
            while (now(s) - s->t0 < at && !stopping(s)) cpu_relax();
        }
    }
    atomic_store(&s->done, 1);
    wake_all(s);
    return NULL;
}

/* ------------------------------------------------------------------ API */

int tidal_server_create(tidal_policy *policy, const tidal_server_config *cfg, tidal_server **out)
{
    if (!out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_create: NULL");
    if (!tidal__ready()) return tidal__fail(TIDAL_ERR_NOT_INIT, "tidal_server_create before tidal_init");
    if (!tidal__cu()->GraphLaunch)
        return tidal__fail(TIDAL_ERR_NO_DRIVER, "tidal_server_create: the CUDA driver lacks cuGraphLaunch");
    tidal_server_config c;
    memset(&c, 0, sizeof c);
    if (cfg) c = *cfg;
    if (!c.spin_us) c.spin_us = 100;
    if (!c.tick_us) c.tick_us = 1000;
    if (!c.now_ns) c.now_ns = mono_ns;
    if (!c.sleep_ns) c.sleep_ns = sleep_for;
    tidal_server *s = calloc(1, sizeof *s);
    if (!s) return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_create");
    s->policy = policy;
    s->cfg = c;
    pthread_mutex_init(&s->err_lock, NULL);
    *out = s;
    return TIDAL_OK;
}

static void svc_free(serve_svc *v)
{
    if (!v) return;
    for (unsigned i = 0; v->inst && i < v->ninst; i++) {
        free(v->inst[i].graph_of);
        for (unsigned j = 0; j < v->inst[i].nshares; j++) free(v->inst[i].shares[j].graph_of);
        free(v->inst[i].shares);
        free(v->inst[i].be);
    }
    free(v->inst);
    free(v->arrivals);
    free(v->rec);
    pthread_mutex_destroy(&v->take);
    pthread_mutex_destroy(&v->lock);
    pthread_cond_destroy(&v->cond);
    free(v);
}

/* The graph for each batch size (of an instance, or of one of its shares: what): graphs[b -
 * 1], else the next larger one; graph for every size when there is no graphs. */
static int resolve_graphs(const tidal_server_service *sv, unsigned k, const char *what, void *graph,
                          void *const *graphs, unsigned max_batch, CUgraphExec *of)
{
    if (!graphs) {
        if (!graph) return tidal__fail(TIDAL_ERR_INVALID, "service %s: instance %u%s has no graph", sv->name, k, what);
        for (unsigned b = 0; b < max_batch; b++) of[b] = (CUgraphExec)graph;
        return TIDAL_OK;
    }
    if (!graphs[max_batch - 1])
        return tidal__fail(TIDAL_ERR_INVALID,
                           "service %s: instance %u%s has no graph for a batch of %u (max_batch: graphs[%u])", sv->name,
                           k, what, max_batch, max_batch - 1);
    for (unsigned b = max_batch; b-- > 0;) of[b] = graphs[b] ? (CUgraphExec)graphs[b] : of[b + 1];
    return TIDAL_OK;
}

/* Instance k's shares: each its mask and its graph table; two shares of one mask, an empty
 * mask, or a share without a policy to give masks, are errors. */
static int resolve_shares(tidal_server *s, const tidal_server_service *sv, unsigned k, unsigned max_batch,
                          serve_inst *in)
{
    const tidal_server_instance *si = &sv->instances[k];
    if (!si->nshares) return TIDAL_OK;
    if (!si->shares)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: instance %u: %u shares, NULL", sv->name, k, si->nshares);
    if (!s->policy)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: instance %u has shares, but the server has no policy",
                           sv->name, k);
    if (!(in->shares = calloc(si->nshares, sizeof *in->shares)))
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_add_service");
    in->nshares = si->nshares;
    for (unsigned i = 0; i < si->nshares; i++) {
        char what[32];
        snprintf(what, sizeof what, " share %u", i);
        for (unsigned j = 0; j < i; j++)
            if (!memcmp(&si->shares[j].mask, &si->shares[i].mask, sizeof si->shares[i].mask))
                return tidal__fail(TIDAL_ERR_INVALID, "service %s: instance %u: shares %u and %u have one mask",
                                   sv->name, k, j, i);
        in->shares[i].mask = si->shares[i].mask;
        if (!(in->shares[i].count = tidal_smset_count(&si->shares[i].mask)))
            return tidal__fail(TIDAL_ERR_INVALID, "service %s: instance %u share %u has no SMs", sv->name, k, i);
        if (!(in->shares[i].graph_of = calloc(max_batch + 1, sizeof *in->shares[i].graph_of)))
            return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_add_service");
        int rc =
            resolve_graphs(sv, k, what, si->shares[i].graph, si->shares[i].graphs, max_batch, in->shares[i].graph_of);
        if (rc) return rc;
    }
    return TIDAL_OK;
}

int tidal_server_add_service(tidal_server *s, const tidal_server_service *sv, int *id)
{
    if (!s || !sv) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_add_service: NULL");
    if (!tidal_control_name_ok(sv->name))
        return tidal__fail(TIDAL_ERR_INVALID,
                           "tidal_server_add_service: service name \"%s\": want 1-31 of [A-Za-z0-9_.-]",
                           sv->name ? sv->name : "(null)");
    for (unsigned i = 0; i < s->nsvc; i++)
        if (!strcmp(s->svc[i]->name, sv->name))
            return tidal__fail(TIDAL_ERR_EXISTS, "tidal_server_add_service: service %s exists", sv->name);
    if (sv->cls != TIDAL_SERVICE_LS && sv->cls != TIDAL_SERVICE_BE)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: class %d is not TIDAL_SERVICE_LS or _BE", sv->name, sv->cls);
    if (!sv->instances || sv->ninstances == 0 || sv->ninstances > SERVE_MAX_INSTANCES)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: %u instances (want 1-%u)", sv->name,
                           sv->instances ? sv->ninstances : 0, SERVE_MAX_INSTANCES);
    unsigned max_batch = sv->max_batch ? sv->max_batch : 1;
    if (max_batch > SERVE_MAX_BATCH)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: max_batch %u > %u", sv->name, max_batch, SERVE_MAX_BATCH);
    if (sv->wait < TIDAL_SERVER_WAIT_DEFAULT || sv->wait > TIDAL_SERVER_WAIT_BLOCK)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: wait %d is not a TIDAL_SERVER_WAIT_*", sv->name, sv->wait);
    if (s->policy && tidal_policy_share(s->policy, sv->policy_id, NULL, NULL) != TIDAL_OK)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: the server's policy has no service %d", sv->name,
                           sv->policy_id);
    serve_svc *v = calloc(1, sizeof *v);
    if (!v || !(v->inst = calloc(sv->ninstances, sizeof *v->inst))) {
        free(v);
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_add_service");
    }
    pthread_mutex_init(&v->take, NULL);
    pthread_mutex_init(&v->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* idle()'s deadlines */
    pthread_cond_init(&v->cond, &ca);
    pthread_condattr_destroy(&ca);
    snprintf(v->name, sizeof v->name, "%s", sv->name);
    v->cls = sv->cls;
    v->policy_id = sv->policy_id;
    v->max_batch = max_batch;
    v->ninst = sv->ninstances;
    v->wait = sv->wait ? sv->wait : sv->cls == TIDAL_SERVICE_LS ? TIDAL_SERVER_WAIT_SPIN : TIDAL_SERVER_WAIT_YIELD;
    const tidal_cu *cu = tidal__cu();
    if (v->wait != TIDAL_SERVER_WAIT_BLOCK &&
        (!cu->StreamWriteValue32 || !cu->StreamQuery || !cu->MemHostGetDevicePointer)) {
        tidal__log("server: service %s waits with cuStreamSynchronize: the driver has no stream memory operations",
                   v->name);
        v->wait = TIDAL_SERVER_WAIT_BLOCK;
    }
    int rc = TIDAL_OK;
    for (unsigned k = 0; k < v->ninst && rc == TIDAL_OK; k++) {
        serve_inst *in = &v->inst[k];
        in->server = s, in->svc = v, in->index = k;
        in->stream = (CUstream)sv->instances[k].stream;
        const tidal_server_instance *si = &sv->instances[k];
        if (!(in->graph_of = calloc(max_batch + 1, sizeof *in->graph_of)))
            rc = tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_add_service");
        else
            rc = resolve_graphs(sv, k, "", si->graph, si->graphs, max_batch, in->graph_of);
        if (rc == TIDAL_OK) rc = resolve_shares(s, sv, k, max_batch, in);
    }
    if (rc == TIDAL_OK && s->nsvc == s->cap) {
        unsigned cap = s->cap ? 2 * s->cap : 4;
        serve_svc **g = realloc(s->svc, cap * sizeof *g);
        if (!g)
            rc = tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_add_service");
        else
            s->svc = g, s->cap = cap;
    }
    if (rc != TIDAL_OK) {
        svc_free(v);
        return rc;
    }
    v->id = (int)s->nsvc;
    s->svc[s->nsvc] = v;
    if (id) *id = v->id;
    s->nsvc++;
    return TIDAL_OK;
}

int tidal_server_arrivals(tidal_server *s, int id, const uint64_t *t_ns, size_t n)
{
    if (!s || (n && !t_ns)) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_arrivals: NULL");
    if (id < 0 || (unsigned)id >= s->nsvc)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_arrivals: no service %d", id);
    serve_svc *v = s->svc[id];
    if (v->cls != TIDAL_SERVICE_LS)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_arrivals: %s is a BE service (closed loop)", v->name);
    for (size_t i = 1; i < n; i++)
        if (t_ns[i] < t_ns[i - 1])
            return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_arrivals: %s: arrival %zu (%llu ns) before arrival %zu",
                               v->name, i, (unsigned long long)t_ns[i], i - 1);
    uint64_t *a = n ? malloc(n * sizeof *a) : NULL;
    tidal_server_record *r = n ? calloc(n, sizeof *r) : NULL;
    if (n && (!a || !r)) {
        free(a), free(r);
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_arrivals: %zu arrivals", n);
    }
    if (n) memcpy(a, t_ns, n * sizeof *a);
    free(v->arrivals), free(v->rec);
    v->arrivals = a, v->rec = r, v->narrivals = n;
    return TIDAL_OK;
}

int tidal_server_instantiate(tidal_server *s, void *graph, void **exec)
{
    if (!s || !graph || !exec) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_instantiate: NULL");
    const tidal_cu *cu = tidal__cu();
    if (!cu->GraphInstantiateWithFlags || !cu->GraphExecDestroy)
        return tidal__fail(TIDAL_ERR_NO_DRIVER,
                           "tidal_server_instantiate: the CUDA driver lacks cuGraphInstantiateWithFlags");
    if (tidal__grow((void **)&s->execs, &s->cap_execs, s->nexecs + 1, sizeof *s->execs))
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_server_instantiate");
    CUgraphExec e = NULL;
    tidal__call c = tidal__ctx_enter();
    CUresult r = cu->GraphInstantiateWithFlags(&e, (CUgraph)graph, 0);
    tidal__ctx_leave(c);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuGraphInstantiateWithFlags");
    s->execs[s->nexecs++] = e;
    *exec = e;
    return TIDAL_OK;
}

/* A completion word per instance (pinned, mapped), kept for the server's life; none when
 * every service waits with cuStreamSynchronize. */
static int flags_ready(tidal_server *s, unsigned ninst)
{
    const tidal_cu *cu = tidal__cu();
    int need = 0;
    for (unsigned i = 0; i < s->nsvc; i++) need |= s->svc[i]->wait != TIDAL_SERVER_WAIT_BLOCK;
    if (!need) return TIDAL_OK;
    if (s->pinned_inst < ninst) {
        if (s->pinned) cu->MemFreeHost(s->pinned);
        s->pinned = NULL, s->pinned_inst = 0;
        void *h = NULL;
        CU_TRY(cu->MemAllocHost(&h, (size_t)ninst * SERVE_FLAG_WORDS * sizeof(uint32_t)),
               "cuMemAllocHost(completion words)");
        s->pinned = h;
        CU_TRY(cu->MemHostGetDevicePointer(&s->pinned_dev, h, 0), "cuMemHostGetDevicePointer(completion words)");
        s->pinned_inst = ninst;
    }
    memset(s->pinned, 0, (size_t)s->pinned_inst * SERVE_FLAG_WORDS * sizeof(uint32_t));
    unsigned k = 0;
    for (unsigned i = 0; i < s->nsvc; i++)
        for (unsigned j = 0; j < s->svc[i]->ninst; j++, k++) {
            serve_inst *in = &s->svc[i]->inst[j];
            in->flag = (_Atomic uint32_t *)(s->pinned + (size_t)k * SERVE_FLAG_WORDS);
            in->flag_dev = s->pinned_dev + (CUdeviceptr)k * SERVE_FLAG_WORDS * sizeof(uint32_t);
            in->seq = 0;
        }
    return TIDAL_OK;
}

/* The run's records into s->out: each LS service's served requests in schedule order, then
 * every BE instance's. */
static int collect(tidal_server *s)
{
    size_t n = 0;
    for (unsigned i = 0; i < s->nsvc; i++) {
        serve_svc *v = s->svc[i];
        for (size_t k = 0; k < v->narrivals; k++) n += v->rec[k].batch != 0;
        for (unsigned j = 0; j < v->ninst; j++) n += v->inst[j].nbe;
    }
    free(s->out);
    s->nout = 0;
    if (!(s->out = malloc((n ? n : 1) * sizeof *s->out))) return tidal__fail(TIDAL_ERR_NO_MEMORY, "server records");
    for (unsigned i = 0; i < s->nsvc; i++) {
        serve_svc *v = s->svc[i];
        for (size_t k = 0; k < v->narrivals; k++)
            if (v->rec[k].batch) s->out[s->nout++] = v->rec[k];
        for (unsigned j = 0; j < v->ninst; j++) {
            if (!v->inst[j].nbe) continue; /* no array: memcpy's NULL is undefined even for 0 bytes */
            memcpy(s->out + s->nout, v->inst[j].be, v->inst[j].nbe * sizeof *s->out);
            s->nout += v->inst[j].nbe;
        }
    }
    return TIDAL_OK;
}

/* Everything a run starts from: empty queues and records, zero counts and words. */
static int run_reset(tidal_server *s)
{
    unsigned ninst = 0;
    free(s->out);
    s->out = NULL, s->nout = 0;
    for (unsigned i = 0; i < s->nsvc; i++) {
        serve_svc *v = s->svc[i];
        v->next = 0;
        atomic_store(&v->tail, 0);
        atomic_store(&v->head, 0);
        atomic_store(&v->requests, 0);
        atomic_store(&v->batches, 0);
        if (v->narrivals) memset(v->rec, 0, v->narrivals * sizeof *v->rec);
        for (size_t k = 0; k < v->narrivals; k++) {
            v->rec[k].service = (int)i;
            v->rec[k].request = k;
        }
        for (unsigned j = 0; j < v->ninst; j++) v->inst[j].nbe = 0, v->inst[j].started = 0;
        ninst += v->ninst;
    }
    atomic_store(&s->done, 0);
    atomic_store(&s->failed, 0);
    s->status = 0;
    s->err[0] = '\0';
    return flags_ready(s, ninst);
}

int tidal_server_run(tidal_server *s, uint64_t duration_ns)
{
    if (!s || !duration_ns) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_run: NULL server or zero duration");
    if (!s->nsvc) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_run: no services");
    if (!tidal__ready()) return tidal__fail(TIDAL_ERR_NOT_INIT, "tidal_server_run after tidal_shutdown");
    tidal__call c = tidal__ctx_enter();
    int rc = run_reset(s);
    tidal__ctx_leave(c);
    if (rc) return rc;
    s->duration = duration_ns;
    /* workers first (BE starts at once, LS waits for its queue), then the clock's origin
       and the dispatcher: a worker reads t0 only for a request the dispatcher queued */
    for (unsigned i = 0; i < s->nsvc && !stopping(s); i++) {
        serve_svc *v = s->svc[i];
        for (unsigned j = 0; j < v->ninst && !stopping(s); j++) {
            serve_inst *in = &v->inst[j];
            int e = pthread_create(&in->thread, NULL, v->cls == TIDAL_SERVICE_LS ? ls_worker : be_worker, in);
            if (e) run_fail(s, tidal__fail(TIDAL_ERR_NO_MEMORY, "pthread_create: %s", strerror(e)));
            in->started = !e;
        }
    }
    s->t0 = now(s);
    pthread_t disp;
    int dispatching = !stopping(s);
    if (dispatching) {
        int e = pthread_create(&disp, NULL, dispatcher, s);
        if (e) run_fail(s, tidal__fail(TIDAL_ERR_NO_MEMORY, "pthread_create: %s", strerror(e)));
        dispatching = !e;
    }
    if (dispatching) {
        pthread_join(disp, NULL);
    } else {
        atomic_store(&s->done, 1);
        wake_all(s);
    }
    for (unsigned i = 0; i < s->nsvc; i++)
        for (unsigned j = 0; j < s->svc[i]->ninst; j++)
            if (s->svc[i]->inst[j].started) pthread_join(s->svc[i]->inst[j].thread, NULL);
    /* a worker that failed after its launch left work on its stream */
    c = tidal__ctx_enter();
    for (unsigned i = 0; i < s->nsvc; i++)
        for (unsigned j = 0; j < s->svc[i]->ninst; j++) {
            CUresult r = tidal__cu()->StreamSynchronize(s->svc[i]->inst[j].stream);
            if (r != CUDA_SUCCESS && !s->status) cuda_fail(&s->svc[i]->inst[j], r, "cuStreamSynchronize");
        }
    tidal__ctx_leave(c);
    rc = collect(s);
    if (s->status) return tidal__fail(s->status, "%s", s->err);
    return rc;
}

int tidal_server_records(tidal_server *s, const tidal_server_record **out, size_t *n)
{
    if (!s || !out || !n) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_records: NULL");
    *out = s->out;
    *n = s->nout;
    return TIDAL_OK;
}

int tidal_server_counts_get(tidal_server *s, int id, tidal_server_counts *out)
{
    if (!s || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_counts_get: NULL");
    if (id < 0 || (unsigned)id >= s->nsvc)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_counts_get: no service %d", id);
    serve_svc *v = s->svc[id];
    out->dispatched = v->next;
    out->requests = atomic_load(&v->requests);
    out->batches = atomic_load(&v->batches);
    return TIDAL_OK;
}

int tidal_server_destroy(tidal_server *s)
{
    if (!s) return tidal__fail(TIDAL_ERR_INVALID, "tidal_server_destroy: NULL");
    if (tidal__ready() && (s->nexecs || s->pinned)) {
        tidal__call c = tidal__ctx_enter();
        for (unsigned i = 0; i < s->nexecs; i++) tidal__cu()->GraphExecDestroy(s->execs[i]);
        if (s->pinned) tidal__cu()->MemFreeHost(s->pinned);
        tidal__ctx_leave(c);
    }
    for (unsigned i = 0; i < s->nsvc; i++) svc_free(s->svc[i]);
    free(s->svc);
    free(s->execs);
    free(s->out);
    pthread_mutex_destroy(&s->err_lock);
    free(s);
    return TIDAL_OK;
}
