/* tidal_server.h — a serving engine in C (part of libtidal; include after tidal.h and
 * tidal_policy.h): LS services fed by an arrival schedule and BE services in a closed loop,
 * each model instance a CUDA graph replayed on its stream, every request recorded. It is
 * tidal.serve's loop (python/tidal/serve.py) without Python on the request's path: the
 * dispatcher, the queues, the batches, the policy's begin/end, the graph launches and the
 * waits are C threads (docs/runtime.md "The serving engine").
 *
 *   tidal_server *s;
 *   tidal_server_create(pol, NULL, &s);                   pol: a tidal_policy, or NULL
 *   tidal_server_instance ls_inst[2] = {{ls_stream0, ls_exec0}, {ls_stream1, ls_exec1}};
 *   tidal_server_service ls = {.name = "ls", .cls = TIDAL_SERVICE_LS, .policy_id = pol_ls,
 *                              .instances = ls_inst, .ninstances = 2};
 *   int id;
 *   tidal_server_add_service(s, &ls, &id);
 *   tidal_server_arrivals(s, id, times_ns, n);           ns from the run's start, sorted
 *   tidal_server_run(s, 3000000000ull);                   3 s; BE runs the whole time
 *   const tidal_server_record *r; size_t nr;
 *   tidal_server_records(s, &r, &nr);
 *   tidal_server_destroy(s);
 *
 * Threads: tidal_server_run starts one dispatcher thread (it queues each LS request at its
 * arrival time: a sleep with 1 ns timer slack until spin_us before it, then a spin on the
 * clock) and one worker thread per instance, and joins them all before it returns. An LS
 * worker takes a batch from its service's queue (the size tidal_policy_batch picks for the
 * measured arrival rate, waiting at most its max_wait for the batch to fill; without a
 * policy, what is queued up to max_batch), calls tidal_policy_request_begin (the SMs are
 * reserved before the work is issued), launches the instance's graph for that batch size
 * with cuGraphLaunch, waits for it, and calls tidal_policy_request_end with the measured
 * latency. A BE worker does the same with batches of max_batch, one after the other, until
 * the run's time is up. LS workers finish the requests queued by then.
 *
 * Graph launches take the driver's cuGraphLaunch from libtidal's driver table, as PyTorch's
 * replay() reaches it through the CUDA runtime: libtidal interposes no graph launch, a
 * graph's placement (its kernel nodes' green context, its clones' partition) was fixed at
 * capture (docs/design.md "Hybrid placement").
 *
 * Errors: the first failure of any thread (a driver call, a policy call) stops the run;
 * tidal_server_run returns its status with the failing call in tidal_last_error() of the
 * calling thread (e.g. "cuGraphLaunch (service ls, instance 0): CUDA_ERROR_INVALID_VALUE"),
 * after every thread is joined. The records of what completed stay readable. Statuses are
 * tidal.h's; a server is used by one thread at a time.
 */
#ifndef TIDAL_SERVER_H
#define TIDAL_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "tidal.h"
#include "tidal_policy.h"

#include "tidal_api_begin.h"

typedef struct tidal_server tidal_server;

/* How a worker waits: for its queue to have work, and for its graph to finish. */
enum {
    TIDAL_SERVER_WAIT_DEFAULT = 0, /* SPIN for LS services, YIELD for BE */
    /* A busy loop: for the queue, on its counter; for the GPU, on a pinned word the stream
       writes after the graph (cuStreamWriteValue32), with no driver call in the loop: no
       thread wake-up, no driver entry that could contend with the other workers' launches,
       whatever scheduling flags the context was made with; one core per worker. */
    TIDAL_SERVER_WAIT_SPIN = 1,
    TIDAL_SERVER_WAIT_YIELD = 2, /* the same loops with sched_yield() between looks */
    /* A condition variable for the queue, cuStreamSynchronize for the GPU (which spins,
       yields or blocks as the context's CU_CTX_SCHED_* flags say) */
    TIDAL_SERVER_WAIT_BLOCK = 3,
};

/* Zero means "the default" for every field; the struct may be NULL. */
typedef struct tidal_server_config {
    unsigned spin_us; /* the dispatcher spins this long before each arrival (default 100) */
    unsigned tick_us; /* tidal_policy_tick at most this far apart while the dispatcher waits
                         (default 1000) */
    /* Hooks (optional, for tests): the clock in ns (default CLOCK_MONOTONIC, the clock of
       Python's time.monotonic()) and a sleep of ns (default clock_nanosleep). */
    uint64_t (*now_ns)(void *ctx);
    void (*sleep_ns)(void *ctx, uint64_t ns);
    void *ctx;
} tidal_server_config;

/* A graph placed for one share of the SMs (optional, per instance): captured on a stream
   whose SMs are exactly mask (tidal_partition_stream of a partition of that set: every
   kernel node then runs there, wherever the graph is launched from), it runs a batch when
   mask lies inside the policy's mask of the service at the batch's start and no other such
   share has more SMs (the first of equals); a batch no share fits runs the instance's own
   graph(s). So a ladder of shares (an LS service's graphs on its first 64, 80, 96... SMs
   under GSLICE) runs the largest step its share holds. So a service whose share moves (BE under SGDRC while LS holds
   its SMs) runs a graph that never touches the SMs it was not given, instead of clones
   that land on them at every launch and leave (docs/runtime.md "The serving engine"). */
typedef struct tidal_server_share {
    tidal_smset mask;
    void *graph;         /* CUgraphExec, as the instance's graph */
    void *const *graphs; /* optional, per batch size, as the instance's graphs */
} tidal_server_share;

/* One model instance: its stream and its graph(s). */
typedef struct tidal_server_instance {
    void *stream; /* CUstream the graphs are launched on (NULL: the legacy default stream) */
    void *graph;  /* CUgraphExec run for every batch (when graphs is NULL) */
    /* Optional: graphs[b - 1] runs a batch of b requests (b = 1..max_batch); a NULL entry
       means the next larger batch's graph (padding), so graphs[max_batch - 1] is needed. */
    void *const *graphs;
    const tidal_server_share *shares; /* optional: graphs for given masks (copied) */
    unsigned nshares;
} tidal_server_instance;

typedef struct tidal_server_service {
    const char *name;                       /* 1..31 characters of [A-Za-z0-9_.-], unique in the server */
    int cls;                                /* TIDAL_SERVICE_LS (arrivals) or TIDAL_SERVICE_BE (closed loop) */
    int policy_id;                          /* the service's id in the server's policy (tidal_policy_add_service);
                                               ignored when the server has no policy */
    unsigned max_batch;                     /* the largest batch (default 1); BE runs batches of this size */
    int wait;                               /* TIDAL_SERVER_WAIT_* */
    const tidal_server_instance *instances; /* copied */
    unsigned ninstances;                    /* >= 1 */
} tidal_server_service;

/* One request. Times are the server's clock (CLOCK_MONOTONIC ns unless hooked). */
typedef struct tidal_server_record {
    int service;         /* the id tidal_server_add_service gave */
    unsigned instance;   /* which instance ran it */
    unsigned batch;      /* requests in its batch */
    unsigned sms;        /* SMs the policy gave the service when the batch began (0: no policy) */
    unsigned share;      /* 1 + the index of the instance's share whose graph ran; 0: its own graph */
    uint64_t request;    /* LS: its index in the arrival schedule; BE: per instance, in order */
    uint64_t arrival_ns; /* LS: the scheduled arrival; BE: = start_ns */
    uint64_t queued_ns;  /* LS: when the dispatcher queued it; BE: = start_ns */
    uint64_t start_ns;   /* after the policy's begin, before the launch */
    uint64_t end_ns;     /* when the wait saw the graph done */
} tidal_server_record;

typedef struct tidal_server_counts {
    uint64_t dispatched; /* LS: requests queued by the dispatcher */
    uint64_t requests;   /* requests completed */
    uint64_t batches;    /* batches (graph launches) completed */
} tidal_server_counts;

/* policy may be NULL (the baselines: no SMs move, records carry sms = 0); it must outlive
 * the server. Needs tidal_init (the driver table and context): TIDAL_ERR_NOT_INIT before,
 * TIDAL_ERR_NO_DRIVER when the driver lacks cuGraphLaunch. */
int tidal_server_create(tidal_policy *policy, const tidal_server_config *cfg, tidal_server **out);
/* *id (if not NULL) gets the service's id (0, 1, ... in order). */
int tidal_server_add_service(tidal_server *s, const tidal_server_service *svc, int *id);
/* LS service id's arrival times, ns from the run's start, non-decreasing (copied; replaces
 * an earlier schedule). Arrivals at or after the run's duration are not served. */
int tidal_server_arrivals(tidal_server *s, int id, const uint64_t *t_ns, size_t n);
/* A CUgraphExec instantiated from graph (a CUgraph: e.g. PyTorch's raw_cuda_graph() of a
 * graph captured with keep_graph=True), owned by the server (destroyed with it). */
int tidal_server_instantiate(tidal_server *s, void *graph, void **exec);
/* Serve for duration_ns (> 0), then the LS requests still queued; returns once every thread
 * is joined and every instance's stream is idle. A server runs again with fresh records. */
int tidal_server_run(tidal_server *s, uint64_t duration_ns);
/* The last run's records: LS requests in schedule order per service, then BE's. Valid until
 * the next run or destroy. */
int tidal_server_records(tidal_server *s, const tidal_server_record **out, size_t *n);
/* Service id's counts in the last run. */
int tidal_server_counts_get(tidal_server *s, int id, tidal_server_counts *out);
int tidal_server_destroy(tidal_server *s);

#include "tidal_api_end.h"

#endif
