/* tidal_pipeline.c — the tidal transform as a table of phases and the runner that
 * takes a module through them (docs/design.md §2 "Pipeline"). Decide first, then edit:
 * the phases up to the plan read the input's token streams; rewrite and clone change
 * the module. */
#include "tidal_internal.h"

const tidal_phase tidal_phases[TIDAL_NPHASES] = {
    [TIDAL_PHASE_FACTS] = {"facts", 'f', "what each function does, alone and with its callees", tidal_phase_facts,
                           tidal_dump_facts},
    [TIDAL_PHASE_CONVERGENCE] = {"convergence", 'c', "per kernel: exit mode and tidal's barrier id, or why none",
                                 tidal_phase_convergence, tidal_dump_convergence},
    [TIDAL_PHASE_PLAN] = {"plan", 'p', "per kernel: rewrite (how) or refuse (why): the report", tidal_phase_plan,
                          tidal_dump_plan},
    [TIDAL_PHASE_REWRITE] = {"rewrite", 'r', "the rewritten kernels' bodies and the module's globals",
                             tidal_phase_rewrite, tidal_dump_rewrite},
    [TIDAL_PHASE_CLONE] = {"clone", 'k', "the reshaped clones, NAME__tidal_reshaped", tidal_phase_clone,
                           tidal_dump_clone},
};

static void state_free(tidal_state *s)
{
    for (uint32_t k = 0; k < s->nkernels; k++) tidal_pieces_free(&s->kernels[k].pieces);
    free(s->kernels);
    free(s->fns);
}

void tidal_run_pipeline(ptx_module *m, const tidal_options *opt, const tidal_pipeline *p, tidal_report *rep)
{
    tidal_options defaults = TIDAL_OPTIONS_DEFAULT;
    tidal_pipeline all = TIDAL_PIPELINE_ALL;
    if (!opt) opt = &defaults;
    if (!p) p = &all;
    if (p->last >= TIDAL_NPHASES) ptx_ice("tidal pipeline: no phase %u", p->last);
    if (p->dumps && !p->dump_out) ptx_ice("tidal pipeline: dumps asked for without a stream");
    memset(rep, 0, sizeof *rep);
    rep->file = m->file;
    tidal_state s = {.m = m, .opt = opt, .rep = rep};
    for (unsigned k = 0; k <= p->last; k++) {
        tidal_phases[k].run(&s);
        if (p->dumps >> k & 1) tidal_phases[k].dump(&s, p->dump_out);
    }
    state_free(&s);
}

void tidal_run(ptx_module *m, const tidal_options *opt, tidal_report *rep) { tidal_run_pipeline(m, opt, NULL, rep); }
