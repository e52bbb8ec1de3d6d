/* tidal_report.c — what the tidal pass did to each kernel, as text or JSON. */
#include "tidal.h"

const char *tidal_exit_mode_name(tidal_exit_mode m)
{
    switch (m) {
    case TIDAL_EXIT_NO_BARRIERS: return "no-barriers";
    case TIDAL_EXIT_CONVERGENT: return "convergent-exits";
    case TIDAL_EXIT_FUNNEL: return "barrier-funnel";
    case TIDAL_EXIT_NONE: break;
    }
    return "";
}

void tidal_report_print_text(const tidal_report *r, FILE *out)
{
    unsigned rewritten = 0;
    for (unsigned i = 0; i < r->nkernels; i++) rewritten += r->kernels[i].verdict == TIDAL_REWRITTEN;
    fprintf(out, "%s%s%s%s: %u kernels, %u rewritten, %u refused\n", r->file, r->note ? " (" : "",
            r->note ? r->note : "", r->note ? ")" : "", r->nkernels, rewritten, r->nkernels - rewritten);
    for (unsigned i = 0; i < r->nkernels; i++) {
        const tidal_kernel_report *k = &r->kernels[i];
        if (k->verdict == TIDAL_REWRITTEN)
            fprintf(out, "  rewritten %s (line %u): %s, %u registers added%s%s\n", k->name, k->line,
                    tidal_exit_mode_name(k->exit_mode), k->regs_added,
                    k->barrier_between_blocks ? ", barrier between logical blocks" : "",
                    !k->original_verbatim ? ""
                    : k->verbatim_shared  ? ", original entry verbatim (dynamic shared memory: no case b)"
                                          : ", original entry verbatim");
        else
            fprintf(out, "  refused   %s (line %u): %s: %s\n", k->name, k->line, tidal_reason_name(k->reason),
                    k->detail);
    }
}

void tidal_report_print_json(const tidal_report *r, FILE *out)
{
    fputs("{\"file\": ", out);
    ptx_json_str(out, r->file);
    if (r->note) {
        fputs(", \"note\": ", out);
        ptx_json_str(out, r->note);
    }
    fputs(", \"kernels\": [", out);
    for (unsigned i = 0; i < r->nkernels; i++) {
        const tidal_kernel_report *k = &r->kernels[i];
        fputs(i ? ",\n  {" : "\n  {", out);
        fputs("\"name\": ", out);
        ptx_json_str(out, k->name);
        fprintf(out, ", \"line\": %u, \"verdict\": \"%s\"", k->line,
                k->verdict == TIDAL_REWRITTEN ? "rewritten" : "refused");
        if (k->verdict == TIDAL_REWRITTEN) {
            fputs(", \"exit_mode\": ", out);
            ptx_json_str(out, tidal_exit_mode_name(k->exit_mode));
            fprintf(out, ", \"registers_added\": %u, \"barrier_between_blocks\": %s, \"original_verbatim\": %s",
                    k->regs_added, k->barrier_between_blocks ? "true" : "false",
                    k->original_verbatim ? "true" : "false");
        } else {
            fputs(", \"reason\": ", out);
            ptx_json_str(out, tidal_reason_name(k->reason));
            fputs(", \"detail\": ", out);
            ptx_json_str(out, k->detail);
        }
        fputc('}', out);
    }
    fputs("\n]}\n", out);
}
