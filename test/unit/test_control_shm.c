/* test_control_shm.c — the shared-memory layout and its seqlock (runtime/tidal_shm.h):
 * offsets, tidal_shm_check, odd sequence = retry, and a writer thread racing readers that
 * must never see a torn partition. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tidal_shm.h"

static tidal_shm *new_shm(void)
{
    tidal_shm *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->h.magic = TIDAL_SHM_MAGIC;
    s->h.version = TIDAL_SHM_VERSION;
    s->h.header_size = sizeof(tidal_shm_header);
    s->h.part_size = sizeof(tidal_shm_part);
    s->h.max_parts = TIDAL_SHM_MAX_PARTS;
    return s;
}

static void test_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(tidal_shm_header), 64);
    assert_int_equal(sizeof(tidal_shm_part), 96);
    assert_int_equal(offsetof(tidal_shm_header, seq), 24);
    assert_int_equal(offsetof(tidal_shm_header, generation), 28);
    assert_int_equal(offsetof(tidal_shm_header, daemon_pid), 32);
    assert_int_equal(offsetof(tidal_shm_part, mask), 32);
    assert_int_equal(offsetof(tidal_shm_part, generation), 64);
    assert_int_equal(offsetof(tidal_shm_part, flags), 68);
    assert_int_equal(TIDAL_SHM_SIZE, 64 + 64 * 96);
}

static void test_check(void **state)
{
    (void)state;
    tidal_shm *s = new_shm();
    assert_int_equal(tidal_shm_check(s, TIDAL_SHM_SIZE), 0);
    assert_int_equal(tidal_shm_check(s, TIDAL_SHM_SIZE - 1), -1);
    s->h.version = 2;
    assert_int_equal(tidal_shm_check(s, TIDAL_SHM_SIZE), -1);
    s->h.version = TIDAL_SHM_VERSION;
    s->h.max_parts = 65;
    assert_int_equal(tidal_shm_check(s, TIDAL_SHM_SIZE), -1);
    s->h.max_parts = TIDAL_SHM_MAX_PARTS;
    s->h.magic ^= 1;
    assert_int_equal(tidal_shm_check(s, TIDAL_SHM_SIZE), -1);
    free(s);
}

static void test_seqlock_single(void **state)
{
    (void)state;
    tidal_shm *s = new_shm();
    uint32_t q = tidal_shm_read_begin(s);
    assert_false(tidal_shm_read_retry(s, q));
    tidal_shm_write_begin(s);
    assert_true(tidal_shm_read_begin(s) & 1u); /* odd while writing */
    assert_true(tidal_shm_read_retry(s, tidal_shm_read_begin(s)));
    assert_int_equal(tidal_shm_next_generation(s), 1);
    assert_int_equal(tidal_shm_write_end(s), 1);
    assert_int_equal(tidal_shm_generation(s), 1);
    assert_true(tidal_shm_read_retry(s, q)); /* a copy started before the write is stale */
    uint32_t q2 = tidal_shm_read_begin(s);
    assert_false(q2 & 1u);
    assert_false(tidal_shm_read_retry(s, q2));
    assert_int_equal(tidal_shm_write_end((tidal_shm_write_begin(s), s)), 2);
    free(s);
}

#define WRITES 200000
static volatile int g_done;

static void *writer(void *arg)
{
    tidal_shm *s = arg;
    for (uint64_t v = 1; v <= WRITES; v++) {
        tidal_shm_write_begin(s);
        tidal_shm_part *p = &s->part[v % 3];
        for (int w = 0; w < 4; w++) p->mask.bits[w] = v;
        snprintf(p->name, sizeof p->name, "p%llu", (unsigned long long)v);
        p->generation = tidal_shm_next_generation(s);
        p->flags = TIDAL_SHM_PART_USED;
        tidal_shm_write_end(s);
    }
    g_done = 1;
    return NULL;
}

static void test_seqlock_race(void **state)
{
    (void)state;
    tidal_shm *s = new_shm();
    pthread_t t;
    g_done = 0;
    assert_int_equal(pthread_create(&t, NULL, writer, s), 0);
    uint64_t reads = 0, retries = 0;
    uint32_t last_gen = 0;
    tidal_shm_part copy[3];
    while (!g_done || reads == 0) {
        uint32_t q = tidal_shm_read_begin(s);
        memcpy(copy, s->part, sizeof copy);
        uint32_t gen = tidal_shm_generation(s);
        if (tidal_shm_read_retry(s, q)) {
            retries++;
            continue;
        }
        reads++;
        assert_true(gen >= last_gen);
        last_gen = gen;
        for (int i = 0; i < 3; i++) {
            if (!copy[i].flags) continue;
            uint64_t m = copy[i].mask.bits[0];
            for (int w = 1; w < 4; w++) assert_int_equal(copy[i].mask.bits[w], m); /* never torn */
            char want[32];
            snprintf(want, sizeof want, "p%llu", (unsigned long long)m);
            assert_string_equal(copy[i].name, want);
            assert_true(copy[i].generation <= gen);
        }
    }
    pthread_join(t, NULL);
    assert_int_equal(tidal_shm_generation(s), WRITES);
    print_message("seqlock race: %llu consistent reads, %llu retries\n", (unsigned long long)reads,
                  (unsigned long long)retries);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_seqlock_single),
        cmocka_unit_test(test_seqlock_race),
    };
    return cmocka_run_group_tests_name("control_shm", tests, NULL, NULL);
}
