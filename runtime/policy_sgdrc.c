/* policy_sgdrc.c — SGDRC's "tidal" policy (PPoPP'25): an LS service reserves, while it has
 * work, the max over a sliding window of its requests' demands (the knee of its model: the
 * fewest SMs within knee_slack of its best latency); BE services get every other SM, and
 * all of them once the LS services are idle. */
#include <string.h>

#include "policy_internal.h"

/* One request's demand: the service's measured one, else the model's knee, else all the
 * service may have. */
static unsigned demand(const tidal_policy *p, const policy_svc *s)
{
    tidal_scaling m;
    if (s->demand_sms) return s->demand_sms;
    if (!tidal__policy_model(s, &m)) return s->max_sms;
    unsigned n = tidal_scaling_knee(&m, s->max_sms, p->cfg.grain, p->cfg.knee_slack);
    return n < s->min_sms ? s->min_sms : n;
}

/* The reservation: the largest demand of the window, else the last one (an idle service
 * keeps its place for its next request), else what a request would demand now. */
static unsigned reservation(const tidal_policy *p, const policy_svc *s, uint64_t now)
{
    unsigned r = 0, last = 0;
    for (unsigned k = 0; k < s->ndemand; k++) {
        if (now - s->demand[k].t_us <= p->cfg.window_us && s->demand[k].sms > r) r = s->demand[k].sms;
    }
    if (s->ndemand) last = s->demand[(s->demand_next + POLICY_DEMANDS - 1) % POLICY_DEMANDS].sms;
    return r ? r : last ? last : demand(p, s);
}

static int layout(tidal_policy *p, const char *event, int id, const char *reason)
{
    unsigned want[p->nsvc];
    uint64_t now = tidal__policy_now(p);
    for (unsigned i = 0; i < p->nsvc; i++)
        want[i] = p->svc[i].cls == TIDAL_SERVICE_LS ? reservation(p, &p->svc[i], now) : 0;
    return tidal__policy_layout(p, want, event, id, reason);
}

int tidal__sgdrc_add(tidal_policy *p, int id) { return layout(p, "add", id, "new service"); }

int tidal__sgdrc_begin(tidal_policy *p, int id, unsigned demand_sms)
{
    policy_svc *s = &p->svc[id];
    if (s->cls != TIDAL_SERVICE_LS) return TIDAL_OK;
    s->inflight++;
    s->active = 1;
    s->release_at = 0;
    s->demand[s->demand_next].t_us = tidal__policy_now(p);
    s->demand[s->demand_next].sms = demand_sms ? demand_sms : demand(p, s);
    s->demand_next = (s->demand_next + 1) % POLICY_DEMANDS;
    if (s->ndemand < POLICY_DEMANDS) s->ndemand++;
    return layout(p, "begin", id, "LS work arrived: its reservation leaves BE");
}

int tidal__sgdrc_end(tidal_policy *p, int id)
{
    policy_svc *s = &p->svc[id];
    if (s->cls != TIDAL_SERVICE_LS || s->inflight == 0) return TIDAL_OK;
    if (--s->inflight) return TIDAL_OK;
    if (p->cfg.idle_us) {
        s->release_at = tidal__policy_now(p) + p->cfg.idle_us;
        return TIDAL_OK;
    }
    s->active = 0;
    return layout(p, "release", id, "LS idle: BE gets its SMs");
}

int tidal__sgdrc_tick(tidal_policy *p)
{
    uint64_t now = tidal__policy_now(p);
    int released = -1;
    for (unsigned i = 0; i < p->nsvc; i++) {
        policy_svc *s = &p->svc[i];
        if (s->release_at && s->inflight == 0 && now >= s->release_at) {
            s->active = 0;
            s->release_at = 0;
            released = (int)i;
        }
    }
    return released < 0 ? TIDAL_OK : layout(p, "release", released, "LS idle for idle_us: BE gets its SMs");
}
