/* policy_layout.c — what the rules share: the services' clock and model, the layout of
 * their SM masks (LS from the front of the SM order, BE on the rest: the order is the
 * config's ls_first set, then the other SMs) applied in two passes (SMs are taken before
 * they are given), and the trace. policy.c (the API) and the rules
 * (policy_sgdrc.c, policy_gslice.c) call it; it calls only tidal.h's public API, smset.c's
 * subset test and scaling.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy_internal.h"

uint64_t tidal__policy_now(const tidal_policy *p) { return p->cfg.now_us(p->cfg.ctx); }

int tidal__policy_model(const policy_svc *s, tidal_scaling *out)
{
    if (s->use_online) return tidal__scaling_online_fit(&s->online, out);
    if (s->has_profile) {
        *out = s->profile;
        return 1;
    }
    return 0;
}

const char *tidal__policy_kind(int kind) { return kind == TIDAL_POLICY_SGDRC ? "sgdrc" : "gslice"; }

/* ------------------------------------------------------------------ the trace */

static void trace_head(tidal_policy *p, const char *event, int id)
{
    fprintf(p->trace, "{\"t_us\":%llu,\"policy\":\"%s\",\"event\":\"%s\"",
            (unsigned long long)(tidal__policy_now(p) - p->t0_us), tidal__policy_kind(p->cfg.kind), event);
    if (id >= 0) fprintf(p->trace, ",\"service\":\"%s\"", p->svc[id].name);
}

void tidal__policy_trace(tidal_policy *p, const char *event, int id, const char *fmt, ...)
{
    if (!p->trace) return;
    trace_head(p, event, id);
    fputs(",\"reason\":\"", p->trace);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->trace, fmt, ap);
    va_end(ap);
    fputs("\"}\n", p->trace);
    fflush(p->trace);
}

static void trace_masks(tidal_policy *p, const char *event, int id, const char *reason, uint64_t apply_us, int status)
{
    if (!p->trace) return;
    trace_head(p, event, id);
    fprintf(p->trace, ",\"reason\":\"%s\",\"masks\":{", reason);
    for (unsigned i = 0; i < p->nsvc; i++) {
        char buf[1024];
        tidal_smset_format(&p->svc[i].mask, buf, sizeof buf);
        fprintf(p->trace, "%s\"%s\":\"%s\"", i ? "," : "", p->svc[i].name, buf);
    }
    fprintf(p->trace, "},\"apply_us\":%llu", (unsigned long long)apply_us);
    if (status) fprintf(p->trace, ",\"status\":\"%s\"", tidal_strerror(status));
    fputs("}\n", p->trace);
    fflush(p->trace);
}

/* ------------------------------------------------------------------ layout */

static int in(const tidal_smset *s, unsigned b) { return (int)((s->bits[b >> 6] >> (b & 63)) & 1); }

/* The SMs of positions [lo, hi) of the order into s. */
static void range_set(tidal_smset *s, const unsigned *order, unsigned lo, unsigned hi)
{
    for (unsigned k = lo; k < hi; k++) s->bits[order[k] >> 6] |= 1ull << (order[k] & 63);
}

static int smset_equal(const tidal_smset *a, const tidal_smset *b) { return !memcmp(a, b, sizeof *a); }

static int apply_one(tidal_policy *p, unsigned i, const tidal_smset *m)
{
    policy_svc *s = &p->svc[i];
    int rc = p->cfg.apply ? p->cfg.apply(p->cfg.ctx, (int)i, m) : tidal_partition_set_mask(s->part, m);
    if (rc) return rc < 0 ? rc : TIDAL_ERR_INVALID;
    s->mask = *m;
    s->nsms = tidal_smset_count(m);
    s->applied = 1;
    return TIDAL_OK;
}

int tidal__policy_layout(tidal_policy *p, const unsigned *want, const char *event, int id, const char *reason)
{
    unsigned sms = p->cfg.sms, grain = p->cfg.grain, nbe = 0, ls = 0;
    for (unsigned i = 0; i < p->nsvc; i++)
        if (p->svc[i].cls == TIDAL_SERVICE_BE) nbe++;
    /* every BE service keeps a slice: a partition with no SMs would stall its stream */
    unsigned room = sms > nbe * grain ? sms - nbe * grain : 0;
    tidal_smset next[p->nsvc ? p->nsvc : 1], taken;
    memset(next, 0, sizeof next);
    memset(&taken, 0, sizeof taken);
    /* the SM order: ls_first's SMs, then the others, each ascending */
    unsigned order[256], n = 0;
    for (int first = 1; first >= 0; first--)
        for (unsigned b = 0; b < sms; b++)
            if (in(&p->cfg.ls_first, b) == first) order[n++] = b;
    int clamped = 0;
    for (unsigned i = 0; i < p->nsvc; i++) {
        policy_svc *s = &p->svc[i];
        if (s->cls != TIDAL_SERVICE_LS) continue;
        unsigned w = want[i] > room - ls ? room - ls : want[i];
        clamped |= w < want[i];
        range_set(&next[i], order, ls, ls + w);
        /* SGDRC: an idle LS service keeps its place, but BE may run there */
        if (p->cfg.kind == TIDAL_POLICY_GSLICE || s->active) range_set(&taken, order, ls, ls + w);
        ls += w;
    }
    if (nbe) {
        unsigned free_sms[256], nfree = 0;
        for (unsigned k = 0; k < sms; k++)
            if (!in(&taken, order[k])) free_sms[nfree++] = order[k];
        unsigned piece = nfree / nbe / grain * grain, k = 0, at = 0;
        for (unsigned i = 0; i < p->nsvc; i++) {
            if (p->svc[i].cls != TIDAL_SERVICE_BE) continue;
            unsigned end = ++k == nbe ? nfree : at + piece;
            for (; at < end; at++) next[i].bits[free_sms[at] >> 6] |= 1ull << (free_sms[at] & 63);
        }
    }
    uint64_t t = tidal__policy_now(p);
    int rc = TIDAL_OK, changed = 0;
    for (int pass = 0; pass < 2 && rc == TIDAL_OK; pass++)
        for (unsigned i = 0; i < p->nsvc && rc == TIDAL_OK; i++) {
            policy_svc *s = &p->svc[i];
            if (s->applied && smset_equal(&s->mask, &next[i])) continue;
            /* pass 0 takes SMs away, pass 1 gives them: no SM is promised twice */
            int loses = !s->applied || !tidal__smset_subset(&s->mask, &next[i]);
            if (loses != (pass == 0)) continue;
            rc = apply_one(p, i, &next[i]);
            changed = 1;
        }
    if (changed || rc) {
        p->decisions += changed;
        char why[160];
        snprintf(why, sizeof why, "%s%s", reason, clamped ? "; LS shares clamped to leave BE a slice" : "");
        trace_masks(p, event, id, why, tidal__policy_now(p) - t, rc);
    }
    return rc;
}
