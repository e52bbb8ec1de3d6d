/* tidal_policy.h — who gets which SMs: latency models and the two papers' policies, called
 * by a serving loop at request boundaries (part of libtidal; include after tidal.h).
 *
 * A scaling model says how a kernel's or a request's latency falls with SMs:
 *     latency(n) = a / n + b            (a: the work that spreads, b: what does not)
 * fitted offline from a profile (tidal_scaling_fit) or online from requests as they run.
 *
 * A policy owns the SM masks of the partitions of its services and moves them live
 * (tidal_partition_set_mask) when the serving loop reports a request's start or end:
 *   TIDAL_POLICY_SGDRC  (SGDRC, PPoPP'25 "tidal SM masking"): each LS service reserves the
 *       smallest SM count that reaches its best latency (the model's knee), as the max over a
 *       sliding window of its requests' demands, while it has work; BE services share the
 *       other SMs, and all SMs while every LS service is idle. When LS work arrives only the
 *       BE kernels on the reclaimed SMs leave them (the live mask).
 *   TIDAL_POLICY_GSLICE (GSLICE, SoCC'20): each LS service holds an SM share that starts at
 *       its knee (or an even split) and is re-tuned from measured latencies: grown by a step
 *       while the window's worst latency is above slo_high * SLO, shrunk while it stays below
 *       slo_low * SLO; BE services share the rest. tidal_policy_batch picks GSLICE's adaptive
 *       batch size from the arrival rate and the SLO.
 * LS services get SMs from 0 upward in the order they were added, BE services the SMs above
 * them, in slices of `grain` SMs (2: the green-context grain, so partitions stay placed).
 *
 * Every decision is one JSON line in the trace (config trace_path, else TIDAL_POLICY_TRACE):
 *   {"t_us":..,"policy":"sgdrc","event":"begin","service":"ls","reason":"..","masks":{..},
 *    "apply_us":..}
 * and tidal_policy_state gives the live state as JSON. All functions are thread-safe per
 * policy (one mutex); statuses are tidal.h's.
 */
#ifndef TIDAL_POLICY_H
#define TIDAL_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "tidal.h"

#include "tidal_api_begin.h"

/* ------------------------------------------------------------------ scaling models */

typedef struct tidal_scaling {
    double a_us; /* latency that divides over SMs: a/n (>= 0) */
    double b_us; /* latency that does not (>= 0) */
} tidal_scaling;

/* Least squares of latency on 1/n over count samples (sms[i] > 0, latency_us[i] >= 0, at
 * least two distinct SM counts: TIDAL_ERR_INVALID otherwise). A fit whose slope would be
 * negative (more SMs slower) gives a = 0, b = the mean; a negative intercept gives b = 0 and
 * the best a alone. *rms_us (if not NULL) gets the fit's root-mean-square error. */
int tidal_scaling_fit(const unsigned *sms, const double *latency_us, size_t count, tidal_scaling *out, double *rms_us);
/* a/n + b; n = 0 gives +inf. */
double tidal_scaling_latency(const tidal_scaling *m, unsigned sms);
/* The knee: the smallest n in {grain, 2*grain, ..} (n <= max_sms; max_sms itself when it is
 * not a multiple) with latency(n) <= (1 + slack) * latency(max_sms). 0 on bad arguments. */
unsigned tidal_scaling_knee(const tidal_scaling *m, unsigned max_sms, unsigned grain, double slack);

/* ------------------------------------------------------------------ policies */

enum {
    TIDAL_POLICY_SGDRC = 1,
    TIDAL_POLICY_GSLICE = 2,
};

enum {
    TIDAL_SERVICE_LS = 1, /* latency-sensitive: has an SLO */
    TIDAL_SERVICE_BE = 2, /* best-effort: takes what is left */
};

typedef struct tidal_policy tidal_policy;

/* Zero means "the default" for every numeric field. */
typedef struct tidal_policy_config {
    int kind;          /* TIDAL_POLICY_SGDRC or TIDAL_POLICY_GSLICE */
    unsigned sms;      /* SMs to split, 0..sms-1 (default: tidal_device_sms) */
    unsigned grain;    /* SMs per slice (default 2) */
    double knee_slack; /* knee: within this fraction of the best latency (default 0.05) */
    /* SGDRC */
    uint64_t window_us; /* an LS reservation is the max demand over this window (default 100000) */
    uint64_t idle_us;   /* BE gets all SMs once every LS service has been idle this long
                           (default 0: at once; tidal_policy_tick applies a later release) */
    /* GSLICE */
    double slo_high;     /* grow when the window's worst latency > slo_high * SLO (default 0.9) */
    double slo_low;      /* shrink when it is < slo_low * SLO (default 0.6) */
    unsigned tune_step;  /* SMs per re-tune step (default 2 * grain) */
    unsigned tune_every; /* requests per re-tune window (default 8) */
    double batch_frac;   /* adaptive batching: a batch's latency <= batch_frac * SLO, its
                            queueing <= the rest (default 0.5, GSLICE's rule) */
    /* The online model replaces a service's profile once it has this many requests and
       predicts their latency better than the profile does (default 16). */
    unsigned online_min;
    /* Hooks (all optional). now_us: the clock in microseconds (default CLOCK_MONOTONIC).
       apply: set service `service`'s SM mask (default: tidal_partition_set_mask on the
       service's partition); a nonzero return is the decision's failure status. */
    uint64_t (*now_us)(void *ctx);
    int (*apply)(void *ctx, int service, const tidal_smset *mask);
    void *ctx;
    const char *trace_path; /* JSON lines, appended; NULL: TIDAL_POLICY_TRACE, else none */
    /* The live state (tidal_policy_state's JSON) in a file, for `tidalctl policy FILE`:
       written at create, then by tidal_policy_tick at most every state_every_ms (default
       100) when something changed, replaced atomically (rename), removed by destroy.
       NULL: TIDAL_POLICY_STATE, else none. */
    const char *state_path;
    unsigned state_every_ms;
    /* LS services take their SMs from this set first (in SM order), then from the others,
       and BE the rest: with tidal_l2_sides' side 0 here, LS and BE stay on different L2
       sides while LS fits in one, which halved LS's slowdown under BE on the H200
       (docs/runtime.md "L2 sides"). Empty (the default): LS from SM 0 up. */
    tidal_smset ls_first;
} tidal_policy_config;

typedef struct tidal_service_config {
    const char *name;             /* 1..31 characters, for the trace */
    int cls;                      /* TIDAL_SERVICE_LS or TIDAL_SERVICE_BE */
    tidal_part *part;             /* the partition the policy moves (may be NULL with apply) */
    double slo_us;                /* LS: the request latency objective (> 0) */
    const tidal_scaling *profile; /* the offline profile of one request (NULL: learned online) */
    unsigned min_sms, max_sms;    /* bounds of the share (default grain, all) */
    unsigned max_batch;           /* adaptive batching limit (default 1) */
    uint64_t max_queue_us;        /* longest a request may wait for its batch (default: SLO) */
    unsigned demand_sms;          /* the SMs one request needs, measured (a profile's knee on
                                     its measured curve, which waves make smaller than the
                                     fit's); 0: the knee of the model */
} tidal_service_config;

int tidal_policy_create(const tidal_policy_config *cfg, tidal_policy **out);
/* Adds a service and applies the masks that follow; *id (if not NULL) gets its index. */
int tidal_policy_add_service(tidal_policy *p, const tidal_service_config *s, int *id);
/* A request (or batch) of service id starts; LS: its SMs are reserved before this returns,
 * so the serving loop launches the request after it. demand_sms: the SMs this request needs
 * (SGDRC's per-kernel or per-request demand, from the caller's profile of its request
 * kinds); 0: the policy's own, the knee of the service's model (max_sms without one). */
int tidal_policy_request_begin(tidal_policy *p, int id, unsigned demand_sms);
/* The request ended after latency_us (measured by the caller, e.g. with CUDA events) with
 * batch requests in it. Feeds the online model and the policy's re-tuning. */
int tidal_policy_request_end(tidal_policy *p, int id, double latency_us, unsigned batch);
/* Timers (SGDRC's idle release, the state file); call it from the serving loop when
 * nothing else happens. A failure to write the state file is its status. */
int tidal_policy_tick(tidal_policy *p);
/* GSLICE's adaptive batch for service id at arrival_per_s requests per second with queued
 * requests waiting now: the largest batch (<= max_batch) whose expected latency fits
 * batch_frac * SLO and that fills within the queueing budget, where the queued requests need
 * no filling (a batch of at most `queued` is taken at once, whatever the rate: requests that
 * are already waiting are served together instead of one after the other); *max_wait_us:
 * how long the oldest request may wait for it. */
int tidal_policy_batch(tidal_policy *p, int id, double arrival_per_s, unsigned queued, unsigned *batch,
                       uint64_t *max_wait_us);
/* What a batch of `batch` requests (1..max_batch) of service id takes, from an offline
 * profile (GSLICE profiles its batch sizes). Without it tidal_policy_batch knows a size only
 * once it ran, and guesses a larger one as proportional to a smaller: a model at batch 1
 * above the budget then never batches, even where batching costs nothing (ResNet-50 b2 runs
 * faster than b1 on an H200). The requests' measured latencies refine it. */
int tidal_policy_batch_profile(tidal_policy *p, int id, unsigned batch, double latency_us);
/* The SMs the policy gives service id now (mask and/or count may be NULL). */
int tidal_policy_share(tidal_policy *p, int id, tidal_smset *mask, unsigned *sms);
/* The model the policy uses for id now (the profile, or the online fit once it replaced it);
 * *online (if not NULL) is 1 for the online fit. TIDAL_ERR_NOT_FOUND while there is none. */
int tidal_policy_model(tidal_policy *p, int id, tidal_scaling *out, int *online);
/* The live state as one JSON object (like snprintf: returns the length it needs, or a
 * negative status). */
int tidal_policy_state(tidal_policy *p, char *buf, size_t size);
int tidal_policy_destroy(tidal_policy *p);

#include "tidal_api_end.h"

#endif
