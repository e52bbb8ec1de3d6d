/* test_cfg.c — basic blocks and edges (ptx_cfg_build), special registers
 * (ptx_sreg_classify), barrier classification and per-function stats. */
#include "tidal_test.h"

#include "ptx_internal.h"

#define X PTX_BB_EXIT_SUCC
#define NONE UINT32_MAX
#define END (UINT32_MAX - 1) /* ends an expected edge list */

/* A parsed one-function module and its CFG. */
typedef struct built {
    ptx_module *m;
    ptx_func *f;
    ptx_cfg *c;
} built;

/* Wraps `body` (the statements) in a kernel and builds its CFG. */
static built build_at(const char *body, const char *file, int line)
{
    static char src[8192];
    snprintf(src, sizeof src, PTX_HDR ".visible .entry k()\n{\n%s}\n", body);
    built b = {.m = parse_ok_at(src, file, line)};
    b.f = ptx_func_at(b.m, 0);
    ptx_diag d;
    ptx_diag_init(&d, "t.ptx");
    b.c = ptx_cfg_build(b.f, &d);
    if (!b.c) {
        print_error("%s:%d: CFG error %u:%u: %s\n", file, line, d.line, d.col, d.msg);
        _fail(file, line);
    }
    return b;
}
#define build(body) build_at((body), __FILE__, __LINE__)

static void built_free(built *b)
{
    ptx_cfg_free(b->c);
    ptx_module_free(b->m);
}

/* Expects the CFG of `body` to fail at line:col (lines count from the kernel's '{' + 1 = 6). */
static void cfg_err_at(const char *body, unsigned line, unsigned col, const char *msg, const char *file, int fline)
{
    static char src[8192];
    snprintf(src, sizeof src, PTX_HDR ".visible .entry k()\n{\n%s}\n", body);
    ptx_module *m = parse_ok_at(src, file, fline);
    ptx_diag d;
    ptx_diag_init(&d, "t.ptx");
    ptx_cfg *c = ptx_cfg_build(ptx_func_at(m, 0), &d);
    if (c || d.line != line || d.col != col || strcmp(d.msg, msg) != 0) {
        print_error("%s:%d: got %s %u:%u '%s', expected %u:%u '%s'\n", file, fline, c ? "a CFG" : "error", d.line,
                    d.col, d.msg, line, col, msg);
        ptx_cfg_free(c);
        ptx_module_free(m);
        _fail(file, fline);
    }
    ptx_module_free(m);
}
#define cfg_err(body, line, col, msg) cfg_err_at((body), (line), (col), (msg), __FILE__, __LINE__)

/* Compares an edge list with an expected list (terminated by END). */
static void check_list_at(const char *what, uint32_t blk, const uint32_t *got, uint32_t n, const uint32_t *want,
                          const char *file, int line)
{
    uint32_t k = 0;
    while (want[k] != END) k++;
    bool ok = k == n;
    for (uint32_t i = 0; ok && i < n; i++) ok = got[i] == want[i];
    if (!ok) {
        print_error("%s:%d: bb%u %s:", file, line, blk, what);
        for (uint32_t i = 0; i < n; i++) print_error(" %d", (int)got[i]);
        print_error(", expected:");
        for (uint32_t i = 0; i < k; i++) print_error(" %d", (int)want[i]);
        print_error("\n");
        _fail(file, line);
    }
}
#define succs(b, i, ...)                                                                                               \
    check_list_at("succs", (i), (b)->c->blocks[i].succ, (b)->c->blocks[i].nsucc, (const uint32_t[]){__VA_ARGS__, END}, \
                  __FILE__, __LINE__)
#define preds(b, i, ...)                                                                                               \
    check_list_at("preds", (i), (b)->c->blocks[i].pred, (b)->c->blocks[i].npred, (const uint32_t[]){__VA_ARGS__, END}, \
                  __FILE__, __LINE__)
#define no_succs(b, i) assert_int_equal((b)->c->blocks[i].nsucc, 0)
#define no_preds(b, i) assert_int_equal((b)->c->blocks[i].npred, 0)

/* The label name of block i ("" when unlabeled). */
static const char *block_label(const built *b, uint32_t i)
{
    uint32_t ls = b->c->blocks[i].label_stmt;
    return ls == NONE ? "" : tok_s(b->m, b->f->stmts[ls].opcode_tok);
}

/* ------------------------------------------------------------ blocks and edges */

static void test_straight_line(void **state)
{
    (void)state;
    built b = build("\t.reg .b32 %r<3>;\n\tmov.u32 %r1, 1;\n\tadd.s32 %r2, %r1, 1;\n\tret;\n");
    assert_int_equal(b.c->nblocks, 1);
    assert_int_equal(b.c->blocks[0].first, 1);
    assert_int_equal(b.c->blocks[0].last, 3);
    assert_int_equal(b.c->blocks[0].ninstrs, 3);
    assert_int_equal(b.c->blocks[0].label_stmt, NONE);
    succs(&b, 0, X);
    no_preds(&b, 0);
    assert_int_equal(b.c->stmt_block[0], NONE); /* .reg is not code */
    assert_int_equal(b.c->stmt_block[1], 0);
    assert_ptr_equal(b.c->func, b.f);
    built_free(&b);
}

static void test_empty_body_and_falling_off(void **state)
{
    (void)state;
    built b = build("\t.reg .b32 %r1;\n");
    assert_int_equal(b.c->nblocks, 0);
    built_free(&b);
    /* no terminator: the last block falls off the end of the function */
    b = build("\tmov.u32 %r1, 1;\n");
    assert_int_equal(b.c->nblocks, 1);
    succs(&b, 0, X);
    built_free(&b);
    /* a label right before '}' is a block of its own, with no instructions */
    b = build("\t@%p1 bra END;\n\tmov.u32 %r1, 1;\nEND:\n");
    assert_int_equal(b.c->nblocks, 3);
    assert_int_equal(b.c->blocks[2].ninstrs, 0);
    assert_string_equal(block_label(&b, 2), "END");
    succs(&b, 0, 2, 1);
    succs(&b, 2, X);
    preds(&b, 2, 0, 1);
    built_free(&b);
}

static void test_unconditional_bra(void **state)
{
    (void)state;
    built b = build("\tmov.u32 %r1, 1;\n\tbra.uni L2;\nL1:\n\tmov.u32 %r1, 2;\nL2:\n\tret;\n");
    assert_int_equal(b.c->nblocks, 3);
    succs(&b, 0, 2); /* no fall-through into L1 */
    no_preds(&b, 1); /* L1 is unreachable */
    succs(&b, 1, 2);
    preds(&b, 2, 0, 1);
    succs(&b, 2, X);
    assert_string_equal(block_label(&b, 1), "L1");
    assert_string_equal(block_label(&b, 2), "L2");
    built_free(&b);
}

static void test_predicated_bra_and_loop(void **state)
{
    (void)state;
    built b = build("\tmov.u32 %r1, 0;\n"
                    "$L__BB0_1:\n"
                    "\tadd.s32 %r1, %r1, 1;\n"
                    "\tsetp.lt.s32 %p1, %r1, 10;\n"
                    "\t@%p1 bra $L__BB0_1;\n"
                    "\t@!%p2 bra $L__BB0_3;\n"
                    "\tmov.u32 %r2, 1;\n"
                    "$L__BB0_3:\n"
                    "\tret;\n");
    assert_int_equal(b.c->nblocks, 5);
    succs(&b, 0, 1);
    succs(&b, 1, 1, 2); /* taken edge first, then fall-through */
    preds(&b, 1, 0, 1);
    assert_int_equal(b.c->blocks[1].ninstrs, 3);
    succs(&b, 2, 4, 3); /* a lone predicated branch is a block of its own */
    assert_int_equal(b.c->blocks[2].ninstrs, 1);
    succs(&b, 3, 4);
    preds(&b, 4, 2, 3);
    succs(&b, 4, X);
    assert_string_equal(block_label(&b, 4), "$L__BB0_3");
    built_free(&b);
}

static void test_predicated_bra_fallthrough(void **state)
{
    (void)state;
    built b = build("\t@!%p2 bra L;\n\tmov.u32 %r2, 1;\nL:\n\tret;\n");
    assert_int_equal(b.c->nblocks, 3);
    succs(&b, 0, 2, 1);
    succs(&b, 1, 2);
    preds(&b, 2, 0, 1);
    assert_int_equal(b.c->blocks[0].ninstrs, 1);
    built_free(&b);
}

static void test_consecutive_labels_share_a_block(void **state)
{
    (void)state;
    built b = build("\tbra A;\nA:\nB:\n\t// comment\nC:\n\tmov.u32 %r1, 1;\n\tbra C;\n");
    assert_int_equal(b.c->nblocks, 2);
    assert_string_equal(block_label(&b, 1), "A"); /* the first label names the block */
    succs(&b, 0, 1);
    succs(&b, 1, 1);
    preds(&b, 1, 0, 1);
    for (uint32_t i = 1; i <= 3; i++) assert_int_equal(b.c->stmt_block[i], 1);
    built_free(&b);
    /* a label after an instruction starts a new block reached by fall-through */
    b = build("\tmov.u32 %r1, 1;\nL:\n\tmov.u32 %r1, 2;\n\tbra L;\n");
    assert_int_equal(b.c->nblocks, 2);
    succs(&b, 0, 1);
    preds(&b, 1, 0, 1);
    built_free(&b);
}

static void test_brx_idx(void **state)
{
    (void)state;
    built b = build("\t.reg .b32 %r<3>;\n"
                    "\tts: .branchtargets C0, C1, C2, C1;\n"
                    "\tbrx.idx %r1, ts;\n"
                    "C0:\n\tbra.uni J;\n"
                    "C1:\n\tbra.uni J;\n"
                    "C2:\n\tmov.u32 %r2, 2;\n"
                    "J:\n\tret;\n");
    assert_int_equal(b.c->nblocks, 5);
    assert_int_equal(b.c->stmt_block[1], NONE); /* the target list is not code */
    succs(&b, 0, 1, 2, 3);                      /* list order, duplicates once, no fall-through */
    preds(&b, 1, 0);
    preds(&b, 2, 0);
    preds(&b, 3, 0);
    preds(&b, 4, 1, 2, 3);
    built_free(&b);
    /* a predicated brx.idx also falls through */
    b = build("\tts: .branchtargets A;\n\t@%p1 brx.idx %r1, ts;\n\texit;\nA:\n\tret;\n");
    assert_int_equal(b.c->nblocks, 3);
    succs(&b, 0, 2, 1);
    succs(&b, 1, X);
    built_free(&b);
}

static void test_ret_exit_trap(void **state)
{
    (void)state;
    built b = build("\t@%p1 ret;\n"   /* bb0: exit + fall-through */
                    "\t@!%p2 exit;\n" /* bb1 */
                    "\t@%p3 trap;\n"  /* bb2: fall-through only */
                    "\ttrap;\n"       /* bb3: nothing */
                    "L:\n\texit;\n"   /* bb4 */
                    "M:\n\tret.uni;\n");
    assert_int_equal(b.c->nblocks, 6);
    succs(&b, 0, X, 1);
    succs(&b, 1, X, 2);
    succs(&b, 2, 3);
    no_succs(&b, 3);
    succs(&b, 4, X);
    no_preds(&b, 4);
    succs(&b, 5, X);
    no_preds(&b, 5);
    built_free(&b);
}

static void test_call_ends_a_block(void **state)
{
    (void)state;
    built b = build("\tmov.u32 %r1, 1;\n"
                    "\tcall.uni (retval0), f, (param0);\n"
                    "\tmov.u32 %r2, 1;\n"
                    "\t@%p1 call g, ();\n"
                    "\tret;\n");
    assert_int_equal(b.c->nblocks, 3);
    assert_int_equal(b.c->blocks[0].ninstrs, 2);
    assert_int_equal(b.c->blocks[0].last, 1);
    succs(&b, 0, 1);
    succs(&b, 1, 2);
    preds(&b, 2, 1);
    succs(&b, 2, X);
    built_free(&b);
}

static void test_barriers_do_not_end_blocks(void **state)
{
    (void)state;
    built b = build("\tbar.sync 0;\n\tbarrier.cluster.arrive;\n\tbar.warp.sync -1;\n\tret;\n");
    assert_int_equal(b.c->nblocks, 1);
    assert_int_equal(b.c->blocks[0].ninstrs, 4);
    built_free(&b);
}

static void test_nested_scopes_and_scoped_labels(void **state)
{
    (void)state;
    /* Inline asm repeats a label in sibling scopes; each branch binds to its own. */
    built b = build("\tmov.u32 %r1, 1;\n"
                    "\t{\n\t.reg .pred p;\n\twaitLoop:\n\tmbarrier.try_wait.b64 p, [%r1], %r2;\n"
                    "\t@!p bra.uni waitLoop;\n\t}\n"
                    "\t{\n\t.reg .pred p;\n\twaitLoop:\n\tmbarrier.try_wait.b64 p, [%r1], %r2;\n"
                    "\t@!p bra.uni waitLoop;\n\t}\n"
                    "\tret;\n");
    assert_int_equal(b.c->nblocks, 4);
    succs(&b, 0, 1);
    succs(&b, 1, 1, 2);
    succs(&b, 2, 2, 3);
    preds(&b, 2, 1, 2);
    succs(&b, 3, X);
    built_free(&b);
    /* inner code may branch to an outer label; an inner label shadows an outer one */
    b = build("OUT:\n\tmov.u32 %r1, 1;\n"
              "\t{\n\tIN:\n\t@%p1 bra IN;\n\t@%p2 bra OUT;\n\t{\n\tOUT:\n\t@%p3 bra OUT;\n\t}\n\t}\n"
              "\tret;\n");
    assert_int_equal(b.c->nblocks, 5);
    succs(&b, 0, 1);
    succs(&b, 1, 1, 2);
    succs(&b, 2, 0, 3);
    succs(&b, 3, 3, 4); /* the inner OUT */
    built_free(&b);
}

static void test_removed_statements_are_skipped(void **state)
{
    (void)state;
    built b = build("\tbra L;\n\tmov.u32 %r1, 1;\nL:\n\tret;\n");
    assert_int_equal(b.c->nblocks, 3);
    ptx_cfg_free(b.c);
    ptx_stmt_remove(b.f, 0);
    ptx_diag d;
    b.c = ptx_cfg_build(b.f, &d);
    assert_non_null(b.c);
    assert_int_equal(b.c->nblocks, 2);
    assert_int_equal(b.c->stmt_block[0], NONE);
    succs(&b, 0, 1);
    built_free(&b);
}

static void test_cfg_dump(void **state)
{
    (void)state;
    built b = build("\tmov.u32 %r1, 1;\n\t@%p1 bra L;\n\tcall f, ();\nL:\n\tret;\n");
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    ptx_cfg_dump(b.c, f);
    fclose(f);
    assert_string_equal(buf,
                        "cfg kernel k: 3 blocks\n"
                        "  bb0: lines 6-7, 2 instructions; preds: entry; succs: bb2 bb1; ends with predicated bra\n"
                        "  bb1: lines 8-8, 1 instructions; preds: bb0; succs: bb2; ends with call\n"
                        "  bb2 (L): lines 9-10, 1 instructions; preds: bb0 bb1; succs: exit; ends with ret\n");
    free(buf);
    built_free(&b);
}

static void test_cfg_errors(void **state)
{
    (void)state;
    cfg_err("\tbra.uni NOWHERE;\n", 6, 10, "branch to unknown label 'NOWHERE'");
    cfg_err("L:\n\tret;\nL:\n\tret;\n", 8, 1, "duplicate label 'L'");
    cfg_err("\t{\n\tL:\n\tret;\n\t}\n\tbra L;\n", 10, 6, "branch to unknown label 'L'"); /* not visible outside */
    cfg_err("\t{\n\tL:\n\tL:\n\tret;\n\t}\n", 8, 2, "duplicate label 'L'");
    cfg_err("\tt: .branchtargets L;\n\tbra t;\nL:\n\tret;\n", 7, 6, "branch to unknown label 't'");
    cfg_err("\tbrx.idx %r1, nolist;\n", 6, 15, "brx.idx names unknown .branchtargets list 'nolist'");
    cfg_err("L:\n\tbrx.idx %r1, L;\n", 7, 15, "brx.idx names unknown .branchtargets list 'L'");
    cfg_err("\tp: .calltargets f;\n\tbrx.idx %r1, p;\n", 7, 15, "brx.idx names unknown .branchtargets list 'p'");
    cfg_err("\tt: .branchtargets A, B;\n\tbrx.idx %r1, t;\nA:\n\tret;\n", 6, 23,
            "branch target list names unknown label 'B'");
    cfg_err("\tbra %r1, L;\n", 6, 2, "expected one label operand for 'bra'");
    cfg_err("\tbra [L];\n", 6, 2, "expected one label operand for 'bra'");
    cfg_err("\tbrx.idx %r1;\n", 6, 2, "expected 'brx.idx index, targets'");
}

/* ------------------------------------------------------------ special registers */

static void check_sreg_at(const char *name, ptx_sreg want, int want_comp, const char *file, int line)
{
    int comp = 99;
    ptx_sreg got = ptx_sreg_classify(name, strlen(name), &comp);
    if (got != want || comp != want_comp) {
        print_error("%s:%d: %s: got %d comp %d, expected %d comp %d\n", file, line, name, got, comp, want, want_comp);
        _fail(file, line);
    }
}
#define check_sreg(name, want, comp) check_sreg_at((name), (want), (comp), __FILE__, __LINE__)

static void test_sreg_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *base;
        ptx_sreg r;
    } vec[] = {
        {"%tid", PTX_SREG_TID},
        {"%ntid", PTX_SREG_NTID},
        {"%ctaid", PTX_SREG_CTAID},
        {"%nctaid", PTX_SREG_NCTAID},
        {"%clusterid", PTX_SREG_CLUSTERID},
        {"%nclusterid", PTX_SREG_NCLUSTERID},
        {"%cluster_ctaid", PTX_SREG_CLUSTER_CTAID},
        {"%cluster_nctaid", PTX_SREG_CLUSTER_NCTAID},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char buf[64];
        check_sreg(vec[i].base, vec[i].r, -1);
        static const char comps[] = "xyz";
        for (int c = 0; c < 3; c++) {
            snprintf(buf, sizeof buf, "%s.%c", vec[i].base, comps[c]);
            check_sreg(buf, vec[i].r, c);
        }
        snprintf(buf, sizeof buf, "%s.w", vec[i].base);
        check_sreg(buf, PTX_SREG_NONE, -1);
        snprintf(buf, sizeof buf, "%s.X", vec[i].base);
        check_sreg(buf, PTX_SREG_NONE, -1);
        assert_string_equal(ptx_sreg_name(vec[i].r), vec[i].base);
    }
}

static void test_sreg_scalars(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        ptx_sreg r;
    } sc[] = {
        {"%laneid", PTX_SREG_LANEID},
        {"%warpid", PTX_SREG_WARPID},
        {"%nwarpid", PTX_SREG_NWARPID},
        {"%smid", PTX_SREG_SMID},
        {"%nsmid", PTX_SREG_NSMID},
        {"%gridid", PTX_SREG_GRIDID},
        {"%is_explicit_cluster", PTX_SREG_IS_EXPLICIT_CLUSTER},
        {"%cluster_ctarank", PTX_SREG_CLUSTER_CTARANK},
        {"%cluster_nctarank", PTX_SREG_CLUSTER_NCTARANK},
        {"%lanemask_eq", PTX_SREG_LANEMASK},
        {"%lanemask_le", PTX_SREG_LANEMASK},
        {"%lanemask_lt", PTX_SREG_LANEMASK},
        {"%lanemask_ge", PTX_SREG_LANEMASK},
        {"%lanemask_gt", PTX_SREG_LANEMASK},
        {"%clock", PTX_SREG_CLOCK},
        {"%clock_hi", PTX_SREG_CLOCK},
        {"%clock64", PTX_SREG_CLOCK64},
        {"%globaltimer", PTX_SREG_GLOBALTIMER},
        {"%globaltimer_lo", PTX_SREG_GLOBALTIMER},
        {"%globaltimer_hi", PTX_SREG_GLOBALTIMER},
        {"%total_smem_size", PTX_SREG_SMEM_SIZE},
        {"%aggr_smem_size", PTX_SREG_SMEM_SIZE},
        {"%dynamic_smem_size", PTX_SREG_SMEM_SIZE},
        {"%reserved_smem_offset_begin", PTX_SREG_RESERVED_SMEM},
        {"%reserved_smem_offset_end", PTX_SREG_RESERVED_SMEM},
        {"%reserved_smem_offset_cap", PTX_SREG_RESERVED_SMEM},
        {"%reserved_smem_offset_0", PTX_SREG_RESERVED_SMEM},
        {"%reserved_smem_offset_1", PTX_SREG_RESERVED_SMEM},
        {"%current_graph_exec", PTX_SREG_CURRENT_GRAPH_EXEC},
        {"%pm0", PTX_SREG_PM},
        {"%pm7", PTX_SREG_PM},
        {"%pm3_64", PTX_SREG_PM},
        {"%envreg0", PTX_SREG_ENVREG},
        {"%envreg31", PTX_SREG_ENVREG},
    };
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        check_sreg(sc[i].name, sc[i].r, -1);
        char buf[64];
        snprintf(buf, sizeof buf, "%s.x", sc[i].name); /* scalars have no components */
        check_sreg(buf, PTX_SREG_NONE, -1);
    }
    /* names */
    assert_string_equal(ptx_sreg_name(PTX_SREG_LANEMASK), "%lanemask");
    assert_string_equal(ptx_sreg_name(PTX_SREG_SMID), "%smid");
    assert_string_equal(ptx_sreg_name(PTX_SREG_NONE), "?");
    assert_string_equal(ptx_sreg_name(PTX_SREG_COUNT), "?");
    for (int r = 0; r < PTX_SREG_COUNT; r++) {
        const char *n = ptx_sreg_name((ptx_sreg)r);
        assert_true(n[0] == '%');
    }
}

static void test_sreg_not_special(void **state)
{
    (void)state;
    static const char *const not [] = {"%r1",     "%rd12",    "%tidx", "%ti",      "%pm",       "%pm8x", "%pm_64",
                                       "%envreg", "%envregx", "tid",   "%",        "",          "%p1",   "%laneid.y",
                                       "%ctaid.", "%smid.x",  "%f1.x", "%clock32", "%lanemask", "%pm0.x"};
    for (size_t i = 0; i < sizeof not / sizeof not [0]; i++) check_sreg(not [i], PTX_SREG_NONE, -1);
    /* component pointer may be NULL; length, not NUL, ends the name */
    assert_int_equal(ptx_sreg_classify("%ctaid.y", 8, NULL), PTX_SREG_CTAID);
    assert_int_equal(ptx_sreg_classify("%ctaid.yZZZ", 6, NULL), PTX_SREG_CTAID);
    int comp = 7;
    assert_int_equal(ptx_sreg_classify("%tid.zq", 6, &comp), PTX_SREG_TID);
    assert_int_equal(comp, 2);
}

static void test_count_sregs(void **state)
{
    (void)state;
    built b = build("\tmov.u32 %r1, %ctaid.x;\n"
                    "\tmad.lo.s32 %r2, %ctaid.y, %ntid.x, %tid.x;\n"
                    "\tmov.u32 %r3, %smid;\n"
                    "\t@%p1 mov.u64 %rd1, %clock64;\n"
                    "\tmov.u32 %r4, %pm0;\n"
                    "\tmov.u32 %r5, %r1;\n"
                    "\tret;\n");
    unsigned counts[PTX_SREG_COUNT] = {0};
    for (uint32_t i = 0; i < b.f->nstmts; i++) ptx_stmt_count_sregs(b.m, &b.f->stmts[i], counts);
    assert_int_equal(counts[PTX_SREG_CTAID], 2);
    assert_int_equal(counts[PTX_SREG_NTID], 1);
    assert_int_equal(counts[PTX_SREG_TID], 1);
    assert_int_equal(counts[PTX_SREG_SMID], 1);
    assert_int_equal(counts[PTX_SREG_CLOCK64], 1);
    assert_int_equal(counts[PTX_SREG_PM], 1);
    unsigned total = 0;
    for (int r = 0; r < PTX_SREG_COUNT; r++) total += counts[r];
    assert_int_equal(total, 7);
    built_free(&b);
}

/* ------------------------------------------------------------ barriers and stats */

static void test_barrier_classification(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        ptx_op_class cls;
    } cases[] = {
        {"bar.sync", PTX_OP_BARRIER},
        {"bar.arrive", PTX_OP_BARRIER},
        {"bar.red.popc.u32", PTX_OP_BARRIER},
        {"bar.red.and.pred", PTX_OP_BARRIER},
        {"bar.cta.sync", PTX_OP_BARRIER},
        {"bar.cta.arrive.aligned", PTX_OP_BARRIER},
        {"barrier.sync", PTX_OP_BARRIER},
        {"barrier.sync.aligned", PTX_OP_BARRIER},
        {"barrier.arrive", PTX_OP_BARRIER},
        {"barrier.red.or.pred", PTX_OP_BARRIER},
        {"barrier.cta.sync.aligned", PTX_OP_BARRIER},
        {"barrier.cta.arrive", PTX_OP_BARRIER},
        {"bar.warp.sync", PTX_OP_BAR_WARP},
        {"barrier.cluster.arrive", PTX_OP_BAR_CLUSTER},
        {"barrier.cluster.arrive.release.aligned", PTX_OP_BAR_CLUSTER},
        {"barrier.cluster.wait", PTX_OP_BAR_CLUSTER},
        {"barrier.cluster.wait.acquire", PTX_OP_BAR_CLUSTER},
        {"bra", PTX_OP_BRA},
        {"bra.uni", PTX_OP_BRA},
        {"brx.idx", PTX_OP_BRX},
        {"brx.idx.uni", PTX_OP_BRX},
        {"ret", PTX_OP_RET},
        {"exit", PTX_OP_EXIT},
        {"trap", PTX_OP_TRAP},
        {"call.uni", PTX_OP_CALL},
        {"barx", PTX_OP_OTHER},
        {"barriers", PTX_OP_OTHER},
        {"brev.b32", PTX_OP_OTHER},
        {"mbarrier.arrive.shared.b64", PTX_OP_OTHER},
        {"fence.proxy.async", PTX_OP_OTHER},
        {"red.global.add.u32", PTX_OP_OTHER},
        {"ex2.approx.f32", PTX_OP_OTHER},
        {"tra", PTX_OP_OTHER},
        {"calls", PTX_OP_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ptx_op_class got = ptx_classify_opcode(cases[i].op, strlen(cases[i].op));
        if (got != cases[i].cls) fail_msg("%s: class %d, expected %d", cases[i].op, got, cases[i].cls);
    }
}

static void test_func_stats(void **state)
{
    (void)state;
    built b = build("\t.reg .b32 %r<4>;\n"
                    "\tmov.u32 %r1, %tid.x;\n"
                    "\tbar.sync 0;\n"
                    "\tbarrier.sync.aligned 1, 64;\n"
                    "\tbar.red.popc.u32 %r2, 0, %p1;\n"
                    "\tbar.warp.sync -1;\n"
                    "\tbarrier.cluster.arrive;\n"
                    "\tbarrier.cluster.wait;\n"
                    "\tcall.uni f, ();\n"
                    "\t@%p1 bra L;\n"
                    "\tmov.u32 %r3, %ctaid.x;\n"
                    "L:\n"
                    "\tret;\n");
    ptx_func_stats st;
    ptx_diag d;
    ptx_diag_init(&d, "t.ptx");
    assert_int_equal(ptx_func_stats_compute(b.f, &st, &d), 0);
    assert_int_equal(st.instructions, 11);
    assert_int_equal(st.blocks, 4);
    assert_int_equal(st.barriers, 3);
    assert_int_equal(st.warp_barriers, 1);
    assert_int_equal(st.cluster_barriers, 2);
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.sregs[PTX_SREG_TID], 1);
    assert_int_equal(st.sregs[PTX_SREG_CTAID], 1);
    /* removed statements do not count */
    ptx_stmt_remove(b.f, 2);
    assert_int_equal(ptx_func_stats_compute(b.f, &st, &d), 0);
    assert_int_equal(st.instructions, 10);
    assert_int_equal(st.barriers, 2);
    built_free(&b);
}

static void test_stats_print(void **state)
{
    (void)state;
    ptx_module *m = parse_ok(PTX_HDR ".extern .func f();\n"
                                     ".visible .entry k()\n{\n\tmov.u32 %r1, %smid;\n\tbar.sync 0;\n\tret;\n}\n"
                                     ".func g()\n{\n\tbar.warp.sync -1;\n\tret;\n}\n");
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ptx_diag d;
    ptx_diag_init(&d, "t.ptx");
    assert_int_equal(ptx_stats_print(m, f, &d), 0);
    fclose(f);
    assert_string_equal(buf, "module t.ptx: PTX 8.0, target sm_90a, 64-bit addresses, 3 functions\n"
                             "func f: declaration\n"
                             "kernel k: 3 instructions, 1 blocks, 1 barriers, 0 calls; special registers: %smid 1\n"
                             "func g: 2 instructions, 1 blocks, 0 barriers, 1 warp barriers, 0 calls; "
                             "special registers: none\n");
    free(buf);
    ptx_module_free(m);
    /* a CFG error stops the stats */
    m = parse_ok(PTX_HDR ".visible .entry k()\n{\n\tbra X;\n}\n");
    f = open_memstream(&buf, &n);
    assert_int_equal(ptx_stats_print(m, f, &d), -1);
    fclose(f);
    free(buf);
    assert_string_equal(d.msg, "branch to unknown label 'X'");
    ptx_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straight_line),
        cmocka_unit_test(test_empty_body_and_falling_off),
        cmocka_unit_test(test_unconditional_bra),
        cmocka_unit_test(test_predicated_bra_and_loop),
        cmocka_unit_test(test_predicated_bra_fallthrough),
        cmocka_unit_test(test_consecutive_labels_share_a_block),
        cmocka_unit_test(test_brx_idx),
        cmocka_unit_test(test_ret_exit_trap),
        cmocka_unit_test(test_call_ends_a_block),
        cmocka_unit_test(test_barriers_do_not_end_blocks),
        cmocka_unit_test(test_nested_scopes_and_scoped_labels),
        cmocka_unit_test(test_removed_statements_are_skipped),
        cmocka_unit_test(test_cfg_dump),
        cmocka_unit_test(test_cfg_errors),
        cmocka_unit_test(test_sreg_vectors),
        cmocka_unit_test(test_sreg_scalars),
        cmocka_unit_test(test_sreg_not_special),
        cmocka_unit_test(test_count_sregs),
        cmocka_unit_test(test_barrier_classification),
        cmocka_unit_test(test_func_stats),
        cmocka_unit_test(test_stats_print),
    };
    return cmocka_run_group_tests_name("cfg", tests, NULL, NULL);
}
