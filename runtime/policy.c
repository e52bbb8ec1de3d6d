/* policy.c — the policies' API and registry: services, requests, ticks and the live state.
 * The rules that decide the shares are in policy_sgdrc.c and policy_gslice.c; the layout
 * of the masks, applying them and the trace in policy_layout.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "policy_internal.h"

static uint64_t monotonic_us(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int write_state(tidal_policy *p);

/* ------------------------------------------------------------------ API */

static int fail_unlock(tidal_policy *p, int rc)
{
    pthread_mutex_unlock(&p->lock);
    return rc;
}

#define LOCK_ID(p, id, what)                                                                            \
    do {                                                                                                \
        if (!(p)) return tidal__fail(TIDAL_ERR_INVALID, what ": NULL policy");                          \
        pthread_mutex_lock(&(p)->lock);                                                                 \
        if ((id) < 0 || (unsigned)(id) >= (p)->nsvc)                                                    \
            return fail_unlock((p), tidal__fail(TIDAL_ERR_INVALID, what ": no service %d", (int)(id))); \
    } while (0)

int tidal_policy_create(const tidal_policy_config *cfg, tidal_policy **out)
{
    if (!cfg || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_create: NULL");
    if (cfg->kind != TIDAL_POLICY_SGDRC && cfg->kind != TIDAL_POLICY_GSLICE)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_create: kind %d is not TIDAL_POLICY_SGDRC or _GSLICE",
                           cfg->kind);
    tidal_policy_config c = *cfg;
    if (!c.sms) {
        int rc = tidal_device_sms(&c.sms);
        if (rc) return rc;
    }
    if (!c.grain) c.grain = 2;
    if (c.sms > 256 || c.grain > c.sms || c.sms % c.grain)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_create: %u SMs in slices of %u", c.sms, c.grain);
    if (c.knee_slack == 0) c.knee_slack = 0.05;
    if (!c.window_us) c.window_us = 100000;
    if (c.slo_high == 0) c.slo_high = 0.9;
    if (c.slo_low == 0) c.slo_low = 0.6;
    if (!c.tune_step) c.tune_step = 2 * c.grain;
    if (!c.tune_every) c.tune_every = 8;
    if (c.batch_frac == 0) c.batch_frac = 0.5;
    if (!c.online_min) c.online_min = 16;
    if (!(c.knee_slack > 0) || !(c.slo_low > 0 && c.slo_low < c.slo_high) || !(c.batch_frac > 0 && c.batch_frac < 1) ||
        c.tune_step % c.grain)
        return tidal__fail(TIDAL_ERR_INVALID,
                           "tidal_policy_create: want knee_slack > 0, 0 < slo_low < slo_high, 0 < batch_frac < 1 "
                           "and tune_step a multiple of grain");
    /* ls_first: SMs of the policy's range, whole slices (a share is whole slices) */
    for (unsigned b = 0; b < 256; b++) {
        unsigned in = (c.ls_first.bits[b >> 6] >> (b & 63)) & 1;
        unsigned lead = (c.ls_first.bits[(b - b % c.grain) >> 6] >> ((b - b % c.grain) & 63)) & 1;
        if (in && b >= c.sms)
            return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_create: ls_first holds SM %u of %u", b, c.sms);
        if (b < c.sms && in != lead)
            return tidal__fail(TIDAL_ERR_INVALID,
                               "tidal_policy_create: ls_first splits the slice of SMs %u-%u (slices of %u SMs)",
                               b - b % c.grain, b - b % c.grain + c.grain - 1, c.grain);
    }
    if (!c.now_us) c.now_us = monotonic_us;
    tidal_policy *p = calloc(1, sizeof *p);
    if (!p) return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_policy_create");
    const char *path = c.trace_path ? c.trace_path : getenv("TIDAL_POLICY_TRACE");
    if (path && *path) {
        p->trace = fopen(path, "a");
        if (!p->trace) {
            int e = errno;
            free(p);
            return tidal__fail(TIDAL_ERR_INVALID, "policy trace %s: %s", path, strerror(e));
        }
    }
    c.trace_path = NULL; /* not kept: the caller's string */
    const char *sp = c.state_path ? c.state_path : getenv("TIDAL_POLICY_STATE");
    c.state_path = NULL;
    if (!c.state_every_ms) c.state_every_ms = 100;
    p->cfg = c;
    pthread_mutex_init(&p->lock, NULL);
    p->t0_us = tidal__policy_now(p);
    if (sp && *sp) {
        int rc = (p->state_path = strdup(sp)) ? write_state(p) : tidal__fail(TIDAL_ERR_NO_MEMORY, "policy state");
        if (rc) {
            free(p->state_path);
            p->state_path = NULL;
            tidal_policy_destroy(p);
            return rc;
        }
    }
    *out = p;
    return TIDAL_OK;
}

int tidal_policy_destroy(tidal_policy *p)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_destroy: NULL");
    if (p->trace) fclose(p->trace);
    if (p->state_path) unlink(p->state_path); /* no policy, no live state */
    free(p->state_path);
    pthread_mutex_destroy(&p->lock);
    free(p->svc);
    free(p);
    return TIDAL_OK;
}

int tidal_policy_add_service(tidal_policy *p, const tidal_service_config *sc, int *id)
{
    if (!p || !sc) return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_add_service: NULL");
    if (!tidal_control_name_ok(sc->name))
        return tidal__fail(TIDAL_ERR_PARSE, "service name \"%s\": want 1-31 of [A-Za-z0-9_.-]",
                           sc->name ? sc->name : "(null)");
    if (sc->cls != TIDAL_SERVICE_LS && sc->cls != TIDAL_SERVICE_BE)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: class %d is not TIDAL_SERVICE_LS or _BE", sc->name, sc->cls);
    if (sc->cls == TIDAL_SERVICE_LS && !(sc->slo_us > 0))
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: an LS service needs slo_us > 0", sc->name);
    if (!sc->part && !p->cfg.apply)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: no partition (and no apply hook)", sc->name);
    if (sc->profile && !(sc->profile->a_us >= 0 && sc->profile->b_us >= 0 && sc->profile->a_us + sc->profile->b_us > 0))
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: profile a=%g b=%g (want a, b >= 0, not both 0)", sc->name,
                           sc->profile->a_us, sc->profile->b_us);
    if (sc->demand_sms % p->cfg.grain || sc->demand_sms > (sc->max_sms ? sc->max_sms : p->cfg.sms))
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: demand_sms %u (want a multiple of %u, <= max_sms)", sc->name,
                           sc->demand_sms, p->cfg.grain);
    if (sc->max_batch > POLICY_MAX_BATCH)
        return tidal__fail(TIDAL_ERR_INVALID, "service %s: max_batch %u > %u", sc->name, sc->max_batch,
                           POLICY_MAX_BATCH);
    pthread_mutex_lock(&p->lock);
    unsigned g = p->cfg.grain, min = sc->min_sms ? sc->min_sms : g, max = sc->max_sms ? sc->max_sms : p->cfg.sms;
    if (min % g || max % g || min > max || max > p->cfg.sms)
        return fail_unlock(p, tidal__fail(TIDAL_ERR_INVALID,
                                          "service %s: min_sms %u, max_sms %u (want multiples of %u, "
                                          "min <= max <= %u)",
                                          sc->name, min, max, g, p->cfg.sms));
    for (unsigned i = 0; i < p->nsvc; i++)
        if (!strcmp(p->svc[i].name, sc->name))
            return fail_unlock(p, tidal__fail(TIDAL_ERR_EXISTS, "service %s exists", sc->name));
    if (p->nsvc == p->cap) {
        unsigned cap = p->cap ? 2 * p->cap : 4;
        policy_svc *grown = realloc(p->svc, cap * sizeof *grown);
        if (!grown) return fail_unlock(p, tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_policy_add_service"));
        p->svc = grown, p->cap = cap;
    }
    int rc;
    int i = (int)p->nsvc++;
    policy_svc *s = &p->svc[i];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", sc->name);
    s->cls = sc->cls;
    s->part = sc->part;
    s->slo_us = sc->slo_us;
    if (sc->profile) s->has_profile = 1, s->profile = *sc->profile;
    s->min_sms = min, s->max_sms = max;
    s->demand_sms = sc->demand_sms && sc->demand_sms < min ? min : sc->demand_sms;
    s->max_batch = sc->max_batch ? sc->max_batch : 1;
    s->max_queue_us = sc->max_queue_us ? sc->max_queue_us : (uint64_t)sc->slo_us;
    s->last_batch = 1;
    rc = p->cfg.kind == TIDAL_POLICY_GSLICE ? tidal__gslice_add(p, i) : tidal__sgdrc_add(p, i);
    if (rc) { /* the service is not added; the others keep their masks */
        p->nsvc--;
        return fail_unlock(p, rc);
    }
    if (id) *id = i;
    return fail_unlock(p, TIDAL_OK);
}

int tidal_policy_request_begin(tidal_policy *p, int id, unsigned demand_sms)
{
    LOCK_ID(p, id, "tidal_policy_request_begin");
    policy_svc *s = &p->svc[id];
    if (demand_sms && (demand_sms % p->cfg.grain || demand_sms > s->max_sms))
        return fail_unlock(p, tidal__fail(TIDAL_ERR_INVALID,
                                          "tidal_policy_request_begin: %s: demand %u SMs (want a "
                                          "multiple of %u, <= %u)",
                                          s->name, demand_sms, p->cfg.grain, s->max_sms));
    s->requests++;
    int rc = TIDAL_OK;
    if (p->cfg.kind == TIDAL_POLICY_SGDRC)
        rc = tidal__sgdrc_begin(p, id, demand_sms < s->min_sms && demand_sms ? s->min_sms : demand_sms);
    s->begin_sms = s->nsms;
    return fail_unlock(p, rc);
}

int tidal_policy_request_end(tidal_policy *p, int id, double latency_us, unsigned batch)
{
    LOCK_ID(p, id, "tidal_policy_request_end");
    policy_svc *s = &p->svc[id];
    if (!(latency_us >= 0) || !isfinite(latency_us) || batch == 0)
        return fail_unlock(p, tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_request_end: %s: latency %g us, batch %u",
                                          s->name, latency_us, batch));
    tidal__scaling_online_add(&s->online, s->has_profile ? &s->profile : NULL, s->begin_sms, latency_us);
    if (batch <= POLICY_MAX_BATCH)
        s->batch_us[batch] = s->batch_us[batch] > 0 ? 0.7 * s->batch_us[batch] + 0.3 * latency_us : latency_us;
    tidal_scaling m;
    if (!s->use_online && s->online.count >= p->cfg.online_min && tidal__scaling_online_fit(&s->online, &m) &&
        (!s->has_profile ||
         (s->online.scored >= p->cfg.online_min / 2 && s->online.err_online < s->online.err_profile))) {
        s->use_online = 1;
        tidal__policy_trace(p, "model", id, "online fit a=%.1f b=%.1f us replaces %s (error %.3f vs %.3f)", m.a_us,
                            m.b_us, s->has_profile ? "the profile" : "no model", s->online.err_online,
                            s->has_profile ? s->online.err_profile : 1.0);
    }
    int rc = p->cfg.kind == TIDAL_POLICY_SGDRC ? tidal__sgdrc_end(p, id) : tidal__gslice_end(p, id, latency_us);
    return fail_unlock(p, rc);
}

/* Something the state shows changed since it was written: a decision or a request. */
static uint64_t state_changes(const tidal_policy *p)
{
    uint64_t n = p->decisions;
    for (unsigned i = 0; i < p->nsvc; i++) n += p->svc[i].requests;
    return n + p->nsvc;
}

int tidal_policy_tick(tidal_policy *p)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_tick: NULL policy");
    pthread_mutex_lock(&p->lock);
    int rc = p->cfg.kind == TIDAL_POLICY_SGDRC ? tidal__sgdrc_tick(p) : TIDAL_OK;
    int due = p->state_path && tidal__policy_now(p) - p->state_at_us >= (uint64_t)p->cfg.state_every_ms * 1000 &&
              state_changes(p) != p->state_seen;
    pthread_mutex_unlock(&p->lock);
    if (rc) return rc;
    return due ? write_state(p) : TIDAL_OK;
}

int tidal_policy_batch(tidal_policy *p, int id, double arrival_per_s, unsigned queued, unsigned *batch,
                       uint64_t *max_wait_us)
{
    LOCK_ID(p, id, "tidal_policy_batch");
    if (!batch || !(arrival_per_s >= 0))
        return fail_unlock(p,
                           tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_batch: NULL batch or rate %g", arrival_per_s));
    return fail_unlock(p, tidal__gslice_batch(p, id, arrival_per_s, queued, batch, max_wait_us));
}

int tidal_policy_batch_profile(tidal_policy *p, int id, unsigned batch, double latency_us)
{
    LOCK_ID(p, id, "tidal_policy_batch_profile");
    policy_svc *s = &p->svc[id];
    if (batch == 0 || batch > s->max_batch || !(latency_us > 0) || !isfinite(latency_us))
        return fail_unlock(p, tidal__fail(TIDAL_ERR_INVALID,
                                          "tidal_policy_batch_profile: %s: batch %u (1..%u), latency %g us", s->name,
                                          batch, s->max_batch, latency_us));
    s->batch_us[batch] = latency_us;
    tidal__policy_trace(p, "batch-profile", id, "batch %u: %.1f us (profile)", batch, latency_us);
    return fail_unlock(p, TIDAL_OK);
}

int tidal_policy_share(tidal_policy *p, int id, tidal_smset *mask, unsigned *sms)
{
    LOCK_ID(p, id, "tidal_policy_share");
    if (mask) *mask = p->svc[id].mask;
    if (sms) *sms = p->svc[id].nsms;
    return fail_unlock(p, TIDAL_OK);
}

int tidal_policy_model(tidal_policy *p, int id, tidal_scaling *out, int *online)
{
    LOCK_ID(p, id, "tidal_policy_model");
    if (!out) return fail_unlock(p, tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_model: NULL"));
    policy_svc *s = &p->svc[id];
    if (!tidal__policy_model(s, out))
        return fail_unlock(p, tidal__fail(TIDAL_ERR_NOT_FOUND, "service %s: no model", s->name));
    if (online) *online = s->use_online;
    return fail_unlock(p, TIDAL_OK);
}

/* snprintf into buf at *len, keeping the length it needs when buf is short */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0) *len += (size_t)n;
}

int tidal_policy_state(tidal_policy *p, char *buf, size_t size)
{
    if (!p || (!buf && size)) return tidal__fail(TIDAL_ERR_INVALID, "tidal_policy_state: NULL");
    pthread_mutex_lock(&p->lock);
    size_t len = 0;
    put(buf, size, &len, "{\"policy\":\"%s\",\"sms\":%u,\"grain\":%u,\"decisions\":%llu,\"services\":[",
        tidal__policy_kind(p->cfg.kind), p->cfg.sms, p->cfg.grain, (unsigned long long)p->decisions);
    for (unsigned i = 0; i < p->nsvc; i++) {
        policy_svc *s = &p->svc[i];
        char mask[1024];
        tidal_smset_format(&s->mask, mask, sizeof mask);
        put(buf, size, &len,
            "%s{\"name\":\"%s\",\"class\":\"%s\",\"mask\":\"%s\",\"sms\":%u,\"inflight\":%u,\"requests\":%llu,"
            "\"batch\":%u",
            i ? "," : "", s->name, s->cls == TIDAL_SERVICE_LS ? "ls" : "be", mask, s->nsms, s->inflight,
            (unsigned long long)s->requests, s->last_batch);
        if (s->cls == TIDAL_SERVICE_LS) put(buf, size, &len, ",\"slo_us\":%.1f", s->slo_us);
        tidal_scaling m;
        if (tidal__policy_model(s, &m))
            put(buf, size, &len, ",\"model\":{\"a_us\":%.3f,\"b_us\":%.3f,\"online\":%d}", m.a_us, m.b_us,
                s->use_online);
        put(buf, size, &len, "}");
    }
    put(buf, size, &len, "]}");
    pthread_mutex_unlock(&p->lock);
    return len > (size_t)INT32_MAX ? TIDAL_ERR_NO_MEMORY : (int)len;
}

/* The state file: tidal_policy_state's JSON and a newline, into PATH.tmp, renamed over PATH
 * (a reader sees the old state or the new one, never half of one). Called without the lock. */
static int write_state(tidal_policy *p)
{
    int n = tidal_policy_state(p, NULL, 0);
    if (n < 0) return n;
    size_t size = (size_t)n + 256; /* room for a service's counters to grow in between */
    char *buf = malloc(size), *tmp = malloc(strlen(p->state_path) + 5);
    if (!buf || !tmp) {
        free(buf), free(tmp);
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "policy state");
    }
    pthread_mutex_lock(&p->lock);
    uint64_t seen = state_changes(p);
    pthread_mutex_unlock(&p->lock);
    int len = tidal_policy_state(p, buf, size);
    sprintf(tmp, "%s.tmp", p->state_path);
    int rc = TIDAL_OK;
    FILE *f = len >= 0 && (size_t)len < size ? fopen(tmp, "w") : NULL;
    if (len < 0) {
        rc = len;
    } else if ((size_t)len >= size) {
        rc = tidal__fail(TIDAL_ERR_NO_MEMORY, "policy state: grew while written");
    } else if (!f) {
        rc = tidal__fail(TIDAL_ERR_INVALID, "policy state %s: %s", tmp, strerror(errno));
    } else {
        int bad = fprintf(f, "%s\n", buf) < 0;
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, p->state_path) != 0) {
            int e = errno;
            unlink(tmp);
            rc = tidal__fail(TIDAL_ERR_INVALID, "policy state %s: %s", p->state_path, strerror(e));
        }
    }
    free(buf), free(tmp);
    if (rc == TIDAL_OK) {
        pthread_mutex_lock(&p->lock);
        p->state_at_us = tidal__policy_now(p), p->state_seen = seen;
        pthread_mutex_unlock(&p->lock);
    }
    return rc;
}
