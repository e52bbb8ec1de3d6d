/* scaling.c — latency(n) = a/n + b: the least-squares fit of a profile, the knee, and the
 * online fit the policies keep per service (policy_internal.h). */
#include <math.h>
#include <string.h>

#include "policy_internal.h"

static void sums_add(scaling_sums *s, double w, unsigned n, double y)
{
    double x = 1.0 / n;
    s->w += w, s->x += w * x, s->y += w * y, s->xx += w * x * x, s->xy += w * x * y, s->yy += w * y * y;
}

/* 0 when the xs do not spread enough to tell a from b (fewer than two distinct n). */
static int sums_fit(const scaling_sums *s, tidal_scaling *out)
{
    if (s->w <= 0) return 0;
    double mx = s->x / s->w, my = s->y / s->w;
    double vxx = s->xx / s->w - mx * mx, cxy = s->xy / s->w - mx * my;
    /* 1/n of adjacent SM counts near 256 differ by ~1.5e-5, whose square is ~2e-10: a
       relative bound on the variance tells one n from two */
    if (vxx <= 1e-12 * mx * mx) return 0;
    double a = cxy / vxx, b = my - a * mx;
    if (a < 0) {
        a = 0, b = my;
    } else if (b < 0) {
        b = 0, a = s->xy / s->xx;
    }
    out->a_us = a, out->b_us = b;
    return 1;
}

int tidal_scaling_fit(const unsigned *sms, const double *latency_us, size_t count, tidal_scaling *out, double *rms_us)
{
    if (!sms || !latency_us || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_scaling_fit: NULL");
    scaling_sums s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < count; i++) {
        if (sms[i] == 0 || !(latency_us[i] >= 0) || !isfinite(latency_us[i]))
            return tidal__fail(TIDAL_ERR_INVALID, "tidal_scaling_fit: sample %zu: %u SMs, %g us", i, sms[i],
                               latency_us[i]);
        sums_add(&s, 1, sms[i], latency_us[i]);
    }
    tidal_scaling m;
    if (!sums_fit(&s, &m))
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_scaling_fit: need samples at two SM counts or more");
    if (rms_us) {
        double e = 0;
        for (size_t i = 0; i < count; i++) {
            double d = tidal_scaling_latency(&m, sms[i]) - latency_us[i];
            e += d * d;
        }
        *rms_us = sqrt(e / (double)count);
    }
    *out = m;
    return TIDAL_OK;
}

double tidal_scaling_latency(const tidal_scaling *m, unsigned sms)
{
    if (!m || sms == 0) return INFINITY;
    return m->a_us / sms + m->b_us;
}

unsigned tidal_scaling_knee(const tidal_scaling *m, unsigned max_sms, unsigned grain, double slack)
{
    if (!m || max_sms == 0 || grain == 0 || !(slack >= 0)) return 0;
    double limit = (1 + slack) * tidal_scaling_latency(m, max_sms);
    for (unsigned n = grain; n < max_sms; n += grain)
        if (tidal_scaling_latency(m, n) <= limit) return n;
    return max_sms;
}

/* ------------------------------------------------------------------ online */

/* Each new request weighs 1, older ones decay by this much per request: the fit follows a
 * model that drifts (other tenants, clocks) over some 50 requests. */
#define ONLINE_DECAY 0.98
/* Relative prediction errors are averaged with this weight per request. */
#define ERR_WEIGHT 0.1

void tidal__scaling_online_add(scaling_online *o, const tidal_scaling *profile, unsigned sms, double latency_us)
{
    if (sms == 0 || !(latency_us > 0)) return;
    tidal_scaling m;
    if (o->count >= 2 && sums_fit(&o->sums, &m)) {
        double e = fabs(tidal_scaling_latency(&m, sms) - latency_us) / latency_us;
        o->err_online = o->scored ? (1 - ERR_WEIGHT) * o->err_online + ERR_WEIGHT * e : e;
        if (profile) {
            double ep = fabs(tidal_scaling_latency(profile, sms) - latency_us) / latency_us;
            o->err_profile = o->scored ? (1 - ERR_WEIGHT) * o->err_profile + ERR_WEIGHT * ep : ep;
        }
        o->scored++;
    }
    scaling_sums *s = &o->sums;
    s->w *= ONLINE_DECAY, s->x *= ONLINE_DECAY, s->y *= ONLINE_DECAY;
    s->xx *= ONLINE_DECAY, s->xy *= ONLINE_DECAY, s->yy *= ONLINE_DECAY;
    sums_add(s, 1, sms, latency_us);
    o->count++;
}

int tidal__scaling_online_fit(const scaling_online *o, tidal_scaling *out)
{
    return o->count >= 2 && sums_fit(&o->sums, out);
}
