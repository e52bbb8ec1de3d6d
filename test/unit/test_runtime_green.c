/* test_runtime_green.c — placement in green contexts against the fake driver's
 * green-context API (fake_green_on: 66 groups of 2 SMs, 16 co-schedulable groups of 8):
 * the %smid map green.c measures, partition streams in the contexts of their sets, and
 * launches with thread-block clusters larger than a 2-SM group's, which go to the
 * partition's cluster groups on a route stream ordered by a fork and a join event. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime_internal.h"
#include "tidal.h"
#include "tidal_abi.h"

#include "fake_driver.h"

static int green_setup(void **state)
{
    fake_reset();
    fake_green_on();
    unsetenv("TIDAL_PARTITION");
    unsetenv("TIDAL_GREEN");
    setenv("TIDAL_NO_DAEMON", "1", 1);
    tidal__set_driver(&fake);
    (void)state;
    return tidal_init(0) == TIDAL_OK ? 0 : -1;
}

static void set_of(tidal_smset *s, unsigned lo, unsigned hi)
{
    memset(s, 0, sizeof *s);
    for (unsigned i = lo; i <= hi; i++) s->bits[i >> 6] |= 1ull << (i & 63);
}

/* A cuLaunchKernelEx of the plain kernel u with clusters of `cluster` blocks on s. */
static CUresult launch_ex(CUstream s, unsigned cluster)
{
    static uint64_t a0 = 1;
    static void *params[] = {&a0};
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = cluster;
    at.value.clusterDim.y = 1;
    at.value.clusterDim.z = 1;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = 64;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 128;
    c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    c.attrs = &at;
    c.numAttrs = 1;
    tidal_launch_req q = {
        .f = (CUfunction)&fu, .grid = {64, 1, 1}, .block = {128, 1, 1}, .stream = s, .params = params, .ex = &c};
    return tidal__launch(&q);
}

static tidal_stats stats_now(void)
{
    tidal_stats st;
    assert_int_equal(tidal_stats_get(NULL, &st), TIDAL_OK);
    return st;
}

/* The map is measured: a partition of whole 2-SM groups is placed in a green context of
 * exactly its SMs, whose stream has the asked priority. */
static void test_placed_stream(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("ls", "0-65", &p), TIDAL_OK);
    assert_int_equal(tidal_partition_placed(p), 1);
    void *s = NULL;
    assert_int_equal(tidal_partition_stream(p, -1, &s), TIDAL_OK);
    const fake_green_obj *o = fake_green_stream((CUstream)s);
    assert_non_null(o);
    tidal_smset want;
    set_of(&want, 0, 65);
    assert_memory_equal(&o->set, &want, sizeof want);
    assert_int_equal(o->grain, 2);
    assert_int_equal(o->priority, -1);
    /* odd SM counts are no union of 2-SM groups */
    tidal_part *q;
    assert_int_equal(tidal_partition_create("odd", "0-64", &q), TIDAL_OK);
    assert_int_equal(tidal_partition_placed(q), 0);
    assert_int_equal(tidal_stream_bind(s, NULL), TIDAL_OK);
    assert_int_equal(fake_errors, 0);
}

/* Clusters of more than 2 blocks on a stream of 2-SM groups go to the route: a stream of
 * the same priority in a green context of the 8-SM groups inside the partition (SMs 0-63
 * of 0-65), after a fork event recorded on the stream, before a join event the stream
 * waits for. Clusters of 1 or 2 stay on the stream. */
static void test_cluster_route(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("ls", "0-65", &p), TIDAL_OK);
    void *sv = NULL;
    assert_int_equal(tidal_partition_stream(p, -2, &sv), TIDAL_OK);
    CUstream s = (CUstream)sv;
    tidal_stats st0 = stats_now();

    fake_norder = 0;
    assert_int_equal(launch_ex(s, 2), CUDA_SUCCESS);
    assert_ptr_equal(last.stream, s);
    assert_int_equal(fake_norder, 1); /* the launch only */

    fake_norder = 0;
    assert_int_equal(launch_ex(s, 4), CUDA_SUCCESS);
    CUstream route = last.stream;
    const fake_green_obj *ro = fake_green_stream(route);
    assert_non_null(ro);
    assert_true(route != s);
    tidal_smset want;
    set_of(&want, 0, 63);
    assert_memory_equal(&ro->set, &want, sizeof want);
    assert_int_equal(ro->grain, 8);
    assert_int_equal(ro->priority, -2);
    assert_int_equal(fake_norder, 5);
    const void *fork = fake_order[0].a, *join = fake_order[3].a;
    assert_true(fake_order[0].op == 'r' && fake_order[0].b == s);                                /* fork on s */
    assert_true(fake_order[1].op == 'w' && fake_order[1].a == route && fake_order[1].b == fork); /* route waits */
    assert_true(fake_order[2].op == 'l' && fake_order[2].a == route);                            /* the launch */
    assert_true(fake_order[3].op == 'r' && fake_order[3].b == route);                            /* join */
    assert_true(fake_order[4].op == 'w' && fake_order[4].a == s && fake_order[4].b == join);     /* s waits */
    assert_true(fork != join);
    assert_int_equal(last.via_ex, 1);
    assert_int_equal(last.grid[0], 64); /* as given but for the stream */

    /* a function's own cluster size (.reqnctapercluster), on a plain launch */
    static fake_fn fuc = {"uc", &mplain, 1, {0}, {8}, 0, 0, NULL, 0, 8};
    uint64_t a0 = 1;
    void *params[] = {&a0};
    fake_norder = 0;
    assert_int_equal(tidal_launch_kernel(&fuc, 16, 1, 1, 64, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.stream, route);
    assert_int_equal(fake_norder, 5);

    tidal_stats st1 = stats_now();
    assert_int_equal(st1.launches_cluster_routed - st0.launches_cluster_routed, 2);

    /* larger than a cluster group: refused on the route, and still joined back */
    fake_norder = 0;
    assert_int_equal(launch_ex(s, 16), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    assert_int_equal(fake_norder, 5);
    assert_true(fake_order[4].op == 'w' && fake_order[4].a == s);
    assert_int_equal(stats_now().launches_cluster_routed - st0.launches_cluster_routed, 2);

    /* unbound (before the caller destroys it): its route goes */
    unsigned streams = fake_green_streams;
    assert_int_equal(tidal_stream_bind(sv, NULL), TIDAL_OK);
    assert_int_equal(fake_green_streams, streams - 1);
    fake_norder = 0;
    assert_int_equal(launch_ex(s, 4), CUDA_ERROR_INVALID_CLUSTER_SIZE); /* as given, refused */
    assert_ptr_equal(last.stream, s);
}

/* A partition that is a union of 8-SM groups gets a stream in their context: clusters run
 * there as given, with no route. One with no 8-SM group inside has no route: a large
 * cluster fails as the driver says. */
static void test_cluster_native_and_none(void **state)
{
    (void)state;
    tidal_part *p, *q;
    assert_int_equal(tidal_partition_create("eight", "64-127", &p), TIDAL_OK);
    assert_int_equal(tidal_partition_create("small", "128-131", &q), TIDAL_OK);
    void *sp = NULL, *sq = NULL;
    unsigned before = fake_green_streams;
    assert_int_equal(tidal_partition_stream(p, 0, &sp), TIDAL_OK);
    assert_int_equal(fake_green_streams, before + 1); /* no route stream */
    assert_int_equal(fake_green_stream((CUstream)sp)->grain, 8);
    fake_norder = 0;
    assert_int_equal(launch_ex((CUstream)sp, 8), CUDA_SUCCESS);
    assert_ptr_equal(last.stream, sp);
    assert_int_equal(fake_norder, 1);

    assert_int_equal(tidal_partition_stream(q, 0, &sq), TIDAL_OK);
    assert_int_equal(fake_green_stream((CUstream)sq)->grain, 2);
    assert_int_equal(launch_ex((CUstream)sq, 2), CUDA_SUCCESS);
    assert_int_equal(launch_ex((CUstream)sq, 4), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    assert_ptr_equal(last.stream, sq);
    assert_int_equal(stats_now().launches_cluster_routed, 0);
    assert_int_equal(tidal_stream_bind(sp, NULL), TIDAL_OK);
    assert_int_equal(tidal_stream_bind(sq, NULL), TIDAL_OK);
}

/* Two partitions on the same cluster groups share one cluster context; shutdown destroys
 * every route stream and context libtidal made. */
static void test_routes_teardown(void **state)
{
    (void)state;
    tidal_part *a, *b;
    assert_int_equal(tidal_partition_create("a", "0-65", &a), TIDAL_OK);
    assert_int_equal(tidal_partition_create("b", "0-67", &b), TIDAL_OK);
    void *sa = NULL, *sb = NULL, *sa2 = NULL;
    assert_int_equal(tidal_partition_stream(a, 0, &sa), TIDAL_OK);
    unsigned ctxs = fake_green_ctxs;
    assert_int_equal(tidal_partition_stream(a, 0, &sa2), TIDAL_OK);
    assert_int_equal(fake_green_ctxs, ctxs); /* both contexts cached */
    assert_int_equal(tidal_partition_stream(b, 0, &sb), TIDAL_OK);
    assert_int_equal(fake_green_ctxs, ctxs + 1); /* b's own placement context only */
    assert_true(fake_green_streams == 6);        /* three streams, three routes */
    tidal_shutdown();
    assert_int_equal(fake_green_streams, 3); /* the caller's three remain theirs */
    assert_int_equal(fake_green_ctxs, 0);
    assert_int_equal(fake_errors, 0);
    assert_int_equal(tidal_init(0), TIDAL_OK); /* for the teardown */
}

/* TIDAL_GREEN=0: no placement, no green context, no route. */
static void test_green_off(void **state)
{
    (void)state;
    tidal_shutdown();
    setenv("TIDAL_GREEN", "0", 1);
    assert_int_equal(tidal_init(0), TIDAL_OK);
    tidal_part *p;
    assert_int_equal(tidal_partition_create("ls", "0-65", &p), TIDAL_OK);
    assert_int_equal(tidal_partition_placed(p), 0);
    void *s = NULL;
    assert_int_equal(tidal_partition_stream(p, 0, &s), TIDAL_OK);
    assert_null(fake_green_stream((CUstream)s));
    assert_int_equal(fake_green_ctxs, 0);
    assert_int_equal(tidal_stream_bind(s, NULL), TIDAL_OK);
    unsetenv("TIDAL_GREEN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_placed_stream, green_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_cluster_route, green_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_cluster_native_and_none, green_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_routes_teardown, green_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_green_off, green_setup, fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
