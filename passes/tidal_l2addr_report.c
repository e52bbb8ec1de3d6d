/* tidal_l2addr_report.c — the l2addr pass's refusal table (each reason's name and what it
 * means: tidal-opt --help lists them, docs/design.md "The l2addr pass" explains them) and
 * its report, as text and as JSON (the same streams as the tidal pass's report). */
#include "tidal_l2addr.h"

#include "tidal_l2.h" /* TIDAL_L2ADDR_SYMBOL_PREFIX: the word a translated parameter reads */

const tidal_l2addr_refusal tidal_l2addr_refusals[L2A_NREASONS] = {
    [L2A_OK] = {"", ""},
    [L2A_REFUSE_NO_BODY] = {"no-body", "the kernel is only declared"},
    [L2A_REFUSE_ADDRESS_SIZE] = {"address-size", "the translation is 64-bit (.address_size 32)"},
    [L2A_REFUSE_PARAM_TYPE] = {"param-type", "the parameter is no .u64 scalar, so no pointer"},
    [L2A_REFUSE_PARAM_ADDRESS] = {"param-address", "the parameter is read other than by ld.param.u64 [PARAM]"},
    [L2A_REFUSE_NAME_COLLISION] = {"name-collision", "%tl2a_ names are taken, or the parameter is translated"},
    [L2A_REFUSE_MIXED_DEFS] = {"mixed-definitions", "a register holds the pointer on one path, not on another"},
    [L2A_REFUSE_MIXED_POINTERS] = {"mixed-pointers", "the pointer is combined with another pointer parameter"},
    [L2A_REFUSE_STORED] = {"stored", "the pointer is stored to memory"},
    [L2A_REFUSE_CALL] = {"call", "the pointer is passed to a call"},
    [L2A_REFUSE_COMPARED] = {"compared", "the pointer is compared"},
    [L2A_REFUSE_GENERIC] = {"generic", "converted to generic, or accessed outside .global"},
    [L2A_REFUSE_WIDE_ACCESS] = {"wide-access", "an access wider than 16 bytes may cross a 4 KiB block"},
    [L2A_REFUSE_OTHER_USE] = {"other-use", "an instruction the pass does not follow uses the pointer"},
    [L2A_REFUSE_SIBLING] = {"sibling", "another chosen parameter of the kernel was refused"},
};

void tidal_l2addr_report_print_text(const tidal_l2addr_report *r, FILE *out)
{
    unsigned ok = 0;
    for (unsigned i = 0; i < r->nitems; i++) ok += r->items[i].reason == L2A_OK;
    fprintf(out, "%s: l2addr: %u parameters, %u translated, %u refused\n", r->file, r->nitems, ok, r->nitems - ok);
    for (unsigned i = 0; i < r->nitems; i++) {
        const tidal_l2addr_item *k = &r->items[i];
        if (k->reason == L2A_OK)
            fprintf(out, "  translated %s:%s (line %u): %u accesses, %u registers added\n", k->kernel, k->param_name,
                    k->line, k->accesses, k->regs_added);
        else
            fprintf(out, "  refused    %s:%s (line %u): %s: %s\n", k->kernel, k->param_name, k->line,
                    tidal_l2addr_refusals[k->reason].name, k->detail);
    }
}

void tidal_l2addr_report_print_json(const tidal_l2addr_report *r, FILE *out)
{
    fputs("{\"file\": ", out);
    ptx_json_str(out, r->file);
    fputs(", \"l2addr\": [", out);
    for (unsigned i = 0; i < r->nitems; i++) {
        const tidal_l2addr_item *k = &r->items[i];
        fputs(i ? ",\n  {\"kernel\": " : "\n  {\"kernel\": ", out);
        ptx_json_str(out, k->kernel);
        fputs(", \"param\": ", out);
        ptx_json_str(out, k->param_name);
        fprintf(out, ", \"index\": %u, \"line\": %u, \"verdict\": \"%s\"", k->param_index, k->line,
                k->reason == L2A_OK ? "translated" : "refused");
        if (k->reason == L2A_OK) {
            fprintf(out, ", \"accesses\": %u, \"registers_added\": %u, \"symbol\": \"" TIDAL_L2ADDR_SYMBOL_FMT "\"",
                    k->accesses, k->regs_added, k->param_index, k->kernel);
        } else {
            fputs(", \"reason\": ", out);
            ptx_json_str(out, tidal_l2addr_refusals[k->reason].name);
            fputs(", \"detail\": ", out);
            ptx_json_str(out, k->detail);
        }
        fputc('}', out);
    }
    fputs("\n]}\n", out);
}
