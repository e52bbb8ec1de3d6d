/* The tidal transform's pipeline (passes/tidal_pipeline.c) and its refusal table
 * (passes/tidal_refusal.c): the tables are well formed, a pipeline cut after a phase
 * leaves the module as that phase leaves it, and both paths' callee rule. */
#include "tidal_test.h"

#include "tidal_internal.h"

static void phase_table(void **state)
{
    (void)state;
    static const char *const order[TIDAL_NPHASES] = {"facts", "convergence", "plan", "rewrite", "clone"};
    for (unsigned k = 0; k < TIDAL_NPHASES; k++) {
        const tidal_phase *p = &tidal_phases[k];
        assert_string_equal(p->name, order[k]);
        assert_non_null(p->run);
        assert_non_null(p->dump);
        assert_true(p->help && p->help[0]);
        assert_true(p->letter >= 'a' && p->letter <= 'z');
        for (unsigned j = 0; j < k; j++) assert_int_not_equal(p->letter, tidal_phases[j].letter);
    }
}

static void refusal_table(void **state)
{
    (void)state;
    assert_string_equal(tidal_reason_name(TIDAL_REASON_NONE), "");
    for (unsigned r = 1; r < TIDAL_NREASONS; r++) {
        const tidal_refusal *x = &tidal_refusals[r];
        assert_true(x->name && x->name[0]);
        assert_true(x->why && x->why[0]);
        /* the IR-level rewrite's own reasons, and only those, are ir-* */
        assert_int_equal(x->ir_only, strncmp(x->name, "ir-", 3) == 0);
        for (unsigned q = 1; q < r; q++) assert_string_not_equal(x->name, tidal_refusals[q].name);
        assert_string_equal(tidal_reason_name((tidal_reason)r), x->name);
    }
}

static void callee_rule(void **state)
{
    (void)state;
    tidal_facts x;
    tidal_facts_empty(&x);
    assert_int_equal(tidal_callee_refusal(&x), TIDAL_REASON_NONE);
    x.reads_ctaid = true;
    assert_int_equal(tidal_callee_refusal(&x), TIDAL_REFUSE_CALLEE_READS_CTAID);
    x.exit_instr = true; /* exit is named first: it is the worse of the two */
    assert_int_equal(tidal_callee_refusal(&x), TIDAL_REFUSE_EXIT_IN_CALLEE);
    x.cta_barrier = x.warp_sync = true; /* nothing else matters to it */
    x.reads_ctaid = false;
    assert_int_equal(tidal_callee_refusal(&x), TIDAL_REFUSE_EXIT_IN_CALLEE);
}

static const char module[] = PTX_HDR ".visible .entry ok(.param .u64 out)\n"
                                     "{\n"
                                     "\t.reg .b32 %r<2>;\n"
                                     "\t.reg .b64 %rd<2>;\n"
                                     "\tmov.u32 %r1, %ctaid.x;\n"
                                     "\tld.param.u64 %rd1, [out];\n"
                                     "\tst.global.u32 [%rd1], %r1;\n"
                                     "\tret;\n"
                                     "}\n"
                                     ".visible .entry refused(.param .u64 out)\n"
                                     "\t.explicitcluster\n"
                                     "{\n"
                                     "\t.reg .b32 %r<2>;\n"
                                     "\tmov.u32 %r1, %envreg2;\n"
                                     "\tret;\n"
                                     "}\n";

/* Runs the phases up to `last`; returns the printed module. */
static char *run_until(unsigned last, tidal_report *rep, ptx_module **mp)
{
    ptx_module *m = parse_ok(module);
    tidal_pipeline p = {.last = last};
    tidal_run_pipeline(m, NULL, &p, rep);
    *mp = m;
    return print_str(m);
}

static void cut_after_plan(void **state)
{
    (void)state;
    tidal_report rep;
    ptx_module *m;
    char *out = run_until(TIDAL_PHASE_PLAN, &rep, &m);
    /* decided, nothing changed */
    assert_false(m->modified);
    assert_string_equal(out, module);
    assert_int_equal(rep.nkernels, 2);
    assert_string_equal(rep.kernels[0].name, "ok");
    assert_int_equal(rep.kernels[0].verdict, TIDAL_REWRITTEN);
    assert_int_equal(rep.kernels[0].exit_mode, TIDAL_EXIT_NO_BARRIERS);
    assert_true(rep.kernels[0].original_verbatim);
    /* clusters and the launch environment: the table's first rule names it */
    assert_int_equal(rep.kernels[1].verdict, TIDAL_REFUSED);
    assert_int_equal(rep.kernels[1].reason, TIDAL_REFUSE_CLUSTERS);
    free(out);
    ptx_module_free(m);
}

static void cut_after_rewrite_and_whole(void **state)
{
    (void)state;
    tidal_report rep;
    ptx_module *m;
    char *out = run_until(TIDAL_PHASE_REWRITE, &rep, &m);
    /* the rewritten entry and the marker, no clone yet */
    assert_non_null(strstr(out, "__tidal_rewritten_v5"));
    assert_non_null(strstr(out, "$tdl_next"));
    assert_null(strstr(out, "__tidal_reshaped"));
    free(out);
    ptx_module_free(m);
    out = run_until(TIDAL_PHASE_CLONE, &rep, &m);
    assert_non_null(strstr(out, ".entry ok__tidal_reshaped("));
    assert_null(strstr(out, ".entry refused__tidal_reshaped("));
    /* the original entry is back to its input bytes (no case b) */
    assert_non_null(strstr(out, ".visible .entry ok(.param .u64 out)\n{\n\t.reg .b32 %r<2>;"));
    free(out);
    ptx_module_free(m);
    /* tidal_run is the whole pipeline */
    ptx_module *w = parse_ok(module);
    tidal_run(w, NULL, &rep);
    char *whole = print_str(w);
    out = run_until(TIDAL_PHASE_CLONE, &rep, &m);
    assert_string_equal(whole, out);
    free(whole);
    free(out);
    ptx_module_free(w);
    ptx_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(phase_table),
        cmocka_unit_test(refusal_table),
        cmocka_unit_test(callee_rule),
        cmocka_unit_test(cut_after_plan),
        cmocka_unit_test(cut_after_rewrite_and_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
