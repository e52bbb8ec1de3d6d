/* test_runtime_policy.c — the scaling models and the SGDRC / GSLICE policies with a fake
 * clock and an apply hook that records every mask change (no driver, no GPU). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tidal.h"
#include "tidal_policy.h"

/* ------------------------------------------------------------------ fixtures */

typedef struct world {
    uint64_t now;
    int fail_service; /* apply returns TIDAL_ERR_CUDA for this service (-1: never) */
    unsigned napplied;
    struct {
        int service;
        tidal_smset mask;
    } applied[64];
} world;

static uint64_t fake_now(void *ctx) { return ((world *)ctx)->now; }

static int fake_apply(void *ctx, int service, const tidal_smset *mask)
{
    world *w = ctx;
    if (service == w->fail_service) return TIDAL_ERR_CUDA;
    if (w->napplied < 64) w->applied[w->napplied].service = service, w->applied[w->napplied].mask = *mask;
    w->napplied++;
    return TIDAL_OK;
}

static tidal_policy *make(world *w, int kind, const char *trace)
{
    memset(w, 0, sizeof *w);
    w->now = 1000;
    w->fail_service = -1;
    tidal_policy_config c = {
        .kind = kind, .sms = 132, .now_us = fake_now, .apply = fake_apply, .ctx = w, .trace_path = trace};
    tidal_policy *p = NULL;
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_OK);
    return p;
}

static int add(tidal_policy *p, const char *name, int cls, double slo, const tidal_scaling *profile)
{
    tidal_service_config s = {.name = name, .cls = cls, .slo_us = slo, .profile = profile};
    int id = -1;
    assert_int_equal(tidal_policy_add_service(p, &s, &id), TIDAL_OK);
    return id;
}

/* The service's mask as text. */
static const char *mask_of(tidal_policy *p, int id)
{
    static char buf[4][256];
    static int k;
    tidal_smset m;
    assert_int_equal(tidal_policy_share(p, id, &m, NULL), TIDAL_OK);
    char *b = buf[k++ & 3];
    tidal_smset_format(&m, b, 256);
    return b;
}

/* latency = 4000/n + 100 us: latency(132) = 130.3, the knee at 5% is 110 SMs (grain 2) */
static const tidal_scaling bert = {4000, 100};

/* ------------------------------------------------------------------ scaling */

static void test_fit_recovers_model(void **state)
{
    (void)state;
    unsigned n[] = {8, 16, 32, 66, 100, 132};
    double y[6];
    for (int i = 0; i < 6; i++) y[i] = 1000.0 / n[i] + 20;
    tidal_scaling m;
    double rms = -1;
    assert_int_equal(tidal_scaling_fit(n, y, 6, &m, &rms), TIDAL_OK);
    assert_true(fabs(m.a_us - 1000) < 1e-6 && fabs(m.b_us - 20) < 1e-6);
    assert_true(rms >= 0 && rms < 1e-6);
    assert_true(fabs(tidal_scaling_latency(&m, 50) - 40) < 1e-6);
    assert_true(isinf(tidal_scaling_latency(&m, 0)));
}

static void test_fit_rejects_and_clamps(void **state)
{
    (void)state;
    unsigned one[] = {66, 66, 66}, zero[] = {0, 10};
    double y[] = {10, 11, 12};
    tidal_scaling m;
    assert_int_equal(tidal_scaling_fit(one, y, 3, &m, NULL), TIDAL_ERR_INVALID); /* one SM count */
    assert_non_null(strstr(tidal_last_error(), "two SM counts"));
    assert_int_equal(tidal_scaling_fit(zero, y, 2, &m, NULL), TIDAL_ERR_INVALID);
    double nan_y[] = {NAN, 1};
    unsigned two[] = {10, 20};
    assert_int_equal(tidal_scaling_fit(two, nan_y, 2, &m, NULL), TIDAL_ERR_INVALID);
    /* slower with more SMs: no divisible part, the mean */
    double up[] = {10, 20};
    assert_int_equal(tidal_scaling_fit(two, up, 2, &m, NULL), TIDAL_OK);
    assert_true(m.a_us == 0 && fabs(m.b_us - 15) < 1e-9);
    /* a negative intercept is clamped: the line through the origin */
    double steep[] = {100, 40};
    assert_int_equal(tidal_scaling_fit(two, steep, 2, &m, NULL), TIDAL_OK);
    assert_true(m.b_us == 0 && m.a_us > 0);
}

static void test_knee(void **state)
{
    (void)state;
    assert_int_equal(tidal_scaling_knee(&bert, 132, 2, 0.05), 110);
    assert_true(tidal_scaling_latency(&bert, 108) > 1.05 * tidal_scaling_latency(&bert, 132));
    assert_int_equal(tidal_scaling_knee(&bert, 132, 2, 10), 4); /* 1100 us <= 11 x 130.3 */
    tidal_scaling flat = {0, 50};
    assert_int_equal(tidal_scaling_knee(&flat, 132, 2, 0.05), 2); /* nothing to gain from SMs */
    tidal_scaling pure = {1000, 0};
    assert_int_equal(tidal_scaling_knee(&pure, 131, 2, 0.0), 131); /* not a multiple: itself */
    assert_int_equal(tidal_scaling_knee(&bert, 132, 0, 0.05), 0);
    assert_int_equal(tidal_scaling_knee(NULL, 132, 2, 0.05), 0);
}

/* ------------------------------------------------------------------ SGDRC */

static void test_sgdrc_reserve_and_release(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_SGDRC, NULL);
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, &bert), be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    /* LS idle: it keeps its place, BE runs everywhere */
    assert_string_equal(mask_of(p, ls), "0-109");
    assert_string_equal(mask_of(p, be), "0-131");
    w.napplied = 0;
    assert_int_equal(tidal_policy_request_begin(p, ls, 0), TIDAL_OK);
    assert_string_equal(mask_of(p, be), "110-131");
    assert_int_equal(w.napplied, 1); /* only BE moved: the LS place was already set */
    assert_int_equal(w.applied[0].service, be);
    /* a second request of the same service in flight: nothing moves */
    assert_int_equal(tidal_policy_request_begin(p, ls, 0), TIDAL_OK);
    assert_int_equal(tidal_policy_request_end(p, ls, 140, 1), TIDAL_OK);
    assert_string_equal(mask_of(p, be), "110-131");
    assert_int_equal(tidal_policy_request_end(p, ls, 140, 1), TIDAL_OK);
    assert_string_equal(mask_of(p, be), "0-131");
    /* BE requests never move masks under SGDRC */
    w.napplied = 0;
    assert_int_equal(tidal_policy_request_begin(p, be, 0), TIDAL_OK);
    assert_int_equal(tidal_policy_request_end(p, be, 5000, 16), TIDAL_OK);
    assert_int_equal(w.napplied, 0);
    tidal_policy_destroy(p);
}

static void test_sgdrc_idle_hold(void **state)
{
    (void)state;
    world w;
    memset(&w, 0, sizeof w);
    w.now = 1000, w.fail_service = -1;
    tidal_policy_config c = {
        .kind = TIDAL_POLICY_SGDRC, .sms = 132, .idle_us = 500, .now_us = fake_now, .apply = fake_apply, .ctx = &w};
    tidal_policy *p;
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_OK);
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, &bert), be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    tidal_policy_request_begin(p, ls, 0);
    tidal_policy_request_end(p, ls, 140, 1);
    assert_string_equal(mask_of(p, be), "110-131"); /* held */
    w.now += 499;
    assert_int_equal(tidal_policy_tick(p), TIDAL_OK);
    assert_string_equal(mask_of(p, be), "110-131");
    w.now += 1;
    assert_int_equal(tidal_policy_tick(p), TIDAL_OK);
    assert_string_equal(mask_of(p, be), "0-131");
    /* work arriving during the hold cancels the release */
    tidal_policy_request_begin(p, ls, 0);
    tidal_policy_request_end(p, ls, 140, 1);
    w.now += 100;
    tidal_policy_request_begin(p, ls, 0);
    w.now += 1000;
    tidal_policy_tick(p);
    assert_string_equal(mask_of(p, be), "110-131");
    tidal_policy_destroy(p);
}

static void test_sgdrc_window_max(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_SGDRC, NULL); /* window 100000 us */
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, &bert), be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    tidal_policy_request_begin(p, ls, 64);
    assert_string_equal(mask_of(p, ls), "0-63");
    assert_string_equal(mask_of(p, be), "64-131");
    tidal_policy_request_end(p, ls, 100, 1);
    w.now += 1000;
    /* a smaller demand inside the window: the reservation stays the window's max */
    tidal_policy_request_begin(p, ls, 20);
    assert_string_equal(mask_of(p, ls), "0-63");
    unsigned n;
    tidal_policy_share(p, ls, NULL, &n);
    assert_int_equal(n, 64);
    tidal_policy_request_end(p, ls, 100, 1);
    w.now += 100000; /* the 64 left the window */
    tidal_policy_request_begin(p, ls, 20);
    assert_string_equal(mask_of(p, ls), "0-19");
    assert_string_equal(mask_of(p, be), "20-131");
    /* taking SMs from BE comes before giving them to LS */
    tidal_policy_request_end(p, ls, 100, 1);
    w.napplied = 0;
    tidal_policy_request_begin(p, ls, 90);
    assert_int_equal(w.napplied, 2);
    assert_int_equal(w.applied[0].service, be);
    assert_int_equal(w.applied[1].service, ls);
    /* demands are checked */
    assert_int_equal(tidal_policy_request_begin(p, ls, 3), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_request_begin(p, ls, 134), TIDAL_ERR_INVALID);
    tidal_policy_destroy(p);
}

static void test_sgdrc_two_ls_keep_places(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_SGDRC, NULL);
    int a = add(p, "a", TIDAL_SERVICE_LS, 500, &bert), b = add(p, "b", TIDAL_SERVICE_LS, 500, &bert);
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    /* b's place starts after a's; both knees (110 each) would leave BE nothing: b is clamped
       so that BE keeps one slice */
    assert_string_equal(mask_of(p, a), "0-109");
    assert_string_equal(mask_of(p, b), "110-129");
    tidal_policy_request_begin(p, b, 0);
    assert_string_equal(mask_of(p, be), "0-109,130-131"); /* a idle: BE runs on its place */
    tidal_policy_request_begin(p, a, 0);
    assert_string_equal(mask_of(p, be), "130-131");
    tidal_policy_request_end(p, b, 1, 1);
    assert_string_equal(mask_of(p, be), "110-131");
    tidal_policy_destroy(p);
}

static void test_online_model_replaces_profile(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_SGDRC, NULL);
    tidal_scaling wrong = {100, 5000};
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 9000, &wrong);
    add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    tidal_scaling m;
    int online = -1;
    assert_int_equal(tidal_policy_model(p, ls, &m, &online), TIDAL_OK);
    assert_int_equal(online, 0);
    unsigned demands[] = {20, 40, 60, 80, 100, 120};
    for (int r = 0; r < 40; r++) {
        unsigned d = demands[r % 6];
        w.now += 200000; /* each request alone in its window */
        assert_int_equal(tidal_policy_request_begin(p, ls, d), TIDAL_OK);
        assert_int_equal(tidal_policy_request_end(p, ls, 100000.0 / d + 100, 1), TIDAL_OK);
    }
    assert_int_equal(tidal_policy_model(p, ls, &m, &online), TIDAL_OK);
    assert_int_equal(online, 1);
    assert_true(fabs(m.a_us - 100000) < 1 && fabs(m.b_us - 100) < 0.1);
    /* its own demand now follows the online model's knee */
    w.now += 200000;
    tidal_policy_request_begin(p, ls, 0);
    unsigned n;
    tidal_policy_share(p, ls, NULL, &n);
    assert_int_equal(n, tidal_scaling_knee(&m, 132, 2, 0.05));
    tidal_policy_destroy(p);
}

static void test_measured_demand_beats_the_fit(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_SGDRC, NULL);
    /* the fit's knee is 110; the measured curve (waves) flattens at 48 */
    tidal_service_config ls = {
        .name = "ls", .cls = TIDAL_SERVICE_LS, .slo_us = 500, .profile = &bert, .demand_sms = 48};
    int id;
    assert_int_equal(tidal_policy_add_service(p, &ls, &id), TIDAL_OK);
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    tidal_policy_request_begin(p, id, 0);
    assert_string_equal(mask_of(p, id), "0-47");
    assert_string_equal(mask_of(p, be), "48-131");
    tidal_service_config odd = {.name = "odd", .cls = TIDAL_SERVICE_LS, .slo_us = 500, .demand_sms = 47};
    assert_int_equal(tidal_policy_add_service(p, &odd, NULL), TIDAL_ERR_INVALID);
    tidal_policy_destroy(p);

    p = make(&w, TIDAL_POLICY_GSLICE, NULL);
    assert_int_equal(tidal_policy_add_service(p, &ls, &id), TIDAL_OK);
    assert_string_equal(mask_of(p, id), "0-47"); /* GSLICE starts there too */
    tidal_policy_destroy(p);
}

/* ls_first (an L2 side, say): LS takes its SMs from there first, in SM order, then from the
 * others; BE takes the rest. */
static void test_ls_first(void **state)
{
    (void)state;
    world w;
    memset(&w, 0, sizeof w);
    w.now = 1000;
    w.fail_service = -1;
    tidal_policy_config c = {
        .kind = TIDAL_POLICY_SGDRC, .sms = 132, .now_us = fake_now, .apply = fake_apply, .ctx = &w};
    /* side 0: pairs {0,1}, {4,5}, ..., {128,129}: 66 SMs */
    for (unsigned b = 0; b < 132; b++)
        if ((b / 2) % 2 == 0) c.ls_first.bits[b >> 6] |= 1ull << (b & 63);
    tidal_policy *p = NULL;
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_OK);
    tidal_service_config ls = {
        .name = "ls", .cls = TIDAL_SERVICE_LS, .slo_us = 500, .profile = &bert, .demand_sms = 40};
    int id;
    assert_int_equal(tidal_policy_add_service(p, &ls, &id), TIDAL_OK);
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    assert_int_equal(tidal_policy_request_begin(p, id, 0), TIDAL_OK);
    assert_string_equal(mask_of(p, id), "0-1,4-5,8-9,12-13,16-17,20-21,24-25,28-29,32-33,36-37,40-41,44-45,48-49,52-53,"
                                        "56-57,60-61,64-65,68-69,72-73,76-77");
    /* BE: side 0's other 26 SMs first, then side 1: everything LS does not hold */
    tidal_smset lm, bm;
    assert_int_equal(tidal_policy_share(p, id, &lm, NULL), TIDAL_OK);
    assert_int_equal(tidal_policy_share(p, be, &bm, NULL), TIDAL_OK);
    for (unsigned k = 0; k < 4; k++) assert_int_equal(lm.bits[k] & bm.bits[k], 0);
    assert_int_equal(tidal_smset_count(&lm) + tidal_smset_count(&bm), 132);
    tidal_policy_destroy(p);
    /* a demand larger than the set: all of it, then the others from the lowest */
    ls.demand_sms = 80;
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_OK);
    assert_int_equal(tidal_policy_add_service(p, &ls, &id), TIDAL_OK);
    add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    assert_int_equal(tidal_policy_request_begin(p, id, 0), TIDAL_OK);
    assert_int_equal(tidal_policy_share(p, id, &lm, NULL), TIDAL_OK);
    assert_int_equal(tidal_smset_count(&lm), 80);
    for (unsigned k = 0; k < 4; k++) assert_int_equal(c.ls_first.bits[k] & ~lm.bits[k], 0);
    assert_true((lm.bits[0] >> 2) & 1 && (lm.bits[0] >> 27) & 1 && !((lm.bits[0] >> 30) & 1)); /* 2-3 ... 26-27 */
    tidal_policy_destroy(p);
    /* a set that splits a slice, or names SMs past the range: refused */
    tidal_policy_config bad = c;
    bad.ls_first.bits[0] |= 1ull << 2; /* SM 2 without SM 3 */
    assert_int_equal(tidal_policy_create(&bad, &p), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "splits the slice of SMs 2-3"));
    bad = c;
    bad.ls_first.bits[2] |= 1ull << (140 - 128);
    assert_int_equal(tidal_policy_create(&bad, &p), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "SM 140 of 132"));
}

/* ------------------------------------------------------------------ GSLICE */

static void test_gslice_initial_shares(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_GSLICE, NULL);
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, &bert);  /* at its knee */
    int cnn = add(p, "cnn", TIDAL_SERVICE_LS, 500, NULL); /* no profile: even split of 132/2 */
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    assert_string_equal(mask_of(p, ls), "0-109");
    assert_string_equal(mask_of(p, cnn), "110-129"); /* what was left, less BE's slice */
    assert_string_equal(mask_of(p, be), "130-131");
    /* no room at all for a fourth */
    tidal_service_config s = {.name = "x", .cls = TIDAL_SERVICE_LS, .slo_us = 1, .min_sms = 4};
    assert_int_equal(tidal_policy_add_service(p, &s, NULL), TIDAL_ERR_SMS);
    assert_string_equal(mask_of(p, be), "130-131");
    tidal_policy_destroy(p);
}

static void run_window(tidal_policy *p, int id, double latency)
{
    for (int i = 0; i < 8; i++) {
        assert_int_equal(tidal_policy_request_begin(p, id, 0), TIDAL_OK);
        assert_int_equal(tidal_policy_request_end(p, id, latency, 1), TIDAL_OK);
    }
}

static void test_gslice_even_split_counts_later_services(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_GSLICE, NULL);
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, NULL); /* alone: all of it, for now */
    assert_string_equal(mask_of(p, ls), "0-131");
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL); /* the even split of two, not one slice */
    assert_string_equal(mask_of(p, ls), "0-65");
    assert_string_equal(mask_of(p, be), "66-131");
    run_window(p, ls, 470); /* tuned (above 0.9 of the SLO: +4) ... */
    assert_string_equal(mask_of(p, ls), "0-69");
    int be2 = add(p, "be2", TIDAL_SERVICE_BE, 0, NULL); /* ... so no longer re-evened */
    assert_string_equal(mask_of(p, ls), "0-69");
    assert_true(strlen(mask_of(p, be)) > 0 && strlen(mask_of(p, be2)) > 0); /* the rest, shared */
    tidal_policy_destroy(p);
}

static void test_gslice_tunes(void **state)
{
    (void)state;
    world w;
    char trace[] = "/tmp/tidal-policy-trace-XXXXXX";
    int fd = mkstemp(trace);
    assert_true(fd >= 0);
    close(fd);
    tidal_policy *p = make(&w, TIDAL_POLICY_GSLICE, trace);
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL), ls = add(p, "ls", TIDAL_SERVICE_LS, 1000, NULL);
    assert_string_equal(mask_of(p, ls), "0-65"); /* no profile: an even split of two */
    /* 7 slow requests do not make a window yet */
    for (int i = 0; i < 7; i++) tidal_policy_request_end(p, ls, 950, 1);
    assert_string_equal(mask_of(p, ls), "0-65");
    w.napplied = 0;
    tidal_policy_request_end(p, ls, 700, 1); /* window worst 950 > 900: +4 */
    assert_string_equal(mask_of(p, ls), "0-69");
    assert_string_equal(mask_of(p, be), "70-131");
    assert_int_equal(w.applied[0].service, be); /* BE shrank first */
    run_window(p, ls, 700);                     /* between 600 and 900: kept */
    assert_string_equal(mask_of(p, ls), "0-69");
    run_window(p, ls, 300); /* slack: -4 */
    assert_string_equal(mask_of(p, ls), "0-65");
    assert_int_equal(w.applied[w.napplied - 2].service, ls); /* LS shrank first */
    for (int i = 0; i < 40; i++) run_window(p, ls, 1);       /* down to min_sms */
    assert_string_equal(mask_of(p, ls), "0-1");
    for (int i = 0; i < 40; i++) run_window(p, ls, 5000); /* up until BE has one slice */
    assert_string_equal(mask_of(p, ls), "0-129");
    assert_string_equal(mask_of(p, be), "130-131");
    tidal_policy_destroy(p);

    FILE *f = fopen(trace, "r");
    assert_non_null(f);
    char line[2048];
    int tunes = 0, grows = 0, kept = 0, nogive = 0;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(strncmp(line, "{\"t_us\":", 8), 0);
        assert_non_null(strstr(line, "\"policy\":\"gslice\""));
        if (strstr(line, "\"event\":\"tune\"")) tunes++;
        if (strstr(line, "+4 SMs") && strstr(line, "\"masks\":{\"be\":\"70-131\",\"ls\":\"0-69\"}")) grows++;
        if (strstr(line, "share 70 kept")) kept++;
        if (strstr(line, "no SMs to give")) nogive++;
    }
    fclose(f);
    unlink(trace);
    assert_true(tunes >= 80);
    assert_true(grows >= 1 && kept == 1 && nogive >= 1);
}

static void test_gslice_batching(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_GSLICE, NULL);
    tidal_service_config s = {.name = "ls", .cls = TIDAL_SERVICE_LS, .slo_us = 10000, .max_batch = 8};
    int ls;
    assert_int_equal(tidal_policy_add_service(p, &s, &ls), TIDAL_OK);
    unsigned b;
    uint64_t wait;
    assert_int_equal(tidal_policy_batch(p, ls, 1000, 1, &b, &wait), TIDAL_OK);
    assert_int_equal(b, 1); /* nothing known yet */
    assert_int_equal(wait, 5000);
    tidal_policy_request_end(p, ls, 1000, 1);
    /* est(k) = 1000 k <= 5000 and the fill (k-1) ms <= 5 ms: 5 */
    tidal_policy_batch(p, ls, 1000, 1, &b, &wait);
    assert_int_equal(b, 5);
    tidal_policy_request_end(p, ls, 2000, 5);
    /* est(6) = 2400; est(7) fits but fills in 6 ms > 5 */
    tidal_policy_batch(p, ls, 1000, 1, &b, &wait);
    assert_int_equal(b, 6);
    tidal_policy_batch(p, ls, 100000, 1, &b, &wait); /* fast arrivals: the budget decides */
    assert_int_equal(b, 8);
    tidal_policy_batch(p, ls, 0, 1, &b, &wait);
    assert_int_equal(b, 1);
    assert_int_equal(tidal_policy_batch(p, ls, -1, 1, &b, &wait), TIDAL_ERR_INVALID);
    tidal_policy_destroy(p);
}

/* ResNet-50 b1-b8 on the H200 (session 15): b1 466, b2 443, b4 582, b8 767 us. */
static const double cnn_batches[][2] = {{1, 466}, {2, 443}, {4, 582}, {8, 767}};

/* A GSLICE policy with one LS service "cnn" (max_batch 8) at slo_us, its batch sizes
 * profiled when `profiled`. */
static tidal_policy *cnn_policy(world *w, double slo_us, int profiled, int *ls)
{
    tidal_policy *p = make(w, TIDAL_POLICY_GSLICE, NULL);
    tidal_service_config s = {.name = "cnn", .cls = TIDAL_SERVICE_LS, .slo_us = slo_us, .max_batch = 8};
    assert_int_equal(tidal_policy_add_service(p, &s, ls), TIDAL_OK);
    for (unsigned i = 0; profiled && i < 4; i++)
        assert_int_equal(tidal_policy_batch_profile(p, *ls, (unsigned)cnn_batches[i][0], cnn_batches[i][1]), TIDAL_OK);
    return p;
}

/* Requests already queued need no filling: at an arrival rate too slow to fill a batch
 * within the queueing budget, the ones waiting are still taken together (the budget on the
 * batch's latency still holds; ResNet-50's sizes, cnn_batches). */
static void test_gslice_batches_the_queue(void **state)
{
    (void)state;
    world w;
    int ls;
    tidal_policy *p = cnn_policy(&w, 951, 1, &ls);
    unsigned b;
    uint64_t wait;
    /* 1500/s: a second request comes in 667 us on average, past the 475.5 us queueing budget */
    assert_int_equal(tidal_policy_batch(p, ls, 1500, 1, &b, &wait), TIDAL_OK);
    assert_int_equal(b, 1);
    assert_int_equal(wait, 475);
    tidal_policy_batch(p, ls, 1500, 2, &b, &wait); /* two waiting: b2 (443 us) fits the budget */
    assert_int_equal(b, 2);
    tidal_policy_batch(p, ls, 1500, 5, &b, &wait); /* b3-b5 are guessed above the budget, b4 is 582 */
    assert_int_equal(b, 2);
    tidal_policy_batch(p, ls, 0, 2, &b, &wait); /* no rate known: the queue alone */
    assert_int_equal(b, 2);
    tidal_policy_batch(p, ls, 0, 0, &b, &wait); /* 0 queued counts as the front request */
    assert_int_equal(b, 1);
    tidal_policy_destroy(p);
}

/* A profile of the batch sizes lets GSLICE batch where the batch-1 latency alone would not:
 * ResNet-50 (cnn_batches). */
static void test_gslice_batch_profile(void **state)
{
    (void)state;
    world w;
    int ls;
    tidal_policy *p = cnn_policy(&w, 951, 0, &ls);
    unsigned b;
    uint64_t wait;
    /* measured at batch 1 only: b2 is guessed at 2 x 466 > the 475.5 us budget */
    tidal_policy_request_end(p, ls, 466, 1);
    assert_int_equal(tidal_policy_batch(p, ls, 10000, 1, &b, &wait), TIDAL_OK);
    assert_int_equal(b, 1);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(tidal_policy_batch_profile(p, ls, (unsigned)cnn_batches[i][0], cnn_batches[i][1]), TIDAL_OK);
    /* b2 (443 us) fits the budget and fills in 100 us at 10000/s; b3 is guessed from b2
     * (664.5 us) and b4 is 582: both above it */
    tidal_policy_batch(p, ls, 10000, 1, &b, &wait);
    assert_int_equal(b, 2);
    /* a looser SLO's budget takes b8 once it fills in time */
    tidal_policy_destroy(p);
    p = cnn_policy(&w, 2000, 1, &ls);
    tidal_policy_batch(p, ls, 100000, 1, &b, &wait);
    assert_int_equal(b, 8);
    /* bad sizes and latencies */
    assert_int_equal(tidal_policy_batch_profile(p, ls, 0, 100), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_batch_profile(p, ls, 9, 100), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "batch 9 (1..8)"));
    assert_int_equal(tidal_policy_batch_profile(p, ls, 2, 0), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_batch_profile(p, ls, 2, NAN), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_batch_profile(p, 7, 2, 100), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_batch_profile(NULL, ls, 2, 100), TIDAL_ERR_INVALID);
    tidal_policy_destroy(p);
}

/* ------------------------------------------------------------------ errors, state */

static void test_errors(void **state)
{
    (void)state;
    tidal_policy *p = NULL;
    tidal_policy_config bad = {.kind = 7, .sms = 132};
    assert_int_equal(tidal_policy_create(&bad, &p), TIDAL_ERR_INVALID);
    tidal_policy_config odd = {.kind = TIDAL_POLICY_SGDRC, .sms = 131};
    assert_int_equal(tidal_policy_create(&odd, &p), TIDAL_ERR_INVALID); /* not in slices of 2 */
    tidal_policy_config lohi = {.kind = TIDAL_POLICY_GSLICE, .sms = 132, .slo_low = 0.9, .slo_high = 0.5};
    assert_int_equal(tidal_policy_create(&lohi, &p), TIDAL_ERR_INVALID);
    tidal_policy_config notrace = {.kind = TIDAL_POLICY_GSLICE, .sms = 132, .trace_path = "/nonexistent/dir/t"};
    assert_int_equal(tidal_policy_create(&notrace, &p), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "/nonexistent/dir/t"));

    world w;
    p = make(&w, TIDAL_POLICY_SGDRC, NULL);
    tidal_service_config noslo = {.name = "ls", .cls = TIDAL_SERVICE_LS};
    assert_int_equal(tidal_policy_add_service(p, &noslo, NULL), TIDAL_ERR_INVALID);
    tidal_service_config badname = {.name = "a b", .cls = TIDAL_SERVICE_BE};
    assert_int_equal(tidal_policy_add_service(p, &badname, NULL), TIDAL_ERR_PARSE);
    tidal_service_config oddmin = {.name = "be", .cls = TIDAL_SERVICE_BE, .min_sms = 3};
    assert_int_equal(tidal_policy_add_service(p, &oddmin, NULL), TIDAL_ERR_INVALID);
    int be = add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    tidal_service_config dup = {.name = "be", .cls = TIDAL_SERVICE_BE};
    assert_int_equal(tidal_policy_add_service(p, &dup, NULL), TIDAL_ERR_EXISTS);
    assert_int_equal(tidal_policy_request_begin(p, 5, 0), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_request_end(p, be, -1, 1), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_policy_request_end(p, be, 10, 0), TIDAL_ERR_INVALID);
    tidal_scaling m;
    assert_int_equal(tidal_policy_model(p, be, &m, NULL), TIDAL_ERR_NOT_FOUND);
    /* a failing apply: the status comes back, the masks already applied stay */
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, &bert);
    w.fail_service = be;
    assert_int_equal(tidal_policy_request_begin(p, ls, 0), TIDAL_ERR_CUDA);
    assert_string_equal(mask_of(p, be), "0-131");
    w.fail_service = -1;
    tidal_policy_request_end(p, ls, 1, 1);
    tidal_policy_destroy(p);

    /* no partition and no hook */
    tidal_policy_config c = {.kind = TIDAL_POLICY_SGDRC, .sms = 132};
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_OK);
    tidal_service_config nopart = {.name = "be", .cls = TIDAL_SERVICE_BE};
    assert_int_equal(tidal_policy_add_service(p, &nopart, NULL), TIDAL_ERR_INVALID);
    tidal_policy_destroy(p);
}

static void test_state_json(void **state)
{
    (void)state;
    world w;
    tidal_policy *p = make(&w, TIDAL_POLICY_SGDRC, NULL);
    int ls = add(p, "bert", TIDAL_SERVICE_LS, 500, &bert);
    add(p, "be", TIDAL_SERVICE_BE, 0, NULL);
    tidal_policy_request_begin(p, ls, 0);
    int n = tidal_policy_state(p, NULL, 0);
    assert_true(n > 0);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(tidal_policy_state(p, buf, (size_t)n + 1), n);
    assert_non_null(strstr(buf, "{\"policy\":\"sgdrc\",\"sms\":132,\"grain\":2,"));
    assert_non_null(strstr(buf, "{\"name\":\"bert\",\"class\":\"ls\",\"mask\":\"0-109\",\"sms\":110,\"inflight\":1"));
    assert_non_null(strstr(buf, "\"model\":{\"a_us\":4000.000,\"b_us\":100.000,\"online\":0}"));
    assert_non_null(strstr(buf, "{\"name\":\"be\",\"class\":\"be\",\"mask\":\"110-131\""));
    char small[10];
    assert_int_equal(tidal_policy_state(p, small, sizeof small), n); /* truncated, still terminated */
    assert_int_equal(strlen(small), 9);
    free(buf);
    tidal_policy_destroy(p);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* The state file (state_path): written at create, by tick when due and changed, replaced
 * whole, removed by destroy; a path that cannot be written fails create. */
static void test_state_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/tidal-policy-state-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], tmp[300];
    snprintf(path, sizeof path, "%s/state.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    world w;
    memset(&w, 0, sizeof w);
    w.now = 1000, w.fail_service = -1;
    tidal_policy_config c = {.kind = TIDAL_POLICY_SGDRC,
                             .sms = 132,
                             .now_us = fake_now,
                             .apply = fake_apply,
                             .ctx = &w,
                             .state_path = path,
                             .state_every_ms = 50};
    tidal_policy *p = NULL;
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_OK);
    assert_non_null(strstr(read_all(path), "\"services\":[]}"));
    int ls = add(p, "ls", TIDAL_SERVICE_LS, 500, &bert);
    assert_int_equal(tidal_policy_tick(p), TIDAL_OK); /* not due yet (50 ms) */
    assert_null(strstr(read_all(path), "\"ls\""));
    w.now += 50000;
    assert_int_equal(tidal_policy_tick(p), TIDAL_OK);
    assert_non_null(strstr(read_all(path), "\"name\":\"ls\""));
    assert_int_equal(access(tmp, F_OK), -1); /* renamed over, nothing left behind */
    assert_int_equal(tidal_policy_request_begin(p, ls, 0), TIDAL_OK);
    w.now += 50000;
    assert_int_equal(tidal_policy_tick(p), TIDAL_OK);
    assert_non_null(strstr(read_all(path), "\"inflight\":1,\"requests\":1"));
    assert_int_equal(tidal_policy_destroy(p), TIDAL_OK);
    assert_int_equal(access(path, F_OK), -1);
    /* a directory that is not there */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/dir/state.json", dir);
    c.state_path = bad;
    p = NULL;
    assert_int_equal(tidal_policy_create(&c, &p), TIDAL_ERR_INVALID);
    assert_null(p);
    assert_non_null(strstr(tidal_last_error(), "no/such/dir/state.json.tmp"));
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recovers_model),
        cmocka_unit_test(test_fit_rejects_and_clamps),
        cmocka_unit_test(test_knee),
        cmocka_unit_test(test_sgdrc_reserve_and_release),
        cmocka_unit_test(test_sgdrc_idle_hold),
        cmocka_unit_test(test_sgdrc_window_max),
        cmocka_unit_test(test_sgdrc_two_ls_keep_places),
        cmocka_unit_test(test_online_model_replaces_profile),
        cmocka_unit_test(test_measured_demand_beats_the_fit),
        cmocka_unit_test(test_ls_first),
        cmocka_unit_test(test_gslice_initial_shares),
        cmocka_unit_test(test_gslice_tunes),
        cmocka_unit_test(test_gslice_even_split_counts_later_services),
        cmocka_unit_test(test_gslice_batching),
        cmocka_unit_test(test_gslice_batch_profile),
        cmocka_unit_test(test_gslice_batches_the_queue),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_state_json),
        cmocka_unit_test(test_state_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
