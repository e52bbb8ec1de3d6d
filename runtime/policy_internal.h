/* policy_internal.h — the policies' shared state (not installed): services, the layout of
 * their masks, and the hooks by which policy.c asks the SGDRC or GSLICE rules for shares.
 * policy.c owns the registry, the API and the live state; policy_sgdrc.c and
 * policy_gslice.c own their rules; policy_layout.c what both sides share (clock, model,
 * layout, applying masks, the trace); scaling.c owns the models. Calls go one way:
 * policy.c -> rules -> policy_layout.c -> scaling.c and tidal.h's public API. */
#ifndef TIDAL_POLICY_INTERNAL_H
#define TIDAL_POLICY_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include "runtime_internal.h"
#include "tidal_policy.h"

/* Weighted sums of x = 1/n and y = latency, from which latency = a*x + b is fitted. */
typedef struct scaling_sums {
    double w, x, y, xx, xy, yy;
} scaling_sums;

/* The online model of one service: decaying sums, and how well it and the profile have
 * predicted the requests it saw (mean relative error, over the scored requests). */
typedef struct scaling_online {
    scaling_sums sums;
    unsigned count;  /* requests added */
    unsigned scored; /* requests predicted before they were added */
    double err_online, err_profile;
} scaling_online;

void tidal__scaling_online_add(scaling_online *o, const tidal_scaling *profile, unsigned sms, double latency_us);
/* 1 with *out set once the requests span two SM counts. */
int tidal__scaling_online_fit(const scaling_online *o, tidal_scaling *out);

#define POLICY_DEMANDS 64   /* SGDRC: demands remembered per service (the window's ring) */
#define POLICY_MAX_BATCH 64 /* adaptive batching: the largest batch tracked */

typedef struct policy_svc {
    char name[32];
    int cls;
    tidal_part *part;
    double slo_us;
    int has_profile;
    tidal_scaling profile;
    unsigned min_sms, max_sms, max_batch, demand_sms;
    uint64_t max_queue_us;

    scaling_online online;
    int use_online; /* the online fit replaced the profile */
    unsigned inflight;
    unsigned begin_sms; /* SMs the service had when its last request began */
    uint64_t requests;

    /* SGDRC */
    struct {
        uint64_t t_us;
        unsigned sms;
    } demand[POLICY_DEMANDS];
    unsigned ndemand, demand_next;
    uint64_t release_at; /* idle: the reservation ends then (0: none pending) */
    int active;          /* holds its reservation (work in flight or not yet released) */

    /* GSLICE */
    unsigned share;
    int even_share; /* the share is the even split (no demand, no model), until first tuned */
    double window_worst;
    unsigned window_n;
    double batch_us[POLICY_MAX_BATCH + 1]; /* mean latency per batch size (0: not seen) */
    unsigned last_batch;

    /* what is applied */
    tidal_smset mask;
    unsigned nsms;
    int applied;
} policy_svc;

struct tidal_policy {
    tidal_policy_config cfg; /* defaults filled in */
    pthread_mutex_t lock;
    policy_svc *svc;
    unsigned nsvc, cap;
    FILE *trace;
    uint64_t decisions;               /* mask changes applied */
    uint64_t t0_us;                   /* the trace's time origin */
    char *state_path;                 /* the live state's file (NULL: none) */
    uint64_t state_at_us, state_seen; /* last written (time, decisions + requests then) */
};

/* policy_layout.c */
uint64_t tidal__policy_now(const tidal_policy *p);
const char *tidal__policy_kind(int kind); /* "sgdrc" or "gslice" */
/* The model a service's decisions use now (profile or online); 0 when there is none. */
int tidal__policy_model(const policy_svc *s, tidal_scaling *out);
/* Lays out the LS shares (want[i], 0 for BE) from SM 0 up and splits the rest among the
 * BE services; applies what changed (losing SMs first) and traces it with reason. */
int tidal__policy_layout(tidal_policy *p, const unsigned *want, const char *event, int id, const char *reason);
/* A trace line without a mask change. */
void tidal__policy_trace(tidal_policy *p, const char *event, int id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The rules, called with the lock held; each updates its state for the event and calls
 * tidal__policy_layout with the shares that follow. *_add: a service was appended (index id). */
int tidal__sgdrc_add(tidal_policy *p, int id);
int tidal__sgdrc_begin(tidal_policy *p, int id, unsigned demand_sms);
int tidal__sgdrc_end(tidal_policy *p, int id);
int tidal__sgdrc_tick(tidal_policy *p);
int tidal__gslice_add(tidal_policy *p, int id);
int tidal__gslice_end(tidal_policy *p, int id, double latency_us);
int tidal__gslice_batch(tidal_policy *p, int id, double arrival_per_s, unsigned queued, unsigned *batch,
                        uint64_t *max_wait_us);

#endif
