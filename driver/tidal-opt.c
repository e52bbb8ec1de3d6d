/* tidal-opt — reads PTX or LLVM IR, runs tidal passes, writes PTX, a cubin or IR.
 *
 * An input goes through the stages of a route (routes[], as cproc's driver.c routes
 * its inputs): the input's kind (input_kinds[]: LLVM IR by name or bitcode magic, else
 * PTX) and what is written (--emit) pick it. LLVM IR input (built with LLVM 22:
 * TIDAL_HAVE_LLVM) goes through passes/llvm/: --emit=ptx lowers it with the NVPTX
 * target and continues as PTX; --emit=llvm|bc keeps it IR (the tidal transform at IR
 * level). The passes (-p) are passes[], each with a PTX and an IR form; the tidal pass
 * is the library's pipeline of phases (tidal_phases), whose state -d dumps. Reports,
 * statistics and -d cfg come after the passes, of the result. The library prints
 * nothing: this file formats its diagnostics (ptx.h). Exit status: 0 success, 1 bad
 * input, 2 usage error, 70 internal error. */
#define _POSIX_C_SOURCE 200809L
#include "ptx.h"
#include "tidal.h"
#include "tidal_l2addr.h"
#include "cubin.h"
#include "util.h"
#ifdef TIDAL_HAVE_LLVM
#include "tidal_llvm.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TIDAL_VERSION
#error "TIDAL_VERSION (the CMake project version) is defined by CMakeLists.txt"
#endif

enum { MAX_PASSES = 64 };

/* What the command line asks for. */
typedef struct cli {
    const char *in, *out;
    const struct pass *pipeline[MAX_PASSES];
    size_t npipe;
    bool stats, dump_cfg;
    unsigned phase_dumps; /* bit k: -d tidal_phases[k] */
    int report;           /* 0 none, 1 text, 2 json */
    bool cubin;
    const char *cubin_arch;
    const char *emit, *arch;   /* LLVM IR input */
    tidal_options tidal;       /* --case-b, --assume-balanced-arrive */
    tidal_l2addr_item *l2addr; /* --l2addr KERNEL:PARAM,... */
    unsigned nl2addr;
    bool l2addr_pass; /* -p l2addr given */
} cli;

/* One input on its way through a route's stages. */
typedef struct job {
    const cli *o;
    const char *name; /* the input as messages name it */
    char *src;        /* its bytes, or the PTX lowered from it */
    size_t len;
    ptx_module *m;
#ifdef TIDAL_HAVE_LLVM
    tidal_llvm_module *lm;
#endif
    bool lowered; /* m is PTX that NVPTX lowered from the IR input */
    tidal_report reports[MAX_PASSES];
    unsigned nreports;
    tidal_l2addr_report l2reports[MAX_PASSES];
    unsigned nl2reports;
    ptx_module *retired[MAX_PASSES]; /* modules a pass's output replaced: their reports point into them */
    unsigned nretired;
    ptx_diag d; /* a failing stage's user error */
} job;

static int usage_error(const char *fmt, const char *arg)
{
    fputs("tidal-opt: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\ntry 'tidal-opt --help'\n", stderr);
    return 2;
}

/* ------------------------------------------------------------ passes (-p) */

/* Builds the CFG of every function: checks that all branch targets exist. */
static int verify_ptx(job *j)
{
    for (uint32_t i = 0; i < ptx_func_count(j->m); i++) {
        ptx_func *f = ptx_func_at(j->m, i);
        if (!f->has_body) continue;
        ptx_cfg *c = ptx_cfg_build(f, &j->d);
        if (!c) return -1;
        ptx_cfg_free(c);
    }
    return 0;
}

static int tidal_ptx(job *j)
{
    tidal_pipeline p = {.last = TIDAL_PHASE_CLONE, .dumps = j->o->phase_dumps, .dump_out = stdout};
    tidal_run_pipeline(j->m, &j->o->tidal, &p, &j->reports[j->nreports++]);
    return 0;
}

static ptx_module *as_written(job *j);

/* -p l2addr: the items of --l2addr, a copy per run so that each report keeps its own. */
static int l2addr_ptx(job *j)
{
    size_t n = j->o->nl2addr;
    tidal_l2addr_item *items = calloc(n + 1, sizeof *items);
    if (!items) ptx_ice("out of memory");
    memcpy(items, j->o->l2addr, n * sizeof *items);
    tidal_l2addr_report *r = &j->l2reports[j->nl2reports++];
    *r = (tidal_l2addr_report){.file = j->name, .items = items, .nitems = (unsigned)n};
    if (tidal_l2addr_run(j->m, items, (unsigned)n, &j->d)) return -1;
    /* The passes after it (tidal) read statements as source tokens: they get the PTX
     * this pass wrote, parsed again (their line numbers are of that PTX). */
    if (j->m->modified) {
        ptx_module *w = as_written(j);
        j->retired[j->nretired++] = j->m;
        j->m = w;
    }
    return 0;
}

#ifdef TIDAL_HAVE_LLVM
static int l2addr_ir(job *j)
{
    ptx_diag_error(&j->d, 0, 0, "the l2addr pass works on PTX: give --emit=ptx for LLVM IR input");
    return -1;
}

static int verify_ir(job *j) { return tidal_llvm_verify(j->lm, &j->d); }

static int tidal_ir(job *j)
{
    if (j->nreports) {
        ptx_diag_error(&j->d, 0, 0, "the tidal pass runs once on LLVM IR");
        return -1;
    }
    if (tidal_llvm_tidal(j->lm, j->o->arch, &j->o->tidal, &j->reports[0], &j->d)) return -1;
    j->nreports = 1;
    return 0;
}
#define IR_PASS(fn) fn
#else
#define IR_PASS(fn) NULL
#endif

/* Each pass in both forms: on a PTX module, and on LLVM IR kept IR (--emit=llvm|bc).
 * 0, or -1 with the user error in j->d. */
static const struct pass {
    const char *name;
    int (*ptx)(job *j);
    int (*ir)(job *j);
    const char *help;
} passes[] = {
    {"verify", verify_ptx, IR_PASS(verify_ir),
     "check control flow: every branch names a label, every brx.idx a\n"
     "                   .branchtargets list (LLVM IR: the LLVM verifier)"},
    {"tidal", tidal_ptx, IR_PASS(tidal_ir),
     "SM gate + persistent logical-block loop in every kernel it can prove safe;\n"
     "                   other kernels stay byte-identical (see --report). It runs the\n"
     "                   PHASES below in order; -d NAME or -d LETTER dumps the state\n"
     "                   after one"},
    {"l2addr", l2addr_ptx, IR_PASS(l2addr_ir),
     "translate the addresses of the pointer parameters --l2addr names into\n"
     "                   one L2 side's half of a tidal_l2mem (abi/tidal_l2.h): each\n"
     "                   ld/st/atom/red.global through the pointer gets tidal_l2_addr of\n"
     "                   (address - parameter), the layout read from the module word\n"
     "                   __tidal_l2addr_pN_KERNEL the runtime fills (all zero: addresses\n"
     "                   as before). A kernel it cannot prove stays byte-identical\n"
     "                   (L2ADDR REFUSALS; --report). PTX only"},
};

/* ------------------------------------------------------------ stages */

/* A stage: 0 to go on to the next, else the exit status. */
typedef int (*stage_fn)(job *j);

static int print_error(job *j)
{
    ptx_diag_print(&j->d, stderr);
    return 1;
}

static void print_reports(job *j)
{
    if (!j->o->report) return;
    FILE *rf = j->o->out && !strcmp(j->o->out, "-") ? stderr : stdout;
    for (unsigned i = 0; i < j->nl2reports; i++) {
        if (j->o->report == 2)
            tidal_l2addr_report_print_json(&j->l2reports[i], rf);
        else
            tidal_l2addr_report_print_text(&j->l2reports[i], rf);
    }
    for (unsigned i = 0; i < j->nreports; i++) {
        if (j->o->report == 2)
            tidal_report_print_json(&j->reports[i], rf);
        else
            tidal_report_print_text(&j->reports[i], rf);
    }
    if (!j->nreports && !j->nl2reports)
        fputs("tidal-opt: --report: the tidal pass did not run (add -p tidal)\n", stderr);
}

static int ptx_read(job *j)
{
    j->m = ptx_parse(j->name, j->src, j->len, &j->d);
    free(j->src);
    j->src = NULL;
    if (!j->m) return print_error(j);
    if (j->m->ntoks == 0) { /* no token: nothing but whitespace and comments */
        fprintf(stderr,
                "%s:1:1: error: no PTX in the input (it is empty or holds only whitespace and comments); "
                "a PTX module starts with .version\n",
                j->name);
        return 1;
    }
    return 0;
}

static int ptx_passes(job *j)
{
    for (size_t i = 0; i < j->o->npipe; i++)
        if (j->o->pipeline[i]->ptx(j)) return print_error(j);
    /* LLVM IR lowered to PTX (--emit=ptx): the report names the .ll/.bc, but its line
     * numbers are of the lowered PTX */
    for (unsigned i = 0; j->lowered && i < j->nreports; i++)
        j->reports[i].note = "lowered to PTX by NVPTX; line numbers are of that PTX, which tidal-opt "
                             "--emit=ptx without -p prints";
    return 0;
}

/* The module as written: a pass that changed it is shown by the PTX it prints, read
 * again, so --stats and -d cfg (and their line numbers) are of the output. */
static ptx_module *as_written(job *j)
{
    if (!j->m->modified) return j->m;
    size_t n;
    char *text = ptx_print_to_string(j->m, &n);
    if (!text) ptx_ice("cannot print the module");
    ptx_diag d;
    ptx_module *out = ptx_parse(j->name, text, n, &d);
    free(text);
    if (!out) ptx_ice("the PTX tidal-opt writes does not parse (%u:%u: %s)", d.line, d.col, d.msg);
    return out;
}

/* After the passes: the reports, then statistics and the CFG of the result. */
static int ptx_show(job *j)
{
    const cli *o = j->o;
    print_reports(j);
    if (o->phase_dumps && !j->nreports)
        fputs("tidal-opt: -d: the tidal pass did not run, so it has no phases to dump (add -p tidal)\n", stderr);
    if (!o->stats && !o->dump_cfg) return 0;
    /* A function without a CFG is one the passes left as it was: then the input is
     * shown, as without passes, so that the error names its line in the input */
    ptx_module *r = j->m->modified && !verify_ptx(j) ? as_written(j) : j->m;
    ptx_diag d;
    ptx_diag_init(&d, j->name);
    int rc = 0;
    if (o->stats && ptx_stats_print(r, stdout, &d)) rc = 1;
    for (uint32_t i = 0; !rc && o->dump_cfg && i < ptx_func_count(r); i++) {
        ptx_func *f = ptx_func_at(r, i);
        if (!f->has_body) continue;
        ptx_cfg *c = ptx_cfg_build(f, &d);
        if (!c) {
            rc = 1;
            break;
        }
        ptx_cfg_dump(c, stdout);
        ptx_cfg_free(c);
    }
    if (r != j->m) ptx_module_free(r);
    if (rc) ptx_diag_print(&d, stderr);
    return rc;
}

static int write_cubin(job *j)
{
    const cli *o = j->o;
    size_t plen;
    char *text = ptx_print_to_string(j->m, &plen);
    const char *arch = o->cubin_arch ? o->cubin_arch : j->m->target;
    if (!text) ptx_ice("cannot print the module");
    if (!arch[0]) {
        free(text);
        return usage_error("--cubin: the module has no .target; give --cubin=ARCH%s", "");
    }
    void *bin = NULL;
    size_t blen = 0;
    char backend[256], err[4096];
    int crc = tidal_ptx_to_cubin(text, plen, arch, &bin, &blen, backend, sizeof backend, err, sizeof err);
    free(text);
    if (crc) {
        fprintf(stderr, "tidal-opt: cannot compile '%s' for %s: %s\n", j->name, arch, err);
        return 1;
    }
    fprintf(stderr, "tidal-opt: cubin for %s by %s\n", arch, backend);
    FILE *f = strcmp(o->out, "-") ? fopen(o->out, "wb") : stdout;
    int werr = !f || fwrite(bin, 1, blen, f) != blen;
    if (f && (f != stdout ? fclose(f) : fflush(f))) werr = 1;
    free(bin);
    if (werr) {
        fprintf(stderr, "tidal-opt: cannot write '%s': %s\n", o->out, strerror(errno));
        return 1;
    }
    return 0;
}

static int ptx_write(job *j)
{
    const char *out = j->o->out;
    if (!out) return 0;
    if (j->o->cubin) return write_cubin(j);
    FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "tidal-opt: cannot write '%s': %s\n", out, strerror(errno));
        return 1;
    }
    int werr = ptx_print(j->m, f);
    if (f != stdout ? fclose(f) : fflush(f)) werr = -1;
    if (werr) {
        fprintf(stderr, "tidal-opt: error writing '%s': %s\n", out, strerror(errno));
        if (f != stdout) remove(out);
        return 1;
    }
    return 0;
}

#ifdef TIDAL_HAVE_LLVM
static int ir_read(job *j)
{
    j->lm = tidal_llvm_parse(j->name, j->src, j->len, &j->d);
    free(j->src);
    j->src = NULL;
    return j->lm ? 0 : print_error(j);
}

/* --emit=ptx: NVPTX's PTX replaces the IR, and the PTX stages take it from here. */
static int ir_lower(job *j)
{
    size_t n;
    char *text = tidal_llvm_to_ptx(j->lm, j->o->arch, &n, &j->d);
    tidal_llvm_free(j->lm);
    j->lm = NULL;
    if (!text) return print_error(j);
    j->src = text;
    j->len = n;
    j->lowered = true;
    return 0;
}

static int ir_passes(job *j)
{
    for (size_t i = 0; i < j->o->npipe; i++)
        if (j->o->pipeline[i]->ir(j)) return print_error(j);
    return 0;
}

static int ir_show(job *j)
{
    print_reports(j);
    if (j->o->stats) tidal_llvm_stats(j->lm, stdout);
    return 0;
}

static int ir_write(job *j)
{
    const char *out = j->o->out;
    if (out && tidal_llvm_write(j->lm, out, j->o->emit && !strcmp(j->o->emit, "bc"))) {
        fprintf(stderr, "tidal-opt: cannot write '%s': %s\n", out, strerror(errno));
        return 1;
    }
    return 0;
}
#endif

/* ------------------------------------------------------------ routes */

enum input_kind { INPUT_PTX, INPUT_IR };

/* LLVM IR: by name (.ll, .bc) or by bitcode magic ('BC' 0xC0DE, or the 0x0B17C0DE
 * wrapper). */
static bool is_llvm_ir(const char *path, const char *src, size_t len)
{
    const unsigned char *u = (const unsigned char *)src;
    if (strlen(path) > 3 && (tidal_ends_with(path, ".ll") || tidal_ends_with(path, ".bc"))) return true;
    return len >= 4 && ((u[0] == 'B' && u[1] == 'C' && u[2] == 0xC0 && u[3] == 0xDE) ||
                        (u[0] == 0xDE && u[1] == 0xC0 && u[2] == 0x17 && u[3] == 0x0B));
}

/* The first kind whose test takes the input (NULL: any). */
static const struct input_kind_rule {
    enum input_kind kind;
    bool (*takes)(const char *path, const char *src, size_t len);
} input_kinds[] = {
    {INPUT_IR, is_llvm_ir},
    {INPUT_PTX, NULL},
};

/* Options a route may not honour, in the order a usage error names them. */
enum { OPT_ARCH = 1, OPT_EMIT_IR = 2, OPT_DUMP = 4, OPT_CUBIN = 8 };
static const struct {
    unsigned bit;
    const char *spelling;
} route_options[] = {{OPT_ARCH, "--arch"}, {OPT_EMIT_IR, "--emit=llvm|bc"}, {OPT_DUMP, "-d"}, {OPT_CUBIN, "--cubin"}};

enum emit { EMIT_ANY, EMIT_PTX, EMIT_IR };

static const struct route {
    enum input_kind kind;
    enum emit emit;
    unsigned rejects;       /* OPT_*: usage errors on this route */
    const char *reject_fmt; /* ... reported so (%s: the option) */
    stage_fn stages[8];     /* in order, up to the first NULL */
} routes[] = {
    {INPUT_PTX,
     EMIT_ANY,
     OPT_ARCH | OPT_EMIT_IR,
     "%s applies to LLVM IR input (.ll, .bc) only",
     {ptx_read, ptx_passes, ptx_show, ptx_write}},
#ifdef TIDAL_HAVE_LLVM
    {INPUT_IR, EMIT_PTX, 0, NULL, {ir_read, ir_lower, ptx_read, ptx_passes, ptx_show, ptx_write}},
    {INPUT_IR,
     EMIT_IR,
     OPT_DUMP | OPT_CUBIN,
     "%s on LLVM IR input needs --emit=ptx",
     {ir_read, ir_passes, ir_show, ir_write}},
#endif
};

static int run_route(job *j)
{
    const cli *o = j->o;
    enum input_kind kind = INPUT_PTX;
    for (size_t i = 0; i < sizeof input_kinds / sizeof input_kinds[0]; i++)
        if (!input_kinds[i].takes || input_kinds[i].takes(o->in, j->src, j->len)) {
            kind = input_kinds[i].kind;
            break;
        }
    /* IR input stays IR unless --emit=ptx; --emit=llvm|bc on PTX input is refused */
    enum emit emit = o->emit && !strcmp(o->emit, "ptx") ? EMIT_PTX : EMIT_IR;
    const struct route *r = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !r; i++)
        if (routes[i].kind == kind && (routes[i].emit == EMIT_ANY || routes[i].emit == emit)) r = &routes[i];
    if (!r) { /* only IR input has no route: a tidal-opt without LLVM */
        fprintf(stderr, "%s: error: LLVM IR input needs a tidal-opt built with LLVM 22 (llvm-22-dev)\n", j->name);
        return 1;
    }
    unsigned given = (o->arch ? OPT_ARCH : 0) | (o->emit && emit == EMIT_IR ? OPT_EMIT_IR : 0) |
                     (o->dump_cfg || o->phase_dumps ? OPT_DUMP : 0) | (o->cubin ? OPT_CUBIN : 0);
    for (size_t i = 0; i < sizeof route_options / sizeof route_options[0]; i++)
        if (given & r->rejects & route_options[i].bit) return usage_error(r->reject_fmt, route_options[i].spelling);
    for (size_t i = 0; i < sizeof r->stages / sizeof r->stages[0] && r->stages[i]; i++) {
        int rc = r->stages[i](j);
        if (rc) return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ command line */

static const char usage_text[] =
    "usage: tidal-opt [options] INPUT.ptx|INPUT.ll|INPUT.bc\n"
    "\n"
    "Reads PTX (INPUT, or standard input for '-'), runs the passes named with -p\n"
    "in order, and writes the result. Without passes the output is byte-for-byte\n"
    "the input; a pass that changes a function re-emits only what it changed.\n"
    "LLVM IR (NVVM: .ll text, .bc bitcode, recognised by name or bitcode magic) is\n"
    "read with LLVM 22 when tidal-opt is built with it; see --emit.\n"
    "\n"
    "options:\n"
    "  -o FILE          write the PTX to FILE ('-' for standard output). Without -o the\n"
    "                   PTX goes to standard output unless --stats or -d is given.\n"
    "  -p PASS[,PASS]   run passes in order (see PASSES); may be repeated\n"
    "  -d WHAT[,WHAT]   dump to standard output (may be repeated):\n"
    "                     cfg    after the passes: basic blocks, predecessors and\n"
    "                            successors per function of the result\n"
    "                     a phase of the tidal pass (PHASES: its name or its letter):\n"
    "                            the state after that phase, each time it runs\n"
    "  --report[=FMT]   after the passes, list every kernel the tidal pass saw: rewritten\n"
    "                   or refused with the reason (REFUSALS), and registers added. FMT\n"
    "                   is text (default) or json. Goes to standard error when the PTX\n"
    "                   goes to standard output (no -o, or -o -), else to standard\n"
    "                   output: standard output never mixes PTX and report.\n"
    "  --case-b         the tidal pass also puts the case-b check into each original entry,\n"
    "                   so launches that bypass libtidal obey the module's attached\n"
    "                   partition (tidal.triton without the preload); it costs every\n"
    "                   launch of the original a constant load (~0.2 us on the H200).\n"
    "                   Default: original entries stay byte-identical (libtidal runs the\n"
    "                   clone where a launch must obey a mask). Not for --emit=llvm|bc:\n"
    "                   the IR-level rewrite always has case b.\n"
    "  --assume-balanced-arrive\n"
    "                   rewrite kernels that use bar.arrive/barrier.arrive (refused by\n"
    "                   default, reason named-arrive): you assert that no thread block\n"
    "                   ends with a named barrier's phase half arrived, which under\n"
    "                   tidal would complete the next logical block's wait early.\n"
    "                   Both levels (PTX and --emit=llvm|bc). tidal-ptxas: --tidal-\n"
    "                   assume-balanced-arrive or TIDAL_ASSUME_BALANCED_ARRIVE=1.\n"
    "  --cubin[=ARCH]   write a cubin for ARCH (default: the module's .target, e.g.\n"
    "                   sm_90a) instead of PTX to the -o file, compiled by the first of:\n"
    "                   libnvptxcompiler in process (when this build linked it: see\n"
    "                   --version), nvJitLink in process (when libnvJitLink can be\n"
    "                   loaded), the ptxas executable ($TIDAL_REAL_PTXAS, $CUDA_HOME/bin,\n"
    "                   /usr/local/cuda). Standard error says which.\n"
    "                   TIDAL_CUBIN_BACKEND=nvptxcompiler|nvjitlink|ptxas forces one.\n"
    "  --emit=KIND      for LLVM IR input: ptx lowers the module with the NVPTX target\n"
    "                   (--arch) and then works on that PTX exactly as on a .ptx input;\n"
    "                   llvm (default; text) or bc (bitcode) keeps it IR, and -p tidal\n"
    "                   then rewrites kernels at IR level (the kernels the PTX pass\n"
    "                   accepts on the lowered module; --report says why others stay)\n"
    "  --arch=SM        GPU for the NVPTX lowering of LLVM IR (default: the kernels'\n"
    "                   \"target-cpu\", else sm_90a), e.g. sm_90, sm_90a\n"
    "  --l2addr KERNEL:PARAM[,KERNEL:PARAM]\n"
    "                   the pointer parameters the l2addr pass translates (needs\n"
    "                   -p l2addr): PARAM is the .param's name or its index (0 first);\n"
    "                   may be repeated. A kernel or parameter the module lacks is an\n"
    "                   error (exit 1)\n"
    "  --stats          after the passes, per function of the result: instructions,\n"
    "                   basic blocks, barriers, calls and special-register reads\n"
    "                   (%ctaid, %smid, ...)\n"
    "  --help           show this help\n"
    "  --version        show the version\n"
    "\n"
    "PASSES:\n";

static void usage(FILE *out)
{
    fputs(usage_text, out);
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        fprintf(out, "  %-16s %s\n", passes[i].name, passes[i].help);
    fputs("\nPHASES:\n", out);
    for (unsigned k = 0; k < TIDAL_NPHASES; k++)
        fprintf(out, "  %c %-14s %s\n", tidal_phases[k].letter, tidal_phases[k].name, tidal_phases[k].help);
    fputs("\nREFUSALS:\n", out);
    for (unsigned r = 1; r < TIDAL_NREASONS; r++)
        fprintf(out, "  %-20s %s%s\n", tidal_refusals[r].name, tidal_refusals[r].ir_only ? "IR only: " : "",
                tidal_refusals[r].why);
    fputs("\nL2ADDR REFUSALS (-p l2addr):\n", out);
    for (unsigned r = 1; r < L2A_NREASONS; r++)
        fprintf(out, "  %-20s %s\n", tidal_l2addr_refusals[r].name, tidal_l2addr_refusals[r].why);
    fputs("\nexit status: 0 success, 1 malformed input (reported as file:line:col: error: ...),\n"
          "2 usage error, 70 internal error.\n",
          out);
}

/* A -d item: "cfg", or a phase of the tidal pass by name or letter. */
static int add_dump(cli *o, const char *what)
{
    if (!strcmp(what, "cfg")) {
        o->dump_cfg = true;
        return 0;
    }
    for (unsigned k = 0; k < TIDAL_NPHASES; k++)
        if (!strcmp(what, tidal_phases[k].name) || (what[0] == tidal_phases[k].letter && !what[1])) {
            o->phase_dumps |= 1u << k;
            return 0;
        }
    return usage_error("unknown dump '%s' (known: cfg, facts or f, convergence or c, plan or p, rewrite or r, "
                       "clone or k)",
                       what);
}

static int add_pass(cli *o, const char *name)
{
    const struct pass *p = NULL;
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++)
        if (!strcmp(passes[k].name, name)) p = &passes[k];
    if (!p) return usage_error("unknown pass '%s'", name);
    if (o->npipe == MAX_PASSES) return usage_error("too many passes%s", "");
    if (!strcmp(name, "l2addr")) o->l2addr_pass = true;
    o->pipeline[o->npipe++] = p;
    return 0;
}

/* --l2addr KERNEL:PARAM[,KERNEL:PARAM...] */
static int add_l2addr(cli *o, const char *v)
{
    char *list = strdup(v), *save = NULL;
    if (!list) ptx_ice("out of memory");
    int rc = 0;
    for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon || colon == tok || !colon[1]) {
            rc = usage_error("--l2addr: '%s' is not KERNEL:PARAM", tok);
            break;
        }
        tidal_l2addr_item *n = realloc(o->l2addr, (o->nl2addr + 1) * sizeof *n);
        if (!n) ptx_ice("out of memory");
        o->l2addr = n;
        *colon = 0;
        n[o->nl2addr++] = (tidal_l2addr_item){.kernel = strdup(tok), .param = strdup(colon + 1)};
        if (!n[o->nl2addr - 1].kernel || !n[o->nl2addr - 1].param) ptx_ice("out of memory");
    }
    free(list);
    return rc;
}

/* Reads argv into *o. -1: go on; else the exit status (--help, --version, usage errors). */
static int parse_args(int argc, char **argv, cli *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            puts("tidal-opt (tidal) " TIDAL_VERSION);
            puts("PTX ISA up to 9.0");
            printf("cubin backends: %snvJitLink (loaded at run time), ptxas (executable)\n",
                   tidal_cubin_have_nvptxcompiler() ? "libnvptxcompiler (linked in), " : "");
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "-p") || !strcmp(a, "-d")) {
            if (i + 1 >= argc) return usage_error("option '%s' needs an argument", a);
            const char *v = argv[++i];
            if (a[1] == 'o') {
                o->out = v;
                continue;
            }
            char *list = strdup(v), *save = NULL;
            if (!list) ptx_ice("out of memory");
            int rc = 0;
            for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
                rc = a[1] == 'd' ? add_dump(o, tok) : add_pass(o, tok);
            free(list);
            if (rc) return rc;
        } else if (!strcmp(a, "--report") || !strcmp(a, "--report=text")) {
            o->report = 1;
        } else if (!strcmp(a, "--case-b")) {
            o->tidal.case_b = true;
        } else if (!strcmp(a, "--assume-balanced-arrive")) {
            o->tidal.assume_balanced_arrive = true;
        } else if (!strcmp(a, "--report=json")) {
            o->report = 2;
        } else if (!strncmp(a, "--report=", 9)) {
            return usage_error("unknown report format '%s' (text or json)", a + 9);
        } else if (!strcmp(a, "--cubin") || !strncmp(a, "--cubin=", 8)) {
            o->cubin = true;
            o->cubin_arch = a[7] == '=' ? a + 8 : NULL;
        } else if (!strncmp(a, "--emit=", 7)) {
            o->emit = a + 7;
            if (strcmp(o->emit, "ptx") && strcmp(o->emit, "llvm") && strcmp(o->emit, "bc"))
                return usage_error("unknown output kind '%s' (ptx, llvm or bc)", o->emit);
        } else if (!strcmp(a, "--arch") || !strncmp(a, "--arch=", 7)) {
            if (a[6] == '=')
                o->arch = a + 7;
            else if (i + 1 >= argc)
                return usage_error("option '%s' needs an argument", a);
            else
                o->arch = argv[++i];
        } else if (!strcmp(a, "--l2addr") || !strncmp(a, "--l2addr=", 9)) {
            const char *v = a[8] == '=' ? a + 9 : NULL;
            if (!v && i + 1 >= argc) return usage_error("option '%s' needs an argument", a);
            if (!v) v = argv[++i];
            int rc = add_l2addr(o, v);
            if (rc) return rc;
        } else if (!strcmp(a, "--stats")) {
            o->stats = true;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (o->in) {
            return usage_error("more than one input file ('%s')", a);
        } else {
            o->in = a;
        }
    }
    if (!o->in) return usage_error("no input file%s", "");
    if (o->l2addr_pass && !o->nl2addr) return usage_error("-p l2addr needs --l2addr KERNEL:PARAM%s", "");
    if (o->nl2addr && !o->l2addr_pass) return usage_error("--l2addr needs -p l2addr%s", "");
    if (o->cubin && !o->out) return usage_error("--cubin needs -o FILE%s", "");
    /* The output goes to standard output unless -o names a file or only reports were
     * asked for (--stats, -d); --report then goes to standard error. */
    if (!o->out && !o->stats && !o->dump_cfg && !o->phase_dumps) o->out = "-";
    return -1;
}

/* LLVM's fatal errors as tidal-opt has always reported them (exit 1: LLVM cannot go on,
 * and its state is not to be trusted in exit handlers); internal errors as every
 * driver does (util.h). */
static void on_fatal(ptx_fatal_kind kind, const char *msg)
{
    if (kind == PTX_FATAL_LLVM) {
        fprintf(stderr, "tidal-opt: error: LLVM: %s\n", msg);
        fflush(stderr);
        _exit(1);
    }
    tidal_driver_fatal(kind, msg);
}

int main(int argc, char **argv)
{
    ptx_set_fatal_handler(on_fatal);
    static cli o = {.tidal = TIDAL_OPTIONS_DEFAULT};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    static job j;
    j.o = &o;
    j.src = ptx_read_file(o.in, &j.len);
    if (!j.src) {
        fprintf(stderr, "tidal-opt: cannot read '%s': %s\n", o.in, strerror(errno));
        return 1;
    }
    j.name = strcmp(o.in, "-") ? o.in : "<stdin>";
    ptx_diag_init(&j.d, j.name);
    rc = run_route(&j);
    free(j.src);
    ptx_module_free(j.m);
    for (unsigned i = 0; i < j.nl2reports; i++) free(j.l2reports[i].items);
    for (unsigned i = 0; i < j.nretired; i++) ptx_module_free(j.retired[i]);
    for (unsigned i = 0; i < o.nl2addr; i++) {
        free((char *)o.l2addr[i].kernel);
        free((char *)o.l2addr[i].param);
    }
    free(o.l2addr);
#ifdef TIDAL_HAVE_LLVM
    tidal_llvm_free(j.lm);
#endif
    return rc;
}
