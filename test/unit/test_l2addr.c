/* The l2addr pass (passes/tidal_l2addr.c): the translation it emits computes
 * abi/tidal_l2.h's tidal_l2_addr. The pass prints one table of integer operations as PTX
 * (tidal_l2addr_prologue, tidal_l2addr_access) and tidal_l2addr_eval runs the same table,
 * so checking eval against tidal_l2_offset for every mask, both sides, many offsets and
 * flip patterns checks the arithmetic of the code in the kernel; the printer is one line
 * per entry (checked here by counting, and by ptxas in test/lit/l2addr). */
#include "tidal_test.h"

#include "tidal_l2.h"
#include "tidal_l2addr.h"

enum { GRANULES = 96 };

typedef struct mem {
    uint64_t flips_addr, slot_addr;
    uint32_t flips[(GRANULES + 31) / 32];
    unsigned bad; /* loads outside the flip words and the slot */
} mem;

static uint32_t load(void *ctx, uint64_t addr)
{
    mem *m = ctx;
    if (addr == m->slot_addr) return 0;
    if (addr < m->flips_addr || addr >= m->flips_addr + sizeof m->flips || (addr - m->flips_addr) % 4) {
        m->bad++;
        return 0;
    }
    return m->flips[(addr - m->flips_addr) / 4];
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* R for address p + o under layout L, side s: the prologue then the access. */
static uint64_t translate(const tidal_l2_layout *L, uint64_t base, unsigned side, uint64_t p, uint64_t o, mem *m)
{
    uint64_t r[L2A_NREGS] = {0};
    r[L2A_BASE] = base;
    r[L2A_FLIPS] = m->flips_addr;
    r[L2A_SLOT] = m->slot_addr;
    r[L2A_SIDE] = side;
    r[L2A_LOW] = L->low;
    r[L2A_PMASK] = L->pmask;
    r[L2A_P] = p;
    r[L2A_A] = p + o;
    tidal_l2addr_eval(tidal_l2addr_prologue, tidal_l2addr_nprologue, r, load, m);
    tidal_l2addr_eval(tidal_l2addr_access, tidal_l2addr_naccess, r, load, m);
    return r[L2A_R];
}

static void matches_tidal_l2_offset(void **state)
{
    (void)state;
    uint64_t seed = 13;
    mem m = {.flips_addr = 0x7f0000001000ull, .slot_addr = 0x7f0000200000ull};
    unsigned checked = 0;
    for (unsigned mask = 1; mask < 512; mask++) {
        tidal_l2_layout L = {.base = 0x7e0000000000ull + ((lcg(&seed) & 0xff) << 21),
                             .flips = m.flips_addr,
                             .per_side = (uint64_t)GRANULES << 20,
                             .granules = GRANULES};
        assert_int_equal(tidal_l2_set_mask(&L, mask), 0);
        for (unsigned w = 0; w < sizeof m.flips / 4; w++) m.flips[w] = (uint32_t)lcg(&seed);
        for (unsigned side = 0; side < 2; side++) {
            for (unsigned n = 0; n < 96; n++) {
                /* the edges of blocks and granules, and random bytes */
                uint64_t o = n < 8 ? (uint64_t)(n & 3) * ((GRANULES - 1) << 20) / 3 + (n & 4 ? 4095 : 0)
                                   : lcg(&seed) % L.per_side;
                uint64_t p = L.base + ((lcg(&seed) & 7) << 12); /* any 4 KiB-aligned parameter */
                unsigned flip = tidal_l2_flip(m.flips, o >> 20);
                uint64_t want = L.base + tidal_l2_offset(&L, o, side, flip);
                uint64_t got = translate(&L, L.base, side, p, o, &m);
                if (got != want) {
                    print_error("mask %#x side %u o %#llx: got %#llx want %#llx\n", mask, side, (unsigned long long)o,
                                (unsigned long long)got, (unsigned long long)want);
                    fail();
                }
                /* and the byte is on the side asked for */
                uint64_t b = ((got - L.base) >> 12) & 511;
                assert_int_equal(tidal_l2_block_side(mask, (unsigned)b, flip), side);
                checked++;
            }
        }
    }
    assert_int_equal(m.bad, 0);
    assert_true(checked > 90000);
}

/* A slot the runtime never filled (base 0): the address as it was, and the flip word is
 * read from the slot, never through address 0. */
static void unfilled_slot_keeps_address(void **state)
{
    (void)state;
    mem m = {.flips_addr = 0, .slot_addr = 0x7f0000200000ull};
    tidal_l2_layout L = {0};
    uint64_t seed = 5;
    for (unsigned n = 0; n < 1000; n++) {
        uint64_t p = lcg(&seed) << 4, o = lcg(&seed) >> 8;
        assert_int_equal(translate(&L, 0, n & 1, p, o, &m), p + o);
    }
    assert_int_equal(m.bad, 0);
}

/* The slot is the abi's struct: the offsets the pass loads are its fields'. */
static void slot_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(tidal_l2addr_slot), 40);
    assert_int_equal(offsetof(tidal_l2addr_slot, l2.base), 0);
    assert_int_equal(offsetof(tidal_l2addr_slot, l2.flips), 8);
    assert_int_equal(offsetof(tidal_l2addr_slot, l2.low), 30);
    assert_int_equal(offsetof(tidal_l2addr_slot, l2.pmask), 31);
    assert_int_equal(offsetof(tidal_l2addr_slot, side), 32);
}

static void refusal_table(void **state)
{
    (void)state;
    for (unsigned r = 1; r < L2A_NREASONS; r++) {
        assert_true(tidal_l2addr_refusals[r].name && tidal_l2addr_refusals[r].name[0]);
        assert_true(tidal_l2addr_refusals[r].why && tidal_l2addr_refusals[r].why[0]);
        for (unsigned q = 1; q < r; q++)
            assert_string_not_equal(tidal_l2addr_refusals[r].name, tidal_l2addr_refusals[q].name);
    }
}

static unsigned count(const char *s, const char *what)
{
    unsigned n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* The pass prints the tables: one PTX instruction per entry, per access. */
static void pass_prints_the_table(void **state)
{
    (void)state;
    static const char src[] = PTX_HDR ".visible .entry k(.param .u64 k_p, .param .u32 k_n)\n"
                                      "{\n"
                                      "\t.reg .b32 %r<3>;\n"
                                      "\t.reg .b64 %rd<6>;\n"
                                      "\tld.param.u64 %rd1, [k_p];\n"
                                      "\tcvta.to.global.u64 %rd2, %rd1;\n"
                                      "\tmov.u32 %r1, %tid.x;\n"
                                      "\tmul.wide.u32 %rd3, %r1, 4;\n"
                                      "\tadd.s64 %rd4, %rd2, %rd3;\n"
                                      "\tld.global.u32 %r2, [%rd4+8];\n"
                                      "\tst.global.u32 [%rd4], %r2;\n"
                                      "\tret;\n"
                                      "}\n";
    ptx_module *m = parse_ok(src);
    tidal_l2addr_item it = {.kernel = "k", .param = "0"};
    ptx_diag d;
    ptx_diag_init(&d, "t.ptx");
    assert_int_equal(tidal_l2addr_run(m, &it, 1, &d), 0);
    assert_int_equal(it.reason, L2A_OK);
    assert_int_equal(it.accesses, 2);
    char *out = print_str(m);
    assert_int_equal(count(out, "popc.b32"), 2);
    assert_int_equal(count(out, "selp.b64"), 4);
    assert_int_equal(count(out, "[%tl2a_r]"), 2);
    assert_int_equal(count(out, "add.s64 \t%tl2a_a, %rd4, 8;"), 1);
    assert_int_equal(count(out, "[__tidal_l2addr_p0_k+30]"), 1);
    assert_int_equal(count(out, ".visible .global .align 8 .b8 __tidal_l2addr_p0_k[40];"), 1);
    unsigned insns = 0;
    for (unsigned i = 0; i < tidal_l2addr_naccess; i++)
        insns += count(out, tidal_l2addr_opcode(tidal_l2addr_access[i].op)) > 0;
    assert_int_equal(insns, tidal_l2addr_naccess);
    free(out);
    ptx_module_free(m);
    /* a user error names the kernel and leaves the module unchanged */
    m = parse_ok(src);
    tidal_l2addr_item bad = {.kernel = "nope", .param = "0"};
    assert_int_equal(tidal_l2addr_run(m, &bad, 1, &d), -1);
    assert_non_null(strstr(d.msg, "no kernel 'nope'"));
    assert_prints(m, src);
    ptx_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_tidal_l2_offset),
        cmocka_unit_test(unfilled_slot_keeps_address),
        cmocka_unit_test(slot_layout),
        cmocka_unit_test(refusal_table),
        cmocka_unit_test(pass_prints_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
