/* test_runtime_server.c — the serving engine (tidal_server.h) against the fake driver table
 * and a fake clock (no GPU): arrivals queued in order and on time, batches up to the
 * policy's size with the graph of each size, the policy's begin and end in order with the
 * measured latencies, BE's closed loop, failures that stop the run (a launch, a stream that
 * never finishes), bad arguments.
 *
 * The fake clock advances 100 ns at every read and by the whole sleep at every sleep; a
 * fake graph "runs" by advancing it by its duration at launch, and the stream writes the
 * completion word at once. The threads race on the clock, so the checks hold whichever
 * runs first: bounds, not exact batches, where the order of threads decides. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime_internal.h"
#include "tidal.h"
#include "tidal_policy.h"
#include "tidal_server.h"

#include "fake_driver.h"

/* ------------------------------------------------------------------ the fake clock and GPU */

#define STEP_NS 100
#define US 1000ull
#define MS 1000000ull

static _Atomic uint64_t clock_ns;
static uint64_t fake_clock(void *ctx)
{
    (void)ctx;
    return atomic_fetch_add(&clock_ns, STEP_NS) + STEP_NS;
}
/* a quarter of it in real time too, so that the other threads run while fake time passes */
static void fake_sleep(void *ctx, uint64_t ns)
{
    (void)ctx;
    atomic_fetch_add(&clock_ns, ns);
    usleep((useconds_t)(ns / 4000 + 1));
}
/* a sleep in real time only: fake time then passes only as graphs run (and clocks are read) */
static void real_sleep(void *ctx, uint64_t ns)
{
    (void)ctx;
    usleep((useconds_t)(ns / 4000 + 1));
}
static uint64_t policy_clock(void *ctx)
{
    (void)ctx;
    return atomic_load(&clock_ns) / 1000;
}

typedef struct fake_graph {
    uint64_t dur_ns;
    int fail_at;      /* this launch (1-based) and the later ones fail; 0: never */
    int hang;         /* its stream never writes the completion word and then reports a failure */
    unsigned real_us; /* the launch also takes this long in real time */
    atomic_int launches;
} fake_graph;

static atomic_int hung;
static atomic_int instantiated, exec_destroyed;

static CUresult f_graphlaunch(CUgraphExec e, CUstream s)
{
    (void)s;
    fake_graph *g = (fake_graph *)e;
    int n = atomic_fetch_add(&g->launches, 1) + 1;
    if (g->fail_at && n >= g->fail_at) return CUDA_ERROR_INVALID_VALUE;
    if (g->hang) atomic_store(&hung, 1);
    atomic_fetch_add(&clock_ns, g->dur_ns);
    if (g->real_us) usleep(g->real_us);
    return CUDA_SUCCESS;
}
static CUresult f_writevalue(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned fl)
{
    (void)s;
    assert_int_equal(fl, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (!atomic_load(&hung)) atomic_store((_Atomic uint32_t *)a, v);
    return CUDA_SUCCESS;
}
static CUresult f_streamquery(CUstream s)
{
    (void)s;
    return atomic_load(&hung) ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS;
}
static CUresult f_instantiate(CUgraphExec *e, CUgraph g, unsigned long long fl)
{
    (void)fl;
    *e = (CUgraphExec)g; /* the fake graph is its own exec */
    atomic_fetch_add(&instantiated, 1);
    return CUDA_SUCCESS;
}
static CUresult f_execdestroy(CUgraphExec e)
{
    (void)e;
    atomic_fetch_add(&exec_destroyed, 1);
    return CUDA_SUCCESS;
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    unsetenv("TIDAL_PARTITION");
    setenv("TIDAL_NO_DAEMON", "1", 1);
    fake.GraphLaunch = f_graphlaunch;
    fake.StreamWriteValue32 = f_writevalue;
    fake.StreamQuery = f_streamquery;
    fake.GraphInstantiateWithFlags = f_instantiate;
    fake.GraphExecDestroy = f_execdestroy;
    atomic_store(&clock_ns, 1000 * MS);
    atomic_store(&hung, 0);
    atomic_store(&instantiated, 0);
    atomic_store(&exec_destroyed, 0);
    tidal__set_driver(&fake);
    assert_int_equal(tidal_init(0), TIDAL_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tidal_shutdown();
    tidal__set_driver(NULL);
    return 0;
}

static tidal_server *server(tidal_policy *pol)
{
    tidal_server_config c = {.now_ns = fake_clock, .sleep_ns = fake_sleep};
    tidal_server *s = NULL;
    assert_int_equal(tidal_server_create(pol, &c, &s), TIDAL_OK);
    return s;
}

/* A server of pol refuses sv with TIDAL_ERR_INVALID and a message that contains why. */
static void refused(tidal_policy *pol, const tidal_server_service *sv, const char *why)
{
    tidal_server *s = server(pol);
    assert_int_equal(tidal_server_add_service(s, sv, NULL), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), why));
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
}

static int add(tidal_server *s, const char *name, int cls, int policy_id, unsigned max_batch, int wait,
               const tidal_server_instance *in, unsigned n)
{
    tidal_server_service sv = {.name = name,
                               .cls = cls,
                               .policy_id = policy_id,
                               .max_batch = max_batch,
                               .wait = wait,
                               .instances = in,
                               .ninstances = n};
    int id = -1;
    assert_int_equal(tidal_server_add_service(s, &sv, &id), TIDAL_OK);
    return id;
}

#define STREAM(k) ((void *)(uintptr_t)(0x7000 + (k)))

/* Service id gets arrivals t[0..n), the server runs until `until`; its records in *r,
 * their count returned. */
static size_t serve_arrivals(tidal_server *s, int id, const uint64_t *t, size_t n, uint64_t until,
                             const tidal_server_record **r)
{
    size_t nr = 0;
    assert_int_equal(tidal_server_arrivals(s, id, t, n), TIDAL_OK);
    assert_int_equal(tidal_server_run(s, until), TIDAL_OK);
    assert_int_equal(tidal_server_records(s, r, &nr), TIDAL_OK);
    return nr;
}

/* ------------------------------------------------------------------ arrivals */

static void test_arrivals_in_order_and_on_time(void **state)
{
    (void)state;
    /* the graph takes no fake time: only the dispatcher moves the clock (a worker that ran
       a backlog of graphs while the dispatcher was off the CPU would make it late) */
    fake_graph g = {.dur_ns = 0};
    tidal_server_instance in = {STREAM(0), &g, NULL, NULL, 0};
    tidal_server *s = server(NULL);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, 0, 1, TIDAL_SERVER_WAIT_BLOCK, &in, 1);
    /* 40 arrivals 200 us apart, a burst of 3 at one instant, and two after the run's end */
    uint64_t t[48];
    size_t n = 0;
    for (int i = 0; i < 40; i++) t[n++] = 300 * US + (uint64_t)i * 200 * US;
    for (int i = 0; i < 3; i++) t[n++] = 9 * MS;
    t[n++] = 12 * MS;
    t[n++] = 12 * MS + 1;
    const tidal_server_record *r;
    size_t nr = serve_arrivals(s, ls, t, n, 12 * MS, &r);
    assert_int_equal(nr, 43); /* the two at and after the end are not served */
    tidal_server_counts c;
    assert_int_equal(tidal_server_counts_get(s, ls, &c), TIDAL_OK);
    assert_int_equal(c.dispatched, 43);
    assert_int_equal(c.requests, 43);
    assert_int_equal(c.batches, 43);
    uint64_t t0 = r[0].arrival_ns - t[0];
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(r[i].service, ls);
        assert_int_equal(r[i].request, i); /* schedule order */
        assert_int_equal(r[i].arrival_ns, t0 + t[i]);
        assert_int_equal(r[i].batch, 1);
        assert_int_equal(r[i].sms, 0);
        /* queued at its time: never before, at most a few clock reads after */
        assert_true(r[i].queued_ns >= r[i].arrival_ns);
        assert_true(r[i].queued_ns - r[i].arrival_ns <= 10 * US);
        assert_true(r[i].start_ns >= r[i].queued_ns);
        assert_true(r[i].end_ns > r[i].start_ns);
        if (i) assert_true(r[i].queued_ns >= r[i - 1].queued_ns);
        if (i) assert_true(r[i].start_ns >= r[i - 1].end_ns); /* one instance: one at a time */
    }
    assert_int_equal(atomic_load(&g.launches), 43);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
}

/* ------------------------------------------------------------------ batches */

/* GSLICE at a high rate: batches of up to 4 (its max_batch), each size on its graph: 1 on
 * g1, 2-4 on g4 (no graph of 2 or 3: the next larger one). The latencies it was given are
 * what the trace's tuning reports. */
static int no_apply(void *ctx, int service, const tidal_smset *mask)
{
    (void)ctx, (void)service, (void)mask;
    return TIDAL_OK;
}

static void test_batches_up_to_the_policys_size(void **state)
{
    (void)state;
    char trace[] = "/tmp/tidal-server-trace-XXXXXX";
    int fd = mkstemp(trace);
    assert_true(fd >= 0);
    close(fd);
    tidal_policy_config pc = {
        .kind = TIDAL_POLICY_GSLICE, .sms = 132, .now_us = policy_clock, .apply = no_apply, .trace_path = trace};
    tidal_policy *pol;
    assert_int_equal(tidal_policy_create(&pc, &pol), TIDAL_OK);
    tidal_service_config ps = {
        .name = "ls", .cls = TIDAL_SERVICE_LS, .slo_us = 1e6, .max_batch = 4, .max_queue_us = 2000};
    int pid;
    assert_int_equal(tidal_policy_add_service(pol, &ps, &pid), TIDAL_OK);

    fake_graph g1 = {.dur_ns = 50 * US}, g4 = {.dur_ns = 80 * US};
    void *table[4] = {&g1, NULL, NULL, &g4};
    tidal_server_instance in = {STREAM(0), NULL, table, NULL, 0};
    tidal_server *s = server(pol);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, pid, 4, TIDAL_SERVER_WAIT_YIELD, &in, 1);
    /* one request alone (batch 1 measured), then groups of 6 at one instant, 1 ms apart */
    uint64_t t[1 + 6 * 12];
    size_t n = 0;
    t[n++] = 100 * US;
    for (int k = 0; k < 12; k++)
        for (int i = 0; i < 6; i++) t[n++] = (uint64_t)(k + 1) * MS;
    const tidal_server_record *r;
    size_t nr = serve_arrivals(s, ls, t, n, 20 * MS, &r);
    assert_int_equal(nr, n);
    unsigned sizes[5] = {0};
    for (size_t i = 0; i < nr;) { /* a batch's requests are consecutive, with one start */
        unsigned b = r[i].batch;
        assert_true(b >= 1 && b <= 4);
        for (unsigned k = 0; k < b; k++) {
            assert_int_equal(r[i + k].batch, b);
            assert_int_equal(r[i + k].start_ns, r[i].start_ns);
            assert_true(r[i + k].start_ns >= r[i + k].queued_ns);
        }
        assert_true(r[i].end_ns - r[i].start_ns >= (b == 1 ? g1.dur_ns : g4.dur_ns));
        sizes[b]++;
        i += b;
    }
    assert_int_equal(r[0].batch, 1); /* nothing measured yet: GSLICE starts at 1 */
    assert_true(sizes[4] >= 8);
    assert_int_equal(atomic_load(&g1.launches), sizes[1]);
    assert_int_equal(atomic_load(&g4.launches), sizes[2] + sizes[3] + sizes[4]);
    tidal_server_counts c;
    assert_int_equal(tidal_server_counts_get(s, ls, &c), TIDAL_OK);
    assert_int_equal(c.batches, sizes[1] + sizes[2] + sizes[3] + sizes[4]);
    /* every batch began and ended once (the policy counts begins), with its latency in us:
       GSLICE's tuning (every 8 ends) reports the window's worst */
    char st[4096];
    assert_true(tidal_policy_state(pol, st, sizeof st) > 0);
    char want[64];
    snprintf(want, sizeof want, "\"requests\":%llu", (unsigned long long)c.batches);
    assert_non_null(strstr(st, want));
    FILE *f = fopen(trace, "r");
    assert_non_null(f);
    char line[1024];
    int tunes = 0;
    while (fgets(line, sizeof line, f)) {
        const char *w = strstr(line, "\"event\":\"tune\"") ? strstr(line, "worst ") : NULL;
        if (!w) continue;
        double worst = 0;
        assert_int_equal(sscanf(w, "worst %lf us", &worst), 1);
        assert_true(worst >= 50 && worst < 5000); /* us: at least the graph's 50 */
        tunes++;
    }
    fclose(f);
    unlink(trace);
    assert_true(tunes >= 2);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);
}

/* GSLICE with a tight SLO: pairs of requests 1 ms apart, too slow to wait for a second
 * request within the 100 us queueing budget, but a pair queued together is taken as one
 * batch of 2 (60 us, inside the 100 us budget) instead of two batches one after the other. */
static void test_policy_batches_what_is_queued(void **state)
{
    (void)state;
    tidal_policy_config pc = {.kind = TIDAL_POLICY_GSLICE, .sms = 132, .now_us = policy_clock, .apply = no_apply};
    tidal_policy *pol;
    assert_int_equal(tidal_policy_create(&pc, &pol), TIDAL_OK);
    tidal_service_config ps = {.name = "ls", .cls = TIDAL_SERVICE_LS, .slo_us = 200, .max_batch = 2};
    int pid;
    assert_int_equal(tidal_policy_add_service(pol, &ps, &pid), TIDAL_OK);
    assert_int_equal(tidal_policy_batch_profile(pol, pid, 1, 50), TIDAL_OK);
    assert_int_equal(tidal_policy_batch_profile(pol, pid, 2, 60), TIDAL_OK);
    unsigned b;
    uint64_t wait;
    assert_int_equal(tidal_policy_batch(pol, pid, 2000, 1, &b, &wait), TIDAL_OK);
    assert_int_equal(b, 1); /* the rate alone: a second request would come 500 us later */

    fake_graph g1 = {.dur_ns = 50 * US}, g2 = {.dur_ns = 60 * US};
    void *table[2] = {&g1, &g2};
    tidal_server_instance in = {STREAM(0), NULL, table, NULL, 0};
    tidal_server *s = server(pol);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, pid, 2, TIDAL_SERVER_WAIT_YIELD, &in, 1);
    uint64_t t[24];
    for (int k = 0; k < 24; k++) t[k] = (uint64_t)(k / 2 + 1) * MS;
    const tidal_server_record *r;
    size_t nr = serve_arrivals(s, ls, t, 24, 20 * MS, &r);
    assert_int_equal(nr, 24);
    unsigned pairs = 0;
    for (size_t i = 0; i < nr; i++) pairs += r[i].batch == 2;
    /* the worker may see a pair's first request before the dispatcher queues the second: most
       pairs, not all, are taken together */
    assert_true(pairs / 2 >= 6);
    assert_int_equal(atomic_load(&g2.launches), pairs / 2);
    assert_int_equal(atomic_load(&g1.launches), 24 - pairs);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);
}

/* Without a policy: what is queued, up to max_batch, without waiting. */
static void test_batches_without_policy(void **state)
{
    (void)state;
    fake_graph g = {.dur_ns = 500 * US};
    tidal_server_instance in = {STREAM(0), &g, NULL, NULL, 0};
    tidal_server *s = server(NULL);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, 0, 3, TIDAL_SERVER_WAIT_SPIN, &in, 1);
    uint64_t t[8] = {100 * US, 200 * US, 210 * US, 220 * US, 230 * US, 240 * US, 5 * MS, 5 * MS};
    const tidal_server_record *r;
    size_t nr = serve_arrivals(s, ls, t, 8, 10 * MS, &r);
    assert_int_equal(nr, 8);
    unsigned most = 0;
    for (size_t i = 0; i < nr; i += r[i].batch) {
        assert_true(r[i].batch >= 1 && r[i].batch <= 3);
        if (r[i].batch > most) most = r[i].batch;
    }
    assert_int_equal(most, 3); /* five queued behind the first */
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
}

/* ------------------------------------------------------------------ the policy's calls */

/* SGDRC, LS with a demand of 66 next to a BE service of the policy: each LS batch's begin
 * takes 0-65 from BE and its end gives them back, in that order, one batch at a time. */
typedef struct moves {
    atomic_uint n;
    struct {
        int service;
        unsigned sms;
    } m[256];
} moves;

static int record_apply(void *ctx, int service, const tidal_smset *mask)
{
    moves *mv = ctx;
    unsigned i = atomic_fetch_add(&mv->n, 1);
    if (i < 256) mv->m[i].service = service, mv->m[i].sms = tidal_smset_count(mask);
    return TIDAL_OK;
}

/* SGDRC over an apply hook: LS "ls" (demand 66 SMs) and BE "be", ids in *pl, *pb. */
static tidal_policy *sgdrc_ls_be(int (*apply)(void *, int, const tidal_smset *), void *ctx, int *pl, int *pb)
{
    tidal_policy_config pc = {
        .kind = TIDAL_POLICY_SGDRC, .sms = 132, .now_us = policy_clock, .apply = apply, .ctx = ctx};
    tidal_policy *pol;
    assert_int_equal(tidal_policy_create(&pc, &pol), TIDAL_OK);
    tidal_service_config pls = {.name = "ls", .cls = TIDAL_SERVICE_LS, .slo_us = 5000, .demand_sms = 66};
    tidal_service_config pbe = {.name = "be", .cls = TIDAL_SERVICE_BE};
    assert_int_equal(tidal_policy_add_service(pol, &pls, pl), TIDAL_OK);
    assert_int_equal(tidal_policy_add_service(pol, &pbe, pb), TIDAL_OK);
    return pol;
}

static void test_begin_end_in_order(void **state)
{
    (void)state;
    static moves mv;
    memset(&mv, 0, sizeof mv);
    int pl, pb;
    tidal_policy *pol = sgdrc_ls_be(record_apply, &mv, &pl, &pb);
    unsigned after_add = atomic_load(&mv.n);

    fake_graph g = {.dur_ns = 100 * US};
    tidal_server_instance in = {STREAM(0), &g, NULL, NULL, 0};
    tidal_server *s = server(pol);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, pl, 1, TIDAL_SERVER_WAIT_DEFAULT, &in, 1);
    uint64_t t[20];
    for (int i = 0; i < 20; i++) t[i] = 200 * US + (uint64_t)i * 400 * US;
    const tidal_server_record *r;
    size_t nr = serve_arrivals(s, ls, t, 20, 10 * MS, &r);
    assert_int_equal(nr, 20);
    for (size_t i = 0; i < nr; i++) assert_int_equal(r[i].sms, 66); /* its share once begun */
    assert_int_equal(atomic_load(&mv.n) - after_add, 2 * 20);
    for (unsigned i = after_add; i < atomic_load(&mv.n); i += 2) {
        assert_int_equal(mv.m[i].service, pb);
        assert_int_equal(mv.m[i].sms, 132 - 66); /* begin: BE loses LS's 66 */
        assert_int_equal(mv.m[i + 1].service, pb);
        assert_int_equal(mv.m[i + 1].sms, 132); /* end: all of them back */
    }
    char st[4096];
    assert_true(tidal_policy_state(pol, st, sizeof st) > 0);
    assert_non_null(strstr(st, "\"name\":\"ls\",\"class\":\"ls\",\"mask\":\"0-65\",\"sms\":66,\"inflight\":0,"
                               "\"requests\":20"));
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);
}

/* LS holds its SMs for 5 ms, leaves them for 5 ms, ... (real time), from its own thread,
 * until *stop: what an LS worker's begin and end do, without the race of two workers. */
typedef struct toggler {
    tidal_policy *pol;
    int ls;
    atomic_int stop;
} toggler;

static void *toggle_ls(void *arg)
{
    toggler *t = arg;
    while (!atomic_load(&t->stop)) {
        assert_int_equal(tidal_policy_request_begin(t->pol, t->ls, 0), TIDAL_OK);
        usleep(5000);
        assert_int_equal(tidal_policy_request_end(t->pol, t->ls, 100.0, 1), TIDAL_OK);
        usleep(5000);
    }
    return NULL;
}

/* A BE service of instance bi under pol (SGDRC: LS pl, BE pb) for 20 ms of fake time, which
 * passes only as BE's graphs run (the dispatcher's ticks sleep in real time), while
 * toggle_ls moves LS between holding 0-65 and idle; *be: BE's id. The caller reads the
 * records and destroys the server. */
static tidal_server *serve_be_while_ls_toggles(tidal_policy *pol, int pl, int pb, const tidal_server_instance *bi,
                                               int *be)
{
    tidal_server_config c = {.now_ns = fake_clock, .sleep_ns = real_sleep};
    tidal_server *s = NULL;
    assert_int_equal(tidal_server_create(pol, &c, &s), TIDAL_OK);
    *be = add(s, "be", TIDAL_SERVICE_BE, pb, 1, TIDAL_SERVER_WAIT_YIELD, bi, 1);
    toggler tg = {.pol = pol, .ls = pl};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, toggle_ls, &tg), 0);
    assert_int_equal(tidal_server_run(s, 20 * MS), TIDAL_OK); /* 400 batches of 50 us: 80 ms or more */
    atomic_store(&tg.stop, 1);
    pthread_join(th, NULL);
    return s;
}

/* A BE instance with a graph for the share it has while LS holds its SMs (66-131) and its
 * own graph listed as the share of all 132: the batches begun with each mask run its
 * graph, and the records say which. Without the second share every batch would run the
 * first (it lies inside 0-131 too: test_share_ladder). */
static void test_share_graphs(void **state)
{
    (void)state;
    int pl, pb;
    tidal_policy *pol = sgdrc_ls_be(no_apply, NULL, &pl, &pb);
    /* a BE batch takes 0.2 ms of real time: dozens of them in each of LS's phases */
    fake_graph gall = {.dur_ns = 50 * US, .real_us = 200}, grest = {.dur_ns = 50 * US, .real_us = 200};
    tidal_server_share both[2], sh;
    memset(both, 0, sizeof both);
    assert_int_equal(tidal_smset_parse("66-131", &both[0].mask, NULL, NULL), TIDAL_OK);
    assert_int_equal(tidal_smset_parse("0-131", &both[1].mask, NULL, NULL), TIDAL_OK);
    both[0].graph = &grest, both[1].graph = &gall;
    sh = both[0];
    tidal_server_instance bi = {STREAM(1), &gall, NULL, both, 2};
    int be;
    tidal_server *s = serve_be_while_ls_toggles(pol, pl, pb, &bi, &be);
    const tidal_server_record *r;
    size_t nr;
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK);
    unsigned on_share = 0, on_own = 0;
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(r[i].service, be);
        if (r[i].share == 1) {
            assert_int_equal(r[i].sms, 66); /* begun while LS held 0-65 */
            on_share++;
        } else {
            assert_int_equal(r[i].share, 2);
            assert_int_equal(r[i].sms, 132);
            on_own++;
        }
    }
    assert_true(on_share > 0 && on_own > 0);
    assert_int_equal(atomic_load(&grest.launches), on_share);
    assert_int_equal(atomic_load(&gall.launches), on_own);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);

    /* refused: two shares of one mask, shares without a policy, a share without a graph */
    tidal_server_share two[2] = {sh, sh};
    tidal_server_instance bad = {STREAM(1), &gall, NULL, two, 2};
    tidal_server_service sv = {
        .name = "be", .cls = TIDAL_SERVICE_BE, .policy_id = pb, .instances = &bad, .ninstances = 1};
    refused(pol, &sv, "shares 0 and 1 have one mask");
    two[1].graph = NULL;
    assert_int_equal(tidal_smset_parse("100-131", &two[1].mask, NULL, NULL), TIDAL_OK);
    refused(pol, &sv, "instance 0 share 1 has no graph");
    bad.nshares = 1;
    refused(NULL, &sv, "has shares, but the server has no policy");
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);
}

/* A ladder of shares: each batch runs the share with the most SMs inside the mask it began
 * with (66-131 while LS holds 0-65: 100-131 fits too but is smaller; all 132: 50-131), never
 * one with an SM outside it. */
static void test_share_ladder(void **state)
{
    (void)state;
    int pl, pb;
    tidal_policy *pol = sgdrc_ls_be(no_apply, NULL, &pl, &pb);
    fake_graph gall = {.dur_ns = 50 * US, .real_us = 200}, g[3];
    const char *sets[3] = {"100-131", "66-131", "50-131"};
    tidal_server_share sh[3];
    memset(sh, 0, sizeof sh);
    for (int i = 0; i < 3; i++) {
        memset(&g[i], 0, sizeof g[i]);
        g[i].dur_ns = 50 * US, g[i].real_us = 200;
        assert_int_equal(tidal_smset_parse(sets[i], &sh[i].mask, NULL, NULL), TIDAL_OK);
        sh[i].graph = &g[i];
    }
    tidal_server_instance bi = {STREAM(1), &gall, NULL, sh, 3};
    int be;
    tidal_server *s = serve_be_while_ls_toggles(pol, pl, pb, &bi, &be);
    const tidal_server_record *r;
    size_t nr;
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK);
    unsigned on[4] = {0};
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(r[i].service, be);
        assert_int_equal(r[i].share, r[i].sms == 66 ? 2u : 3u);
        on[r[i].share]++;
    }
    assert_true(on[2] > 0 && on[3] > 0);
    assert_int_equal(atomic_load(&g[0].launches), 0);
    assert_int_equal(atomic_load(&g[1].launches), on[2]);
    assert_int_equal(atomic_load(&g[2].launches), on[3]);
    assert_int_equal(atomic_load(&gall.launches), 0);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);

    /* refused: a share of no SMs */
    memset(&sh[0].mask, 0, sizeof sh[0].mask);
    tidal_server_service sv = {
        .name = "be", .cls = TIDAL_SERVICE_BE, .policy_id = pb, .instances = &bi, .ninstances = 1};
    refused(pol, &sv, "instance 0 share 0 has no SMs");
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);
}

/* ------------------------------------------------------------------ BE */

static void test_be_closed_loop(void **state)
{
    (void)state;
    /* time passes as BE's graphs run: 5 ms is 50 of them, each 200 us in real time */
    fake_graph g0 = {.dur_ns = 100 * US, .real_us = 200}, g1 = {.dur_ns = 100 * US, .real_us = 200};
    tidal_server_instance in[2] = {{STREAM(0), &g0, NULL, NULL, 0}, {STREAM(1), &g1, NULL, NULL, 0}};
    tidal_server_config cfg = {.now_ns = fake_clock, .sleep_ns = real_sleep};
    tidal_server *s = NULL;
    assert_int_equal(tidal_server_create(NULL, &cfg, &s), TIDAL_OK);
    int be = add(s, "be", TIDAL_SERVICE_BE, 0, 3, TIDAL_SERVER_WAIT_DEFAULT, in, 2);
    uint64_t t = 0;
    assert_int_equal(tidal_server_arrivals(s, be, &t, 1), TIDAL_ERR_INVALID); /* closed loop */
    assert_non_null(strstr(tidal_last_error(), "BE service"));
    assert_int_equal(tidal_server_run(s, 5 * MS), TIDAL_OK);
    const tidal_server_record *r;
    size_t nr;
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK);
    tidal_server_counts c;
    assert_int_equal(tidal_server_counts_get(s, be, &c), TIDAL_OK);
    assert_int_equal(c.dispatched, 0);
    assert_true(c.batches >= 1); /* about 50; how many depends on when the threads ran */
    assert_int_equal(c.requests, 3 * c.batches);
    assert_int_equal(nr, c.requests);
    assert_int_equal(atomic_load(&g0.launches) + atomic_load(&g1.launches), c.batches);
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(r[i].service, be);
        assert_true(r[i].instance < 2);
        assert_int_equal(r[i].batch, 3);
        assert_int_equal(r[i].arrival_ns, r[i].start_ns);
        assert_true(r[i].end_ns - r[i].start_ns >= 100 * US);
    }

    /* again: fresh counts and records */
    assert_int_equal(tidal_server_run(s, 1 * MS), TIDAL_OK);
    tidal_server_counts c2;
    assert_int_equal(tidal_server_counts_get(s, be, &c2), TIDAL_OK);
    assert_int_equal(c2.requests, 3 * c2.batches);
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK);
    assert_int_equal(nr, c2.requests);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
}

/* ------------------------------------------------------------------ failures */

/* BE's fifth launch fails while LS serves: the run stops early with the driver's error and
 * which launch it was; what completed is recorded. */
static void test_launch_failure_stops_the_run(void **state)
{
    (void)state;
    fake_graph gl = {.dur_ns = 30 * US}, gb = {.dur_ns = 100 * US, .fail_at = 5};
    tidal_server_instance li[2] = {{STREAM(0), &gl, NULL, NULL, 0}, {STREAM(1), &gl, NULL, NULL, 0}};
    tidal_server_instance bi = {STREAM(2), &gb, NULL, NULL, 0};
    tidal_server *s = server(NULL);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, 0, 1, TIDAL_SERVER_WAIT_YIELD, li, 2);
    int be = add(s, "be", TIDAL_SERVICE_BE, 0, 2, TIDAL_SERVER_WAIT_YIELD, &bi, 1);
    static uint64_t t[1000];
    for (int i = 0; i < 1000; i++) t[i] = 50 * US + (uint64_t)i * 100 * US;
    assert_int_equal(tidal_server_arrivals(s, ls, t, 1000), TIDAL_OK);
    assert_int_equal(tidal_server_run(s, 200 * MS), TIDAL_ERR_CUDA);
    assert_non_null(strstr(tidal_last_error(), "cuGraphLaunch (service be, instance 0): CUDA_ERROR_X"));
    tidal_server_counts c;
    assert_int_equal(tidal_server_counts_get(s, ls, &c), TIDAL_OK);
    assert_true(c.dispatched < 1000); /* stopped early */
    assert_int_equal(tidal_server_counts_get(s, be, &c), TIDAL_OK);
    assert_int_equal(c.batches, 4);
    const tidal_server_record *r;
    size_t nr;
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK);
    size_t nbe = 0;
    for (size_t i = 0; i < nr; i++) {
        assert_true(r[i].end_ns >= r[i].start_ns && r[i].batch >= 1);
        nbe += r[i].service == be;
    }
    assert_int_equal(nbe, 8);
    /* the LS graph fails at once: the same, from the LS worker */
    gb.fail_at = 0;
    gl.fail_at = 1;
    atomic_store(&gl.launches, 0);
    assert_int_equal(tidal_server_run(s, 200 * MS), TIDAL_ERR_CUDA);
    assert_non_null(strstr(tidal_last_error(), "cuGraphLaunch (service ls, instance "));
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
}

/* A stream whose context failed never writes the completion word: the spinning worker
 * asks the stream, stops the run with its error, and nothing hangs. */
static void test_failed_stream_does_not_hang(void **state)
{
    (void)state;
    fake_graph g = {.dur_ns = 10 * US, .hang = 1};
    tidal_server_instance in = {STREAM(0), &g, NULL, NULL, 0};
    tidal_server *s = server(NULL);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, 0, 1, TIDAL_SERVER_WAIT_SPIN, &in, 1);
    uint64_t t[3] = {10 * US, 20 * US, 30 * US};
    assert_int_equal(tidal_server_arrivals(s, ls, t, 3), TIDAL_OK);
    assert_int_equal(tidal_server_run(s, 1000 * MS), TIDAL_ERR_CUDA);
    assert_non_null(strstr(tidal_last_error(), "cuStreamQuery (service ls, instance 0)"));
    const tidal_server_record *r;
    size_t nr;
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK);
    assert_int_equal(nr, 0);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
}

/* A policy call that fails (its apply hook) stops the run too. */
static int failing_apply(void *ctx, int service, const tidal_smset *mask)
{
    (void)mask;
    return *(int *)ctx && service == 1 ? TIDAL_ERR_CUDA : TIDAL_OK;
}

static void test_policy_failure_stops_the_run(void **state)
{
    (void)state;
    int fail = 0, pl, pb;
    tidal_policy *pol = sgdrc_ls_be(failing_apply, &fail, &pl, &pb);
    fail = 1;
    fake_graph g = {.dur_ns = 10 * US};
    tidal_server_instance in = {STREAM(0), &g, NULL, NULL, 0};
    tidal_server *s = server(pol);
    int ls = add(s, "ls", TIDAL_SERVICE_LS, pl, 1, TIDAL_SERVER_WAIT_YIELD, &in, 1);
    uint64_t t[2] = {10 * US, 20 * US};
    assert_int_equal(tidal_server_arrivals(s, ls, t, 2), TIDAL_OK);
    assert_int_equal(tidal_server_run(s, 1000 * MS), TIDAL_ERR_CUDA);
    assert_int_equal(atomic_load(&g.launches), 0); /* the reservation comes before the work */
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);
}

/* ------------------------------------------------------------------ arguments */

static void test_bad_arguments(void **state)
{
    (void)state;
    fake_graph g = {.dur_ns = 10 * US};
    tidal_server_instance in = {STREAM(0), &g, NULL, NULL, 0}, none = {STREAM(0), NULL, NULL, NULL, 0};
    void *short_table[2] = {&g, NULL};
    tidal_server_instance holey = {STREAM(0), NULL, short_table, NULL, 0};
    tidal_server *s = NULL;
    assert_int_equal(tidal_server_create(NULL, NULL, NULL), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_create(NULL, NULL, &s), TIDAL_OK); /* the config may be NULL */
    tidal_server_service sv = {.name = "ls", .cls = TIDAL_SERVICE_LS, .instances = &in, .ninstances = 1};
    assert_int_equal(tidal_server_add_service(NULL, &sv, NULL), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_add_service(s, NULL, NULL), TIDAL_ERR_INVALID);
    tidal_server_service bad = sv;
    bad.name = "a b";
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    bad = sv, bad.name = NULL;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    bad = sv, bad.cls = 7;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    bad = sv, bad.ninstances = 0;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    bad = sv, bad.instances = NULL;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    bad = sv, bad.instances = &none;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "instance 0 has no graph"));
    bad = sv, bad.instances = &holey, bad.max_batch = 2; /* no graph for a batch of 2 */
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "batch of 2"));
    bad = sv, bad.wait = 9;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    bad = sv, bad.max_batch = 100000;
    assert_int_equal(tidal_server_add_service(s, &bad, NULL), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_run(s, MS), TIDAL_ERR_INVALID); /* no services */
    int id = -1;
    assert_int_equal(tidal_server_add_service(s, &sv, &id), TIDAL_OK);
    assert_int_equal(id, 0);
    assert_int_equal(tidal_server_add_service(s, &sv, NULL), TIDAL_ERR_EXISTS);
    uint64_t unsorted[3] = {10, 30, 20};
    assert_int_equal(tidal_server_arrivals(s, 0, unsorted, 3), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "arrival 2"));
    assert_int_equal(tidal_server_arrivals(s, 0, NULL, 3), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_arrivals(s, 1, unsorted, 1), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_arrivals(s, -1, unsorted, 1), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_arrivals(s, 0, NULL, 0), TIDAL_OK); /* none */
    assert_int_equal(tidal_server_run(NULL, MS), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_run(s, 0), TIDAL_ERR_INVALID);
    const tidal_server_record *r;
    size_t nr;
    assert_int_equal(tidal_server_records(s, NULL, &nr), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_records(s, &r, &nr), TIDAL_OK); /* before any run: none */
    assert_int_equal(nr, 0);
    tidal_server_counts c;
    assert_int_equal(tidal_server_counts_get(s, 3, &c), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_counts_get(s, 0, NULL), TIDAL_ERR_INVALID);
    void *e;
    assert_int_equal(tidal_server_instantiate(s, NULL, &e), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_instantiate(s, &g, NULL), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_destroy(NULL), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);

    /* a policy service the policy does not have */
    tidal_policy_config pc = {.kind = TIDAL_POLICY_SGDRC, .sms = 132, .apply = no_apply};
    tidal_policy *pol;
    assert_int_equal(tidal_policy_create(&pc, &pol), TIDAL_OK);
    assert_int_equal(tidal_server_create(pol, NULL, &s), TIDAL_OK);
    sv.policy_id = 0;
    assert_int_equal(tidal_server_add_service(s, &sv, NULL), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "policy has no service 0"));
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
    assert_int_equal(tidal_policy_destroy(pol), TIDAL_OK);

    /* before tidal_init, and with a driver that cannot launch graphs */
    tidal_shutdown();
    assert_int_equal(tidal_server_create(NULL, NULL, &s), TIDAL_ERR_NOT_INIT);
    fake.GraphLaunch = NULL;
    assert_int_equal(tidal_init(0), TIDAL_OK);
    assert_int_equal(tidal_server_create(NULL, NULL, &s), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "cuGraphLaunch"));
}

/* A graph instantiated by the server is its to destroy; a driver without stream memory
 * operations makes every wait a cuStreamSynchronize. */
static void test_instantiate_and_block_fallback(void **state)
{
    (void)state;
    fake.StreamWriteValue32 = NULL;
    fake_graph g = {.dur_ns = 20 * US};
    tidal_server *s = server(NULL);
    void *e = NULL;
    assert_int_equal(tidal_server_instantiate(s, &g, &e), TIDAL_OK);
    assert_ptr_equal(e, &g);
    tidal_server_instance in = {STREAM(0), e, NULL, NULL, 0};
    int ls = add(s, "ls", TIDAL_SERVICE_LS, 0, 1, TIDAL_SERVER_WAIT_SPIN, &in, 1);
    uint64_t t[4] = {10 * US, 100 * US, 200 * US, 300 * US};
    const tidal_server_record *r;
    size_t nr = serve_arrivals(s, ls, t, 4, MS, &r);
    assert_int_equal(nr, 4);
    assert_int_equal(atomic_load(&instantiated), 1);
    assert_int_equal(atomic_load(&exec_destroyed), 0);
    assert_int_equal(tidal_server_destroy(s), TIDAL_OK);
    assert_int_equal(atomic_load(&exec_destroyed), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arrivals_in_order_and_on_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_up_to_the_policys_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_without_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_begin_end_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_share_graphs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_share_ladder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_batches_what_is_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_be_closed_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_failure_stops_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_stream_does_not_hang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_failure_stops_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instantiate_and_block_fallback, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
