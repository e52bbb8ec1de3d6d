/* test_runtime.c — libtidal against a fake driver table (no GPU): SM sets, partitions
 * and their device control blocks, stream bindings, module attachment, and the launch
 * path (which kernel is launched, with what grid and parameters). "Device memory" is host
 * memory; launches are recorded, not run. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime_internal.h"
#include "tidal.h"
#include "tidal_abi.h"

#include "fake_driver.h"

/* ------------------------------------------------------------------ SM sets */

static void test_smset_parse_format(void **state)
{
    (void)state;
    tidal_smset s;
    int all = -1;
    size_t pos = 0;
    char buf[128];
    assert_int_equal(tidal_smset_parse("0-47,64,100-131", &s, &all, &pos), TIDAL_OK);
    assert_int_equal(all, 0);
    assert_int_equal(tidal_smset_count(&s), 48 + 1 + 32);
    tidal_smset_format(&s, buf, sizeof buf);
    assert_string_equal(buf, "0-47,64,100-131");
    assert_int_equal(tidal_smset_parse(" 3 - 5 , 1 ", &s, NULL, NULL), TIDAL_OK);
    tidal_smset_format(&s, buf, sizeof buf);
    assert_string_equal(buf, "1,3-5");
    assert_int_equal(tidal_smset_parse("none", &s, NULL, NULL), TIDAL_OK);
    assert_int_equal(tidal_smset_count(&s), 0);
    tidal_smset_format(&s, buf, sizeof buf);
    assert_string_equal(buf, "none");
    assert_int_equal(tidal_smset_parse("all", &s, &all, NULL), TIDAL_OK);
    assert_int_equal(all, 1);
    assert_int_equal(tidal_smset_count(&s), 256);
    /* errors name the offset */
    assert_int_equal(tidal_smset_parse("5-3", &s, NULL, &pos), TIDAL_ERR_PARSE);
    assert_int_equal(tidal_smset_parse("1,,2", &s, NULL, &pos), TIDAL_ERR_PARSE);
    assert_int_equal(pos, 2);
    assert_int_equal(tidal_smset_parse("256", &s, NULL, &pos), TIDAL_ERR_PARSE);
    assert_int_equal(tidal_smset_parse("x", &s, NULL, &pos), TIDAL_ERR_PARSE);
    assert_int_equal(pos, 0);
    assert_int_equal(tidal_smset_parse("1-2x", &s, NULL, &pos), TIDAL_ERR_PARSE);
    assert_int_equal(pos, 3);
    /* formatting into a short buffer truncates but reports the full length */
    tidal_smset_parse("0,2,4,6,8", &s, NULL, NULL);
    assert_int_equal(tidal_smset_format(&s, buf, 4), strlen("0,2,4,6,8"));
    assert_string_equal(buf, "0,2");
}

/* ------------------------------------------------------------------ init, partitions */

static void test_no_driver(void **state)
{
    (void)state;
    tidal_shutdown();
    tidal__set_driver(NULL);
    setenv("TIDAL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    assert_int_equal(tidal_init(0), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "/nonexistent/libcuda.so.1"));
    tidal_part *p;
    assert_int_equal(tidal_partition_create("ls", "0-3", &p), TIDAL_ERR_NOT_INIT);
    unsetenv("TIDAL_LIBCUDA");
    tidal__set_driver(&fake);
    assert_int_equal(tidal_init(0), TIDAL_OK);
}

/* Launch k once on a stream bound to p and return the tidal_launch it got. */
static tidal_launch launch_k(tidal_part *p, unsigned grid, CUstream s)
{
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    assert_int_equal(tidal_launch_kernel(&fk, grid, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    tidal_launch tl;
    memset(&tl, 0, sizeof tl);
    if (last.f == (CUfunction)&fkc) memcpy(&tl, last.params[2], sizeof tl);
    return tl;
}

static void test_partitions(void **state)
{
    (void)state;
    tidal_part *ls, *be, *x;
    unsigned nsm;
    assert_int_equal(tidal_device_sms(&nsm), TIDAL_OK);
    assert_int_equal(nsm, NSM);
    assert_int_equal(tidal_partition_create("ls", "0-47", &ls), TIDAL_OK);
    assert_string_equal(tidal_partition_name(ls), "ls");
    assert_int_equal(tidal_partition_create("ls", "1", &x), TIDAL_ERR_EXISTS);
    assert_int_equal(tidal_partition_create("bad name", "1", &x), TIDAL_ERR_PARSE);
    assert_int_equal(tidal_partition_create("be", "48-200", &x), TIDAL_ERR_SMS);
    assert_non_null(strstr(tidal_last_error(), "SM 132"));
    assert_int_equal(tidal_partition_create("be", "48-", &x), TIDAL_ERR_PARSE);
    assert_int_equal(tidal_partition_create("be", "all", &be), TIDAL_OK);
    tidal_smset m;
    tidal_partition_get_mask(be, &m);
    assert_int_equal(tidal_smset_count(&m), NSM); /* "all" = this device's SMs */

    /* the device block: header mask, slot table size, histogram pointer */
    tidal_launch tl = launch_k(ls, 1000, (CUstream)0x77);
    assert_int_not_equal(tl.partition, 0);
    const tidal_partition *dp = (const tidal_partition *)(uintptr_t)tl.partition;
    assert_int_equal(dp->mask[0], ~0ull >> 16);
    assert_int_equal(dp->mask[1], 0);
    assert_int_equal(dp->slot_mask, 127);  /* probe slots - 1 */
    assert_int_equal(dp->probe_base, 128); /* after the stream slots */
    assert_int_not_equal(dp->sm_blocks, 0);

    /* live change reaches the device block */
    assert_int_equal(tidal_partition_set(ls, "0-3,64"), TIDAL_OK);
    assert_int_equal(dp->mask[0], 0xfull);
    assert_int_equal(dp->mask[1], 1ull);
    assert_int_equal(tidal_partition_set(ls, "0-,"), TIDAL_ERR_PARSE);
    assert_int_equal(dp->mask[0], 0xfull); /* a failed set changes nothing */

    /* bound partitions cannot go away */
    assert_int_equal(tidal_partition_destroy(ls), TIDAL_ERR_BUSY);
    tidal_stream_bind((CUstream)0x77, NULL);
    assert_int_equal(tidal_partition_destroy(ls), TIDAL_OK);
    assert_int_equal(tidal_partition_find("ls", &x), TIDAL_ERR_NOT_FOUND);
    assert_int_equal(tidal_partition_find("be", &x), TIDAL_OK);
    assert_ptr_equal(x, be);

    alloc_fail = 1;
    assert_int_equal(tidal_partition_create("oom", "1", &x), TIDAL_ERR_CUDA);
    assert_non_null(strstr(tidal_last_error(), "CUDA_ERROR_OUT_OF_MEMORY"));
    alloc_fail = 0;
}

/* ------------------------------------------------------------------ launches */

static void test_launch_reshapes(void **state)
{
    (void)state;
    tidal_part *ls;
    assert_int_equal(tidal_partition_create("ls", "0-47", &ls), TIDAL_OK);
    CUstream s = (CUstream)0x99;
    uint64_t a0 = 7;
    int a1 = 3;
    void *params[] = {&a0, &a1};
    tidal_stream_bind(s, ls);

    /* small grid: one worker per logical block, chunk 1 */
    assert_int_equal(tidal_launch_kernel(&fk, 100, 2, 1, 128, 2, 1, 512, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(last.grid[0], 200);
    assert_int_equal(last.grid[1], 1);
    assert_int_equal(last.block[0], 128);
    assert_int_equal(last.block[1], 2);
    /* the launch's 512 dynamic bytes, then the clone's protocol words */
    assert_int_equal(last.smem, 512 + TIDAL_SH_BYTES);
    assert_ptr_equal(last.stream, s);
    assert_ptr_equal(last.params[0], &a0);
    assert_ptr_equal(last.params[1], &a1);
    tidal_launch tl;
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.grid[0], 100);
    assert_int_equal(tl.grid[1], 2);
    assert_int_equal(tl.grid[2], 1);
    assert_int_equal(tl.chunk, 1);
    assert_int_equal(tl.sh_off, 512);
    assert_true(fk.loaded && fkc.loaded && fr.loaded); /* the module was loaded eagerly */
    /* the stream on all SMs is not inside 0-47: dynamic mode, in the stream's own slot,
     * whose tag now keeps probe-mode launches out; the first epoch is 1 */
    assert_int_equal(tl.flags, TIDAL_LAUNCH_HIST);
    assert_int_equal(tl.base, 0);
    assert_int_equal(tl.slot, 0);
    assert_int_equal(tl.epoch, 1);
    const tidal_slot *slots = (const tidal_slot *)(uintptr_t)(tl.partition + TIDAL_PARTITION_HEADER);
    assert_true(slots[0].tag == TIDAL_SLOT_RESERVED);
    assert_true(slots[1].tag == 0);

    /* large grid: workers = occupancy x all SMs; chunk from the partition's SMs, <= 32 */
    assert_int_equal(tidal_launch_kernel(&fk, 1 << 20, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_int_equal(last.grid[0], FAKE_OCC * NSM);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.chunk, 32);
    assert_int_equal(tl.epoch, 2);
    assert_int_equal(tidal_launch_kernel(&fk, 20000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.chunk, 20000 / (FAKE_OCC * 48 * 8));
    assert_int_equal(tl.slot, 0);
    assert_int_equal(tl.epoch, 3);
    /* another stream gets the next slot */
    tidal_stream_bind((CUstream)0x9a, ls);
    assert_int_equal(tidal_launch_kernel(&fk, 20000, 1, 1, 256, 1, 1, 0, (CUstream)0x9a, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.slot, 1);
    assert_int_equal(tl.epoch, 1);
    tidal_stream_bind((CUstream)0x9a, NULL);

    tidal_stats st;
    assert_int_equal(tidal_stats_get(NULL, &st), TIDAL_OK);
    assert_int_equal(st.launches_rewritten, 4);
    tidal_stream_bind(s, NULL);
}

/* A stream whose SMs are all allowed (here: a partition on all SMs) runs clones in static
 * mode: workers take their first chunk without claiming, tickets start after them. */
static void test_launch_static(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("all", "all", &p), TIDAL_OK);
    assert_int_equal(tidal_partition_set_placement(p, TIDAL_PLACE_PERSISTENT, 0), TIDAL_OK);
    CUstream s = (CUstream)0x71;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    tidal_launch tl;
    /* a grid that fits in one wave: one worker per logical block, no tickets at all */
    assert_int_equal(tidal_launch_kernel(&fk, 100, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(last.grid[0], 100);
    assert_int_equal(tl.flags, TIDAL_LAUNCH_STATIC | TIDAL_LAUNCH_HIST);
    assert_int_equal(tl.chunk, 1);
    assert_int_equal(tl.base, 100);
    /* a large grid: occupancy x all SMs workers, the static chunks, then tickets */
    assert_int_equal(tidal_launch_kernel(&fk, 1 << 20, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(last.grid[0], FAKE_OCC * NSM);
    assert_int_equal(tl.chunk, 32);
    assert_int_equal(tl.base, FAKE_OCC * NSM * 32);
    /* a grid between: fewer workers so that every static chunk has work */
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.chunk, 1);
    assert_int_equal(last.grid[0], FAKE_OCC * NSM);
    assert_int_equal(tl.base, FAKE_OCC * NSM);
    unsigned eager_slot = tl.slot;
    /* captured into a graph: epoch mode on a slot of the capture's own, reset by a memset
     * that the capture records before its first clone, so every replay starts afresh */
    tidal_stats st0, st1;
    assert_int_equal(tidal_stats_get(NULL, &st0), TIDAL_OK);
    fake_capturing = 1;
    fake_capture_id = 7;
    int m0 = fake_memsets;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_false(tl.flags & TIDAL_LAUNCH_PROBE);
    /* persistent placement: dynamic, so that every replay follows the mask of its time */
    assert_false(tl.flags & TIDAL_LAUNCH_STATIC);
    assert_int_equal(tl.base, 0);
    unsigned cap_slot = tl.slot;
    assert_int_not_equal(cap_slot, eager_slot);
    assert_int_equal(tl.epoch, 1);
    assert_int_equal(fake_memsets, m0 + 1);
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.slot, cap_slot);
    assert_int_equal(tl.epoch, 2);
    assert_int_equal(fake_memsets, m0 + 1); /* one reset per capture */
    /* another capture: another slot, numbered from 1 again */
    fake_capture_id = 8;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_not_equal(tl.slot, cap_slot);
    assert_int_not_equal(tl.slot, eager_slot);
    assert_int_equal(tl.epoch, 1);
    assert_int_equal(fake_memsets, m0 + 2);
    /* eager launches after it keep the stream's own slot and epochs */
    fake_capturing = 0;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.slot, eager_slot);
    assert_int_equal(tl.epoch, 4);
    /* hybrid placement: a captured clone keeps the static first chunk, like the originals */
    assert_int_equal(tidal_partition_set_placement(p, TIDAL_PLACE_HYBRID, 0), TIDAL_OK);
    fake_capturing = 1;
    fake_capture_id = 9;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tl.flags & (TIDAL_LAUNCH_STATIC | TIDAL_LAUNCH_PROBE), TIDAL_LAUNCH_STATIC);
    assert_int_equal(tl.epoch, 1);
    assert_int_equal(tidal_partition_set_placement(p, TIDAL_PLACE_PERSISTENT, 0), TIDAL_OK);
    /* a driver without capture ids: probe mode (replays keep the parameters) with a key */
    fake_capturing = 1;
    fake_capture_id = 0;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_true(tl.flags & TIDAL_LAUNCH_PROBE);
    assert_true(tl.key != 0 && (tl.key & 0xffffffffffull) == 0);
    assert_int_equal(tidal_stats_get(NULL, &st1), TIDAL_OK);
    assert_int_equal(st1.launches_graph_probe - st0.launches_graph_probe, 1);
    fake_capturing = 0;
    tidal_stream_bind(s, NULL);
}

/* Hybrid placement: a rewritten kernel runs as the original where all of its stream's SMs
 * are allowed once samples show it short. An unmeasured kernel runs as the clone, timed; a
 * quick clone (below TIDAL_TRIAL_FACTOR x the threshold) is tried as the original, timed,
 * and the original's samples decide. Long kernels and persistent mode: the clone. */
static void test_launch_hybrid(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("h", "all", &p), TIDAL_OK);
    CUstream s = (CUstream)0x72;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    tidal_stats st;
    fake_ms = 0.005f; /* 5 us: short */
    assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc); /* not measured yet: the clone, timed (it obeys the mask) */
    assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc); /* the sample has not completed: the clone again */
    fake_running = 0;
    for (int i = 0; i < 3; i++) { /* the clone's sample says short: the original */
        assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
        assert_ptr_equal(last.f, &fk);
        assert_int_equal(last.grid[0], 300);
    }
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.launches_original, 3);
    assert_int_equal(st.launches_rewritten, 2);
    /* another grid size is measured on its own. A clone of 40 us (memory-bound kernels run
     * slower as clones) is tried as the original; the original's 7 us decide */
    fake_ms = 0.040f;
    assert_int_equal(tidal_launch_kernel(&fk, 9000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tidal_launch_kernel(&fk, 9000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk); /* the trial */
    fake_ms = 0.007f;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tidal_launch_kernel(&fk, 9000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
        assert_ptr_equal(last.f, &fk);
    }
    /* a clone of 40 us whose original takes 30 us: two trials (the first sample may carry
     * warm-up), then the clone */
    fake_ms = 0.040f;
    assert_int_equal(tidal_launch_kernel(&fk, 7000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    fake_ms = 0.030f;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tidal_launch_kernel(&fk, 7000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
        assert_ptr_equal(last.f, i < 2 ? &fk : &fkc);
    }
    /* a long kernel (500 us clone) never runs as the original: two timed clones, then clones */
    fake_ms = 0.5f;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
        assert_ptr_equal(last.f, &fkc);
    }
    /* persistent: always the clone; original: always the original */
    assert_int_equal(tidal_partition_set_placement(p, TIDAL_PLACE_PERSISTENT, 0), TIDAL_OK);
    assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tidal_partition_set_placement(p, TIDAL_PLACE_ORIGINAL, 0), TIDAL_OK);
    assert_int_equal(tidal_launch_kernel(&fk, 9000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    /* the threshold: 600 us makes the 500 us kernel short */
    assert_int_equal(tidal_partition_set_placement(p, TIDAL_PLACE_HYBRID, 600), TIDAL_OK);
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    assert_int_equal(tidal_partition_set_placement(p, 7, 0), TIDAL_ERR_INVALID);
    /* on a partition that does not hold all of the stream's SMs, never the original */
    tidal_part *q;
    assert_int_equal(tidal_partition_create("q", "0-65", &q), TIDAL_OK);
    assert_int_equal(tidal_partition_set_placement(q, TIDAL_PLACE_ORIGINAL, 0), TIDAL_OK);
    tidal_stream_bind(s, q);
    assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    tidal_stream_bind(s, NULL);
}

/* The launch the sample gate tests time: a kernel of 300 blocks on a stream bound to a
 * partition of all SMs, unmeasured (its first clone is timed). */
static uint64_t gate_a0;
static int gate_a1;
static void *gate_params[] = {&gate_a0, &gate_a1};
#define GATE_STREAM ((CUstream)0x74)
static CUresult gate_launch(void)
{
    return tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, GATE_STREAM, gate_params, NULL);
}
static void gate_bind(void)
{
    tidal_part *p;
    assert_int_equal(tidal_partition_create("g", "all", &p), TIDAL_OK);
    tidal_stream_bind(GATE_STREAM, p);
    fake_ms = 0.005f;
}

/* A timed launch runs behind the sample gate: its stream waits (GEQ) on a pinned word
 * that is still below the wait's value when the launch is queued and is raised to it
 * after the end event; launches that are not timed queue no wait. */
static void test_sample_gate(void **state)
{
    (void)state;
    gate_bind();
    /* the first clone is timed, behind the gate */
    assert_int_equal(gate_launch(), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(fake_waits, 1);
    assert_int_equal(fake_wait_flags, CU_STREAM_WAIT_VALUE_GEQ);
    assert_true(last.gate_held);
    assert_false(fake_gate_below()); /* released after the end event */
    cuuint32_t first = fake_wait_value;
    /* its sample is still in flight: the next clone is not timed, no wait */
    assert_int_equal(gate_launch(), CUDA_SUCCESS);
    assert_int_equal(fake_waits, 1);
    assert_false(last.gate_held);
    /* the sample completes (short): the original's trial is timed behind the gate too */
    fake_running = 0;
    assert_int_equal(gate_launch(), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    assert_int_equal(fake_waits, 2);
    assert_true(last.gate_held);
    assert_false(fake_gate_below());
    assert_true((int32_t)(fake_wait_value - first) > 0);
    tidal_stream_bind(GATE_STREAM, NULL);
}

/* TIDAL_SAMPLE_GATE=0: the same timed launch queues no wait (its sample includes the
 * launch gap). */
static void test_sample_gate_off(void **state)
{
    (void)state;
    tidal_shutdown();
    setenv("TIDAL_SAMPLE_GATE", "0", 1);
    int st = tidal_init(0);
    unsetenv("TIDAL_SAMPLE_GATE");
    assert_int_equal(st, TIDAL_OK);
    gate_bind();
    assert_int_equal(gate_launch(), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(fake_waits, 0);
    assert_false(last.gate_held);
    tidal_stream_bind(GATE_STREAM, NULL);
}

/* A measured kernel of several waves placed where all its SMs are allowed: each
 * worker's own chunk (tidal_launch.first) covers its share of 3/4 of the grid, within
 * TIDAL_CHUNK_US; the tickets after it keep a small chunk. Unmeasured: first = 0. */
static void test_static_first_chunk(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("f", "all", &p), TIDAL_OK);
    CUstream s = (CUstream)0x75;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    tidal_launch tl;
    int occ = 0;
    fake.OccupancyMaxActiveBlocksPerMultiprocessor(&occ, (CUfunction)&fkc, 256, 0);
    const uint64_t workers = (uint64_t)occ * 132, logical = 100000;
    fake_ms = 0.1f; /* 100 us for the grid: long, the clone (hybrid placement) */
    assert_int_equal(tidal_launch_kernel(&fk, (unsigned)logical, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.flags & TIDAL_LAUNCH_STATIC, TIDAL_LAUNCH_STATIC);
    assert_int_equal(tl.first, 0); /* not measured yet */
    assert_int_equal(tl.base, (uint32_t)(workers * tl.chunk));
    fake_running = 0;
    assert_int_equal(tidal_launch_kernel(&fk, (unsigned)logical, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    /* one logical block per worker takes 100 us * workers / logical; 20 us fit this many */
    uint64_t fit = (uint64_t)(20.0 / (100.0 * (double)workers / (double)logical));
    uint64_t want = logical * 3 / 4 / workers;
    if (want > fit) want = fit;
    if (want <= tl.chunk)
        fail_msg("workers %llu chunk %u fit %llu want %llu", (unsigned long long)workers, tl.chunk,
                 (unsigned long long)fit, (unsigned long long)want);
    assert_int_equal(tl.first, (uint32_t)want);
    assert_int_equal(tl.base, (uint32_t)(last.grid[0] * tl.first));
    assert_true(tl.base < logical);
    assert_int_equal(last.grid[0], (unsigned)workers);
    /* captured where the driver gives no capture id: probe mode, whose static workers take
     * `chunk` as their own chunk (first is for the epoch-mode fast path) */
    fake_capturing = 1;
    fake_capture_id = 0;
    assert_int_equal(tidal_launch_kernel(&fk, (unsigned)logical, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.flags & (TIDAL_LAUNCH_STATIC | TIDAL_LAUNCH_PROBE), TIDAL_LAUNCH_STATIC | TIDAL_LAUNCH_PROBE);
    assert_int_equal(tl.first, 0);
    assert_int_equal(tl.base, (uint32_t)(last.grid[0] * tl.chunk));
    fake_capturing = 0;
    tidal_stream_bind(s, NULL);
}

/* A stream's epoch wraps at TIDAL_EPOCH_MASK: before the launch that restarts at 1 the
 * runtime zeroes the slot's claim and guard words on the stream. */
static void test_epoch_wrap(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("w", "0-15", &p), TIDAL_OK);
    CUstream s = (CUstream)0x73;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    tidal_launch tl;
    for (unsigned i = 1; i <= TIDAL_EPOCH_MASK; i++) {
        assert_int_equal(tidal_launch_kernel(&fk, 50, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
        memcpy(&tl, last.params[2], sizeof tl);
        if (tl.epoch != i) fail_msg("launch %u got epoch %u", i, tl.epoch);
    }
    tidal_slot *slot = (tidal_slot *)(uintptr_t)(tl.partition + TIDAL_PARTITION_HEADER) + tl.slot;
    slot->claim = (uint64_t)TIDAL_EPOCH_MASK << TIDAL_EPOCH_SHIFT | 50;
    slot->guard = (uint64_t)TIDAL_EPOCH_MASK << TIDAL_EPOCH_SHIFT | 3;
    assert_int_equal(tidal_launch_kernel(&fk, 50, 1, 1, 256, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.epoch, 1);
    assert_true(slot->claim == 0 && slot->guard == 0);
    assert_true(slot->tag == TIDAL_SLOT_RESERVED);
    tidal_stream_bind(s, NULL);
}

/* Without a green-context API (this fake driver) only sets of all SMs are placed; streams
 * of other partitions are plain streams whose clones do the masking. */
static void test_partition_stream(void **state)
{
    (void)state;
    tidal_part *a, *b;
    assert_int_equal(tidal_partition_create("a", "all", &a), TIDAL_OK);
    assert_int_equal(tidal_partition_create("b", "0-65", &b), TIDAL_OK);
    assert_int_equal(tidal_partition_placed(a), 1);
    assert_int_equal(tidal_partition_placed(b), 0);
    void *sa = NULL, *sb = NULL;
    assert_int_equal(tidal_partition_stream(a, -1, &sa), TIDAL_OK);
    assert_int_equal(tidal_partition_stream(b, 0, &sb), TIDAL_OK);
    assert_non_null(sa);
    assert_int_equal(tidal_partition_stream(NULL, 0, &sa), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_partition_destroy(b), TIDAL_ERR_BUSY); /* its stream is bound */
    assert_int_equal(tidal_stream_bind(sb, NULL), TIDAL_OK);
}

static void test_launch_passthrough(void **state)
{
    (void)state;
    uint64_t a0 = 1;
    void *params[] = {&a0, &a0};
    CUstream s = (CUstream)0x42;
    /* no partition anywhere: the original, as given */
    assert_int_equal(tidal_launch_kernel(&fk, 10, 1, 1, 32, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    assert_int_equal(last.grid[0], 10);
    tidal_part *p;
    assert_int_equal(tidal_partition_create("be", "48-131", &p), TIDAL_OK);
    tidal_stream_bind(s, p);
    /* not rewritten: untouched */
    assert_int_equal(tidal_launch_kernel(&fu, 10, 3, 1, 32, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fu);
    assert_int_equal(last.grid[1], 3);
    /* refused by the pass: untouched */
    assert_int_equal(tidal_launch_kernel(&fr, 10, 1, 1, 32, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fr);
    /* a block size the clone cannot run: the original */
    assert_int_equal(tidal_launch_kernel(&fk, 10, 1, 1, 2048, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    tidal_stats st;
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.launches_unknown, 1);
    assert_int_equal(st.launches_refused, 1);
    assert_int_equal(st.launches_unmasked, 2);
    assert_int_equal(st.launches_rewritten, 0);
    tidal_stream_bind(s, NULL);
}

static void test_launch_extra_buffer(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("be", "48-131", &p), TIDAL_OK);
    assert_int_equal(tidal_set_default_partition(p), TIDAL_OK);
    unsigned char buf[12];
    for (int i = 0; i < 12; i++) buf[i] = (unsigned char)(0xa0 + i);
    size_t n = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, CU_LAUNCH_PARAM_END};
    assert_int_equal(tidal_launch_kernel(&fk, 64, 1, 1, 32, 1, 1, 0, NULL, NULL, extra), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(last.bufsize, 16 + sizeof(tidal_launch));
    assert_memory_equal(last.buf, buf, 12);
    tidal_launch tl;
    memcpy(&tl, last.buf + 16, sizeof tl);
    assert_int_equal(tl.grid[0], 64);
    assert_int_not_equal(tl.partition, 0);
    /* the module's __tidal_ctl follows the default partition (for launches not seen here) */
    assert_int_equal(mrw.ctl, tl.partition);
    tidal_set_default_partition(NULL);
}

static void test_launch_ex_and_smem(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("ls", "0-15", &p), TIDAL_OK);
    CUstream s = (CUstream)0x55;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    void *params[] = {&a0, &a0};
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attr.value.priority = 1;
    CUlaunchConfig c = {.gridDimX = 50,
                        .gridDimY = 1,
                        .gridDimZ = 1,
                        .blockDimX = 64,
                        .blockDimY = 1,
                        .blockDimZ = 1,
                        .sharedMemBytes = 0,
                        .hStream = s,
                        .attrs = &attr,
                        .numAttrs = 1};
    tidal_launch_req q = {
        .f = (CUfunction)&fk, .grid = {50, 1, 1}, .block = {64, 1, 1}, .stream = s, .params = params, .ex = &c};
    assert_int_equal(tidal__launch(&q), CUDA_SUCCESS);
    assert_true(last.via_ex);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(last.nattrs, 1); /* attributes kept */
    assert_int_equal(last.grid[0], 50);
    /* cooperative launches keep the original */
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    assert_int_equal(tidal__launch(&q), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    assert_int_equal(last.grid[0], 50);

    /* cuLaunchKernelEx: the clone's sharedMemBytes has the words after the launch's */
    attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    c.sharedMemBytes = 1000;
    q.smem = 1000;
    assert_int_equal(tidal__launch(&q), CUDA_SUCCESS);
    assert_true(last.via_ex);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(last.smem, 1000 + TIDAL_SH_BYTES);

    /* > 48 KiB dynamic shared memory: the clone is allowed what the launch needs */
    fk.max_dyn_smem = 100000;
    assert_int_equal(tidal_launch_kernel(&fk, 50, 1, 1, 64, 1, 1, 90000, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(fkc.max_dyn_smem, 90000 + TIDAL_SH_BYTES);
    tidal_stream_bind(s, NULL);
}

/* Everything written to stderr while fn runs (tidal__warn's lines). */
static char captured[4096];
static void capture_stderr(void (*fn)(void *), void *arg)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *t = tmpfile();
    assert_non_null(t);
    dup2(fileno(t), 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(t);
    size_t n = fread(captured, 1, sizeof captured - 1, t);
    captured[n] = 0;
    fclose(t);
}

typedef struct smem_launch {
    unsigned smem;
    CUstream s;
    void **params;
    int rc;
} smem_launch;
static void do_launch(void *arg)
{
    smem_launch *l = arg;
    l->rc = tidal_launch_kernel(&fk, 500, 1, 1, 128, 1, 1, l->smem, l->s, l->params, NULL);
}

/* The clone keeps the protocol's words in the tail of its dynamic shared memory: its
 * static size is the original's, and it launches wherever the original launches, except
 * within TIDAL_SH_BYTES of the per-block limit, which is counted and said. */
static void test_launch_smem_tail(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("sm", "0-65", &p), TIDAL_OK);
    CUstream s = (CUstream)0x57;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    void *params[] = {&a0, &a0};
    tidal_launch tl;
    tidal_stats st0, st;

    /* the words 8-aligned after the launch's bytes; occupancy asked for the real size */
    assert_int_equal(tidal_launch_kernel(&fk, 500, 1, 1, 128, 1, 1, 100, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.sh_off, 104);
    assert_int_equal(last.smem, 104 + TIDAL_SH_BYTES);
    assert_int_equal(fake_occ_smem, 104 + TIDAL_SH_BYTES);
    assert_int_equal(TIDAL_CLONE_SMEM(100), 104 + TIDAL_SH_BYTES);
    /* no dynamic shared memory: the clone still gets its words, at 0 */
    assert_int_equal(tidal_launch_kernel(&fk, 500, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.sh_off, 0);
    assert_int_equal(last.smem, TIDAL_SH_BYTES);
    assert_int_equal(fake_setattr_failed, 0);
    tidal_shutdown();

    /* A kernel with 1 KiB of static shared memory whose launcher (Triton) allowed the
     * original the device's opt-in limit minus that: the clone has the same static size
     * and gets what each launch needs, with no failing cuFuncSetAttribute. */
    fake_reset();
    assert_int_equal(tidal_init(0), TIDAL_OK);
    assert_int_equal(tidal_partition_create("sm", "0-65", &p), TIDAL_OK);
    tidal_stream_bind(s, p);
    fk.static_smem = fkc.static_smem = 1024;
    tidal_stats_get(NULL, &st0);
    fk.max_dyn_smem = FAKE_OPTIN - 1024;
    const unsigned fits = FAKE_OPTIN - 1024 - TIDAL_SH_BYTES; /* the most a clone takes */
    assert_int_equal(tidal_launch_kernel(&fk, 500, 1, 1, 128, 1, 1, 48 * 1024, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(fkc.max_dyn_smem, 48 * 1024 + TIDAL_SH_BYTES);
    assert_int_equal(tidal_launch_kernel(&fk, 500, 1, 1, 128, 1, 1, fits, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(last.smem, FAKE_OPTIN - 1024);
    assert_int_equal(fkc.max_dyn_smem, FAKE_OPTIN - 1024);
    assert_int_equal(fake_occ_smem, FAKE_OPTIN - 1024);
    memcpy(&tl, last.params[2], sizeof tl);
    assert_int_equal(tl.sh_off, fits);
    assert_int_equal(fake_setattr_failed, 0);

    /* the original's whole allowance: no room for the words. Launched as given (it runs,
     * unmasked), counted, and said once per kernel, never silently. */
    smem_launch l = {.smem = FAKE_OPTIN - 1024, .s = s, .params = params};
    capture_stderr(do_launch, &l);
    assert_int_equal(l.rc, CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fk);
    assert_int_equal(last.smem, FAKE_OPTIN - 1024);
    assert_int_equal(last.grid[0], 500);
    assert_int_equal(fake_setattr_failed, 0);
    assert_non_null(strstr(captured, "no room for the clone's"));
    assert_non_null(strstr(captured, "launches_smem_full"));
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.launches_smem_full - st0.launches_smem_full, 1);
    assert_int_equal(st.launches_unmasked - st0.launches_unmasked, 1);
    assert_int_equal(st.launches_rewritten - st0.launches_rewritten, 2);
    l.smem = fits + 1; /* 8-aligned, the words no longer fit either */
    capture_stderr(do_launch, &l);
    assert_ptr_equal(last.f, &fk);
    assert_string_equal(captured, ""); /* said once */
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.launches_smem_full - st0.launches_smem_full, 2);
    /* the clone's allowance was not touched by the launches that did not fit */
    assert_int_equal(fkc.max_dyn_smem, FAKE_OPTIN - 1024);
    assert_int_equal(st.launches_unmasked - st0.launches_unmasked, 2);
    tidal_stream_bind(s, NULL);

    /* placed as the original (a stream inside the mask, TIDAL_PLACE_ORIGINAL): the clone's
     * room does not matter, nothing is counted against it */
    tidal_part *all;
    assert_int_equal(tidal_partition_create("all", "all", &all), TIDAL_OK);
    assert_int_equal(tidal_partition_set_placement(all, TIDAL_PLACE_ORIGINAL, 0), TIDAL_OK);
    CUstream s2 = (CUstream)0x58;
    tidal_stream_bind(s2, all);
    l.s = s2;
    l.smem = FAKE_OPTIN - 1024;
    capture_stderr(do_launch, &l);
    assert_ptr_equal(last.f, &fk);
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.launches_smem_full - st0.launches_smem_full, 2);
    assert_int_equal(st.launches_original - st0.launches_original, 1);
    tidal_stream_bind(s2, NULL);
}

static void test_module_attach(void **state)
{
    (void)state;
    tidal_part *a, *b;
    assert_int_equal(tidal_partition_create("a", "0-7", &a), TIDAL_OK);
    assert_int_equal(tidal_partition_create("b", "8-15", &b), TIDAL_OK);
    assert_int_equal(tidal_module_attach(&mplain, a), TIDAL_ERR_NOT_REWRITTEN);
    assert_int_equal(mplain.ctl, 0);
    assert_int_equal(tidal_module_attach(&mrw, a), TIDAL_OK);
    assert_int_not_equal(mrw.ctl, 0);
    const tidal_partition *dp = (const tidal_partition *)(uintptr_t)mrw.ctl;
    assert_int_equal(dp->mask[0], 0xffull);
    assert_int_equal(tidal_module_attach(&mrw, a), TIDAL_OK); /* idempotent */
    assert_int_equal(tidal_module_attach(&mrw, b), TIDAL_ERR_BUSY);
    assert_int_equal(tidal_partition_destroy(a), TIDAL_ERR_BUSY);
    /* a kernel of the attached module, launched on a stream bound to no partition, obeys
     * the module's partition: its original entry is verbatim, so as the clone */
    {
        uint64_t a0 = 0;
        int a1 = 0;
        void *params[] = {&a0, &a1};
        tidal_stats s0, s1;
        tidal_stats_get(NULL, &s0);
        assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, (CUstream)0x5a, params, NULL), CUDA_SUCCESS);
        assert_ptr_equal(last.f, &fkc);
        tidal_stats_get(NULL, &s1);
        assert_int_equal(s1.launches_rewritten - s0.launches_rewritten, 1);
    }

    /* statistics read the device counters */
    uint64_t *hist = (uint64_t *)(uintptr_t)dp->sm_blocks;
    hist[3] = 17;
    hist[131] = 5;
    ((tidal_partition *)(uintptr_t)mrw.ctl)->violations = 2;
    tidal_stats st;
    assert_int_equal(tidal_stats_get(a, &st), TIDAL_OK);
    assert_int_equal(st.sm_blocks[3], 17);
    assert_int_equal(st.sm_blocks[131], 5);
    assert_int_equal(st.violations, 2);
    assert_int_equal(tidal_stats_reset(a), TIDAL_OK);
    assert_int_equal(hist[3], 0);
    assert_int_equal(tidal_stats_get(a, &st), TIDAL_OK);
    assert_int_equal(st.violations, 0);
}

/* Flow-in: giving a partition SMs starts joiners for its running launches (the same
 * clone and parameters, TIDAL_LAUNCH_JOIN, the owner's key); finished launches, launches
 * captured into a graph, and shrinking masks start none. */
static void test_flow_in(void **state)
{
    (void)state;
    tidal_part *p;
    assert_int_equal(tidal_partition_create("f", "0-65", &p), TIDAL_OK);
    CUstream s = (CUstream)0x66;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0x1234;
    int a1 = 77;
    void *params[] = {&a0, &a1};
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 128, 1, 1, 100, s, params, NULL), CUDA_SUCCESS);
    tidal_launch owner;
    memcpy(&owner, last.params[2], sizeof owner);
    assert_int_equal(last.smem, TIDAL_CLONE_SMEM(100));
    assert_int_equal(owner.flags, TIDAL_LAUNCH_HIST); /* 0-65 of all: dynamic, epoch mode */
    assert_int_equal(owner.epoch, 1);
    unsigned owner_grid = last.grid[0];

    /* shrink: no joiners */
    memset(&last, 0, sizeof last);
    assert_int_equal(tidal_partition_set(p, "0-31"), TIDAL_OK);
    assert_int_equal(last.calls, 0);
    /* grow: one joining launch for the running one */
    assert_int_equal(tidal_partition_set(p, "0-131"), TIDAL_OK);
    assert_int_equal(last.calls, 1);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(last.grid[0], FAKE_OCC * 100); /* occupancy x the 100 SMs added */
    assert_true(last.grid[0] < owner_grid);
    assert_int_equal(last.block[0], 128);
    assert_int_equal(last.smem, TIDAL_CLONE_SMEM(100)); /* the owner's, words included */
    assert_int_not_equal(last.stream, s);               /* beside the owner, not behind it */
    assert_int_equal(last.bufsize, 16 + sizeof(tidal_launch));
    uint64_t b0;
    int b1;
    memcpy(&b0, last.buf, 8);
    memcpy(&b1, last.buf + 8, 4);
    assert_int_equal(b0, 0x1234);
    assert_int_equal(b1, 77);
    tidal_launch j;
    memcpy(&j, last.buf + 16, sizeof j);
    assert_int_equal(j.slot, owner.slot);
    assert_int_equal(j.epoch, owner.epoch);
    assert_int_equal(j.flags, TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_JOIN);
    assert_int_equal(j.partition, owner.partition);
    assert_int_equal(j.grid[0], 5000);
    assert_int_equal(j.sh_off, owner.sh_off);
    tidal_stats st;
    tidal_stats_get(NULL, &st);
    assert_int_equal(st.joins, 1);

    /* the launch finished: the next grow starts nothing */
    fake_running = 0;
    tidal_partition_set(p, "0-15");
    memset(&last, 0, sizeof last);
    tidal_partition_set(p, "0-131");
    assert_int_equal(last.calls, 0);

    /* launches captured into a graph are not tracked */
    fake_running = 1;
    fake_capturing = 1;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    tidal_partition_set(p, "0-15");
    memset(&last, 0, sizeof last);
    tidal_partition_set(p, "0-131");
    assert_int_equal(last.calls, 0);
    tidal_stream_bind(s, NULL);
}

static void test_env_partition(void **state)
{
    (void)state;
    tidal_shutdown();
    setenv("TIDAL_PARTITION", "be:64-131", 1);
    assert_int_equal(tidal_init(0), TIDAL_OK);
    tidal_part *p;
    assert_int_equal(tidal_partition_find("be", &p), TIDAL_OK);
    tidal_launch tl = launch_k(NULL, 500, (CUstream)0x31); /* unbound stream: default partition */
    assert_int_not_equal(tl.partition, 0);
    assert_int_equal(((const tidal_partition *)(uintptr_t)tl.partition)->mask[1], ~0ull);
    tidal_shutdown();
    setenv("TIDAL_PARTITION", "be:64-200", 1);
    assert_int_equal(tidal_init(0), TIDAL_ERR_SMS);
    assert_non_null(strstr(tidal_last_error(), "TIDAL_PARTITION"));
    setenv("TIDAL_PARTITION", "b e", 1);
    assert_int_equal(tidal_init(0), TIDAL_ERR_PARSE);
    unsetenv("TIDAL_PARTITION");
    /* the numeric knobs: out of range or not a number is an error that names them */
    static const char *const bad[][2] = {{"TIDAL_STATIC_SHARE", "101"},
                                         {"TIDAL_CHUNK_US", "0"},
                                         {"TIDAL_MAX_CHUNK", "65"},
                                         {"TIDAL_SHORT_US", "2x"},
                                         {"TIDAL_SAMPLE_GATE", "2"}};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        assert_int_equal(tidal_init(0), TIDAL_ERR_PARSE);
        assert_non_null(strstr(tidal_last_error(), bad[i][0]));
        unsetenv(bad[i][0]);
    }
    setenv("TIDAL_STATIC_SHARE", "0", 1);
    assert_int_equal(tidal_init(0), TIDAL_OK);
    unsetenv("TIDAL_STATIC_SHARE");
}

/* The first launch libtidal sees may be inside a global-mode stream capture: its init
 * (allocations, a partition from TIDAL_PARTITION, synchronizations) must neither fail nor
 * invalidate the user's capture. On the H200 it failed with CUDA_ERROR_STREAM_CAPTURE_
 * UNSUPPORTED from cuMemAllocHost and broke the program's graph (bench/probes/env_cost). */
static void test_init_inside_capture(void **state)
{
    (void)state;
    tidal_shutdown();
    setenv("TIDAL_PARTITION", "ls:0-65", 1);
    fake_capturing = 1;
    fake_capture_strict = 1;
    assert_int_equal(tidal__ensure_init(), 0);
    assert_int_equal(fake_capture_violations, 0);
    assert_int_equal(fake_thread_mode, CU_STREAM_CAPTURE_MODE_GLOBAL); /* the thread's mode put back */
    tidal_part *p;
    assert_int_equal(tidal_partition_find("ls", &p), TIDAL_OK);
    fake_capture_strict = 0;
    fake_capturing = 0;
    unsetenv("TIDAL_PARTITION");
}

/* A module rewritten without case b has no __tidal_ctl (a module-scope .const slows
 * every kernel of its module): attaching it writes nothing to the device, may move, and
 * launches from unbound streams follow it as clones. */
static void test_module_attach_no_case_b(void **state)
{
    (void)state;
    mrw.case_b = 0;
    tidal_part *a, *b;
    assert_int_equal(tidal_partition_create("a", "0-7", &a), TIDAL_OK);
    assert_int_equal(tidal_partition_create("b", "8-15", &b), TIDAL_OK);
    assert_int_equal(tidal_module_attach(&mrw, a), TIDAL_OK);
    assert_int_equal(mrw.ctl, 0); /* no device word */
    tidal_launch tl = launch_k(NULL, 300, (CUstream)0x5b);
    assert_int_not_equal(tl.partition, 0);
    assert_int_equal(((const tidal_partition *)(uintptr_t)tl.partition)->mask[0], 0xffull);
    assert_int_equal(tidal_module_attach(&mrw, b), TIDAL_OK); /* moves */
    tl = launch_k(NULL, 300, (CUstream)0x5b);
    assert_int_equal(((const tidal_partition *)(uintptr_t)tl.partition)->mask[0], 0xff00ull);
    assert_int_equal(tidal_partition_destroy(a), TIDAL_OK); /* no longer attached */
    assert_int_equal(tidal_partition_destroy(b), TIDAL_ERR_BUSY);
    assert_int_equal(mrw.ctl, 0);
}

/* ------------------------------------------------------------------ no failing driver call */

/* compute-sanitizer (memcheck; --report-api-errors explicit is its default) reports every
 * driver call that fails, so libtidal makes none in normal operation: not at init, not for
 * partitions, not when it first meets a rewritten, refused or unmodified kernel, by
 * CUfunction or by CUkernel handle (CUDA 13's cudart launches <<<>>> with those), not in
 * hybrid timing, graph capture, flow-in, statistics, attach or shutdown. The fake fails
 * where the real driver does, and counts (fake_driver.h). */
static void test_no_failing_calls(void **state)
{
    (void)state;
    tidal_part *p, *all;
    assert_int_equal(tidal_partition_create("nf", "0-65", &p), TIDAL_OK);
    assert_int_equal(tidal_partition_create("all", "all", &all), TIDAL_OK);
    CUstream s = (CUstream)0x61, sa = (CUstream)0x62;
    assert_int_equal(tidal_stream_bind(s, p), TIDAL_OK);
    assert_int_equal(tidal_stream_bind(sa, all), TIDAL_OK);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    tidal_stats st;
    /* rewritten, refused, unmodified: by CUfunction */
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tidal_launch_kernel(&fr, 50, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fr);
    assert_int_equal(tidal_launch_kernel(&fu, 50, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fu);
    /* ... and by CUkernel: from the cudart wrappers (__cudaLaunchKernel's cudaKernel_t) */
    tidal_launch_req rq = {
        .f = (CUfunction)&kk, .grid = {300, 1, 1}, .block = {128, 1, 1}, .stream = s, .params = params, .kernel = 1};
    assert_int_equal(tidal__launch(&rq), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    rq.f = (CUfunction)&kr;
    assert_int_equal(tidal__launch(&rq), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &kr);
    /* ... whose CUfunction need not be the handle the module listed (found by name) */
    static fake_fn fk_other = {"k", &mrw, 2, {0, 8}, {8, 4}, 0, 0, NULL, 0, 0};
    static fake_fn kk_other = {.name = "k", .kernel_of = &fk_other};
    rq.f = (CUfunction)&kk_other;
    assert_int_equal(tidal__launch(&rq), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    /* ... and ones the preload saw made (its cuLibraryGetKernel hook), through any path */
    CUkernel seen[] = {(CUkernel)&ku};
    tidal__note_kernels(seen, 1);
    assert_int_equal(tidal_launch_kernel(&ku, 50, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &ku);
    /* a parameter buffer, cuLaunchKernelEx, > 48 KiB of dynamic shared memory */
    unsigned char buf[12] = {0};
    size_t n = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, CU_LAUNCH_PARAM_END};
    assert_int_equal(tidal_launch_kernel(&fk, 64, 1, 1, 32, 1, 1, 0, s, NULL, extra), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    CUlaunchConfig c = {
        .gridDimX = 50, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1, .hStream = s};
    tidal_launch_req qx = {
        .f = (CUfunction)&fk, .grid = {50, 1, 1}, .block = {64, 1, 1}, .stream = s, .params = params, .ex = &c};
    assert_int_equal(tidal__launch(&qx), CUDA_SUCCESS);
    assert_true(last.via_ex);
    fk.max_dyn_smem = 100000;
    assert_int_equal(tidal_launch_kernel(&fk, 50, 1, 1, 64, 1, 1, 90000, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    /* hybrid timing on a stream on all SMs: timed clones, then the original */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tidal_launch_kernel(&fk, 300, 1, 1, 256, 1, 1, 0, sa, params, NULL), CUDA_SUCCESS);
        fake_running = 0;
    }
    assert_ptr_equal(last.f, &fk);
    /* graph capture in global mode (a capture id, as CUDA 13 gives): no unsafe call either */
    fake_capturing = 1;
    fake_capture_strict = 1;
    fake_capture_id = 5;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tidal_launch_kernel(&fr, 50, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_int_equal(fake_capture_violations, 0);
    fake_capture_strict = 0;
    fake_capturing = 0;
    /* flow-in: a running launch gets joiners when its partition grows */
    fake_running = 1;
    assert_int_equal(tidal_launch_kernel(&fk, 5000, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_int_equal(tidal_partition_set(p, "0-131"), TIDAL_OK);
    assert_int_equal(tidal_partition_set(p, "0-65"), TIDAL_OK);
    assert_int_equal(tidal_stats_get(NULL, &st), TIDAL_OK);
    assert_true(st.joins > 0);
    /* modules, statistics, placement, teardown */
    assert_int_equal(tidal_module_attach(&mplain, p), TIDAL_ERR_NOT_REWRITTEN);
    assert_int_equal(tidal_module_attach(&mrw, p), TIDAL_OK);
    assert_int_equal(tidal_stats_get(p, &st), TIDAL_OK);
    assert_int_equal(tidal_stats_reset(p), TIDAL_OK);
    void *ps = NULL;
    assert_int_equal(tidal_partition_placed(all), 1);
    assert_int_equal(tidal_partition_stream(all, 0, &ps), TIDAL_OK);
    assert_int_equal(tidal_stream_bind(ps, NULL), TIDAL_OK);
    assert_int_equal(tidal_stream_bind(sa, NULL), TIDAL_OK);
    assert_int_equal(tidal_partition_destroy(all), TIDAL_OK);
    assert_int_equal(tidal_shutdown(), TIDAL_OK);
    if (fake_errors) fail_msg("%d failing driver calls: %s", fake_errors, fake_error_log);
    assert_int_equal(tidal_init(0), TIDAL_OK); /* for teardown */
}

/* Handles and modules outside that: a CUkernel made where libtidal did not see it still
 * runs as its clone, told by one failed cuFuncGetModule (once per handle); a module
 * rewritten before NAME__tidal_nparams existed still runs its clones, the parameters
 * counted by cuFuncGetParamInfo until it fails. */
static void test_unseen_kernel_and_old_module(void **state)
{
    (void)state;
    static fake_fn unseen = {.name = "k", .kernel_of = &fk};
    tidal_part *p;
    assert_int_equal(tidal_partition_create("o", "0-65", &p), TIDAL_OK);
    CUstream s = (CUstream)0x63;
    tidal_stream_bind(s, p);
    uint64_t a0 = 0;
    int a1 = 0;
    void *params[] = {&a0, &a1};
    fake_errors = 0;
    fake_error_log[0] = '\0';
    assert_int_equal(tidal_launch_kernel(&unseen, 300, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tidal_launch_kernel(&unseen, 300, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(fake_errors, 1);
    assert_string_equal(fake_error_log, "cuFuncGetModule=400");
    tidal_stream_bind(s, NULL);

    tidal_shutdown();
    mrw.no_nparams = 1;
    fake_errors = 0;
    fake_error_log[0] = '\0';
    assert_int_equal(tidal_init(0), TIDAL_OK);
    tidal_launch tl = launch_k(NULL, 500, (CUstream)0x64);
    assert_int_equal(tl.partition, 0); /* no partition: the original */
    assert_int_equal(tidal_partition_create("o", "0-65", &p), TIDAL_OK);
    tl = launch_k(p, 500, (CUstream)0x64);
    assert_ptr_equal(last.f, &fkc);
    assert_int_equal(tl.grid[0], 500);
    assert_string_equal(fake_error_log, "cuModuleGetGlobal=500 cuFuncGetParamInfo=1");
    tidal_stream_bind((CUstream)0x64, NULL);
}

static void test_strerror(void **state)
{
    (void)state;
    for (int s = TIDAL_OK; s >= TIDAL_ERR_UNSUPPORTED; s--)
        assert_string_not_equal(tidal_strerror(s), "unknown status");
    assert_string_equal(tidal_strerror(1234), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smset_parse_format),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test_setup_teardown(test_no_driver, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_partitions, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_reshapes, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_static, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_hybrid, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_sample_gate, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_sample_gate_off, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_static_first_chunk, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_epoch_wrap, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_partition_stream, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_passthrough, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_extra_buffer, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_ex_and_smem, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_smem_tail, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_module_attach, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_flow_in, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_env_partition, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_init_inside_capture, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_module_attach_no_case_b, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_no_failing_calls, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_unseen_kernel_and_old_module, fake_setup, fake_teardown),
    };
    return cmocka_run_group_tests_name("runtime", tests, NULL, NULL);
}
