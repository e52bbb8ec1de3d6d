/* policy_gslice.c — GSLICE's self-tuning shares and adaptive batching (SoCC'20): an LS
 * service starts at its knee (or an even split) and is re-tuned every tune_every requests
 * from the worst latency of that window; BE services share what is left. The batch is the
 * largest whose latency fits batch_frac of the SLO and that fills within the rest. */
#include <string.h>

#include "policy_internal.h"

static int layout(tidal_policy *p, const char *event, int id, const char *reason)
{
    unsigned want[p->nsvc];
    for (unsigned i = 0; i < p->nsvc; i++) want[i] = p->svc[i].cls == TIDAL_SERVICE_LS ? p->svc[i].share : 0;
    return tidal__policy_layout(p, want, event, id, reason);
}

/* SMs the services other than `but` hold (-1: all of them) are their LS shares and a
 * slice per BE service; what is left of the device's is free for `but`. */
static unsigned left_for(const tidal_policy *p, int but)
{
    unsigned used = 0;
    for (unsigned i = 0; i < p->nsvc; i++)
        if ((int)i != but) used += p->svc[i].cls == TIDAL_SERVICE_LS ? p->svc[i].share : p->cfg.grain;
    return used < p->cfg.sms ? p->cfg.sms - used : 0;
}

static unsigned clamp(unsigned v, unsigned lo, unsigned hi) { return v < lo ? lo : v > hi ? hi : v; }

/* An even split counts the services there are: each one added shrinks the LS services
 * that started from it and are not tuned yet to the new even split (else an LS service
 * added before its BE would keep every SM but one slice); none grows. */
static void re_even(tidal_policy *p, int but)
{
    unsigned g = p->cfg.grain, even = p->cfg.sms / p->nsvc / g * g;
    for (unsigned i = 0; i < p->nsvc; i++) {
        policy_svc *o = &p->svc[i];
        if ((int)i != but && o->cls == TIDAL_SERVICE_LS && o->even_share) {
            unsigned n = clamp(even, o->min_sms, o->max_sms);
            if (n < o->share) o->share = n;
        }
    }
}

int tidal__gslice_add(tidal_policy *p, int id)
{
    policy_svc *s = &p->svc[id];
    unsigned g = p->cfg.grain;
    re_even(p, id);
    unsigned room = left_for(p, id);
    if (s->cls == TIDAL_SERVICE_LS) {
        tidal_scaling m;
        unsigned even = p->cfg.sms / p->nsvc / g * g;
        int knee = !s->demand_sms && tidal__policy_model(s, &m);
        unsigned n = s->demand_sms ? s->demand_sms
                     : knee        ? tidal_scaling_knee(&m, s->max_sms, g, p->cfg.knee_slack)
                                   : even;
        s->even_share = !s->demand_sms && !knee;
        s->share = clamp(n, s->min_sms, s->max_sms);
        if (s->share > room) s->share = room / g * g;
        if (s->share < s->min_sms)
            return tidal__fail(TIDAL_ERR_SMS, "service %s: %u SMs left, it needs at least %u", s->name, room,
                               s->min_sms);
    } else {
        /* a BE service's slice comes out of the LS shares, the last added first */
        for (int i = (int)p->nsvc - 1; room < g && i >= 0; i--) {
            policy_svc *o = &p->svc[i];
            while (room < g && o->cls == TIDAL_SERVICE_LS && o->share >= o->min_sms + g) o->share -= g, room += g;
        }
        if (room < g) return tidal__fail(TIDAL_ERR_SMS, "service %s: no LS share can give it %u SMs", s->name, g);
    }
    return layout(p, "add", id,
                  s->cls == TIDAL_SERVICE_LS && s->has_profile ? "new service at its knee" : "new service");
}

/* The latency a request's batch may take: the SLO less the queueing budget when batching. */
static double exec_budget(const tidal_policy *p, const policy_svc *s)
{
    return s->max_batch > 1 ? p->cfg.batch_frac * s->slo_us : s->slo_us;
}

int tidal__gslice_end(tidal_policy *p, int id, double latency_us)
{
    policy_svc *s = &p->svc[id];
    if (s->cls != TIDAL_SERVICE_LS) return TIDAL_OK;
    if (latency_us > s->window_worst) s->window_worst = latency_us;
    if (++s->window_n < p->cfg.tune_every) return TIDAL_OK;
    double worst = s->window_worst, budget = exec_budget(p, s);
    s->window_worst = 0, s->window_n = 0;
    s->even_share = 0; /* tuned from here on: no longer re-evened */
    char why[160];
    if (worst > p->cfg.slo_high * budget) {
        unsigned room = left_for(p, -1), step = p->cfg.tune_step;
        if (step > room) step = room / p->cfg.grain * p->cfg.grain;
        if (s->share + step > s->max_sms) step = s->max_sms - s->share;
        if (step == 0) {
            tidal__policy_trace(p, "tune", id, "worst %.1f us > %.2f of %.1f us, but no SMs to give (share %u)", worst,
                                p->cfg.slo_high, budget, s->share);
            return TIDAL_OK;
        }
        s->share += step;
        snprintf(why, sizeof why, "worst %.1f us > %.2f of %.1f us: +%u SMs", worst, p->cfg.slo_high, budget, step);
        return layout(p, "tune", id, why);
    }
    if (worst < p->cfg.slo_low * budget && s->share > s->min_sms) {
        unsigned step = p->cfg.tune_step;
        if (s->share - step < s->min_sms || step > s->share) step = s->share - s->min_sms;
        s->share -= step;
        snprintf(why, sizeof why, "worst %.1f us < %.2f of %.1f us: -%u SMs", worst, p->cfg.slo_low, budget, step);
        return layout(p, "tune", id, why);
    }
    tidal__policy_trace(p, "tune", id, "worst %.1f us of %.1f us: share %u kept", worst, budget, s->share);
    return TIDAL_OK;
}

/* A batch's expected latency: what it took, else the nearest smaller batch's scaled up
 * linearly (pessimistic for GPUs, which batch sublinearly); 0 when nothing is known. */
static double batch_estimate(const policy_svc *s, unsigned b)
{
    if (s->batch_us[b] > 0) return s->batch_us[b];
    for (unsigned k = b - 1; k >= 1; k--)
        if (s->batch_us[k] > 0) return s->batch_us[k] * b / k;
    return 0;
}

int tidal__gslice_batch(tidal_policy *p, int id, double arrival_per_s, unsigned queued, unsigned *batch,
                        uint64_t *max_wait_us)
{
    policy_svc *s = &p->svc[id];
    double budget = exec_budget(p, s), wait = s->slo_us - budget;
    if (s->cls != TIDAL_SERVICE_LS) wait = 0; /* BE batches whatever is queued */
    if (wait > (double)s->max_queue_us) wait = (double)s->max_queue_us;
    unsigned b = 1;
    if (s->cls == TIDAL_SERVICE_BE) {
        b = s->max_batch;
    } else {
        /* the oldest request is there (a batch is decided for it); the queued ones need no filling */
        unsigned have = queued ? queued : 1;
        for (unsigned k = s->max_batch; k > 1; k--) {
            double est = batch_estimate(s, k);
            int fills = k <= have || (arrival_per_s > 0 && (k - have) / arrival_per_s * 1e6 <= wait);
            if (est > 0 && est <= budget && fills) {
                b = k;
                break;
            }
        }
    }
    if (b != s->last_batch)
        tidal__policy_trace(p, "batch", id,
                            "%.0f requests/s, %u queued: batch %u -> %u (expected %.1f us of %.1f, wait <= %.0f us)",
                            arrival_per_s, queued, s->last_batch, b, batch_estimate(s, b), budget, wait);
    s->last_batch = b;
    *batch = b;
    if (max_wait_us) *max_wait_us = (uint64_t)wait;
    return TIDAL_OK;
}
