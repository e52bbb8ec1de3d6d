/* tidal-opt — reads PTX, runs tidal passes, writes PTX.
 *
 * LLVM IR input (.ll, .bc; built with LLVM 22: TIDAL_HAVE_LLVM) goes through
 * passes/llvm/: --emit=ptx lowers it with the NVPTX target and continues here
 * as PTX; --emit=llvm|bc keeps it IR (the tidal transform at IR level).
 *
 * The pass pipeline is the table below; `-p` picks from it in order. Analyses
 * and dumps (`-d`) run after the passes. Exit status: 0 success, 1 bad input,
 * 2 usage error, 70 internal error. */
#define _POSIX_C_SOURCE 200809L
#include "ptx.h"
#include "tidal.h"
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

typedef int (*pass_fn)(ptx_module *m, ptx_diag *d);

/* Reports of the tidal pass, printed after the pipeline with --report. */
static tidal_report tidal_reports[8];
static unsigned ntidal_reports;
static tidal_options tidal_opts = TIDAL_OPTIONS_DEFAULT; /* --case-b, --assume-balanced-arrive */

static int pass_tidal(ptx_module *m, ptx_diag *d)
{
    if (ntidal_reports == sizeof tidal_reports / sizeof tidal_reports[0]) ptx_ice("tidal pass run too often");
    (void)d;
    tidal_run(m, &tidal_opts, &tidal_reports[ntidal_reports++]);
    return 0;
}

/* Builds the CFG of every function: checks that all branch targets exist. */
static int pass_verify(ptx_module *m, ptx_diag *d)
{
    for (uint32_t i = 0; i < ptx_func_count(m); i++) {
        ptx_func *f = ptx_func_at(m, i);
        if (!f->has_body) continue;
        ptx_cfg *c = ptx_cfg_build(f, d);
        if (!c) return -1;
        ptx_cfg_free(c);
    }
    return 0;
}

static const struct pass {
    const char *name;
    pass_fn run;
    const char *help;
} passes[] = {
    {"verify", pass_verify, "check control flow: every branch names a label, every brx.idx a .branchtargets list"},
    {"tidal", pass_tidal,
     "SM gate + persistent logical-block loop in every kernel it can prove safe;\n"
     "                   other kernels stay byte-identical (see --report)"},
};

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
    "  -d WHAT[,WHAT]   dump after the passes, to standard output:\n"
    "                     cfg    basic blocks, predecessors and successors per function\n"
    "  --report[=FMT]   after the passes, list every kernel the tidal pass saw: rewritten\n"
    "                   or refused with the reason, and registers added. FMT is text\n"
    "                   (default) or json. Goes to standard error when the PTX goes to\n"
    "                   standard output (no -o, or -o -), else to standard output:\n"
    "                   standard output never mixes PTX and report.\n"
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
    "  --stats          per function: instructions, basic blocks, barriers, calls and\n"
    "                   special-register reads (%ctaid, %smid, ...)\n"
    "  --help           show this help\n"
    "  --version        show the version\n"
    "\n"
    "PASSES:\n";

static void usage(FILE *out)
{
    fputs(usage_text, out);
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        fprintf(out, "  %-16s %s\n", passes[i].name, passes[i].help);
    fputs("\nexit status: 0 success, 1 malformed input (reported as file:line:col: error: ...),\n"
          "2 usage error, 70 internal error.\n",
          out);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("tidal-opt: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\ntry 'tidal-opt --help'\n", stderr);
    return 2;
}

/* LLVM IR: by name (.ll, .bc) or by bitcode magic. */
static bool llvm_input(const char *path, const char *src, size_t len)
{
    const unsigned char *u = (const unsigned char *)src;
    size_t pl = strlen(path);
    if (pl > 3 && (!strcmp(path + pl - 3, ".ll") || !strcmp(path + pl - 3, ".bc"))) return true;
    return len >= 4 && ((u[0] == 'B' && u[1] == 'C' && u[2] == 0xC0 && u[3] == 0xDE) ||
                        (u[0] == 0xDE && u[1] == 0xC0 && u[2] == 0x17 && u[3] == 0x0B));
}

/* LLVM IR input. Returns the exit status, or -1 when *src now holds PTX text
 * (--emit=ptx) for the PTX path to continue with. */
static int llvm_path(const char *name, char **src, size_t *len, const char *emit, const char *arch,
                     const struct pass *const *pipeline, size_t npipe, bool stats, bool dump_cfg, int report,
                     bool cubin, const char *out)
{
#ifndef TIDAL_HAVE_LLVM
    (void)len, (void)emit, (void)arch, (void)pipeline, (void)npipe, (void)stats, (void)dump_cfg, (void)report,
        (void)cubin, (void)out;
    free(*src);
    fprintf(stderr, "%s: error: LLVM IR input needs a tidal-opt built with LLVM 22 (llvm-22-dev)\n", name);
    return 1;
#else
    bool to_ptx = emit && !strcmp(emit, "ptx");
    if (!to_ptx && (dump_cfg || cubin)) {
        free(*src);
        return usage_error("%s on LLVM IR input needs --emit=ptx", dump_cfg ? "-d" : "--cubin");
    }
    ptx_diag d;
    ptx_diag_init(&d, name);
    tidal_llvm_module *lm = tidal_llvm_parse(name, *src, *len, &d);
    free(*src);
    *src = NULL;
    if (!lm) {
        ptx_diag_print(&d, stderr);
        return 1;
    }
    if (to_ptx) {
        size_t n;
        char *text = tidal_llvm_to_ptx(lm, arch, &n, &d);
        tidal_llvm_free(lm);
        if (!text) {
            ptx_diag_print(&d, stderr);
            return 1;
        }
        *src = text;
        *len = n;
        return -1;
    }
    int rc = 0;
    tidal_report rep;
    bool have_rep = false;
    for (size_t i = 0; i < npipe && !rc; i++) {
        if (pipeline[i]->run == pass_verify) {
            if (tidal_llvm_verify(lm, &d)) {
                ptx_diag_print(&d, stderr);
                rc = 1;
            }
        } else if (pipeline[i]->run == pass_tidal) {
            if (have_rep) {
                fprintf(stderr, "%s: error: the tidal pass runs once on LLVM IR\n", name);
                rc = 1;
            } else if (tidal_llvm_tidal(lm, arch, &tidal_opts, &rep, &d)) {
                ptx_diag_print(&d, stderr);
                rc = 1;
            } else {
                have_rep = true;
            }
        }
    }
    if (!rc && report) {
        FILE *rf = out && !strcmp(out, "-") ? stderr : stdout;
        if (have_rep) {
            if (report == 2)
                tidal_report_print_json(&rep, rf);
            else
                tidal_report_print_text(&rep, rf);
        } else {
            fputs("tidal-opt: --report: the tidal pass did not run (add -p tidal)\n", stderr);
        }
    }
    if (!rc && stats) tidal_llvm_stats(lm, stdout);
    if (!rc && out && tidal_llvm_write(lm, out, emit && !strcmp(emit, "bc"))) {
        fprintf(stderr, "tidal-opt: cannot write '%s': %s\n", out, strerror(errno));
        rc = 1;
    }
    tidal_llvm_free(lm);
    return rc;
#endif
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
    const char *in = NULL, *out = NULL;
    const struct pass *pipeline[64];
    size_t npipe = 0;
    bool stats = false, dump_cfg = false;
    int report = 0; /* 0 none, 1 text, 2 json */
    bool cubin = false;
    const char *cubin_arch = NULL;
    const char *emit = NULL, *arch = NULL; /* LLVM IR input */
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
                out = v;
                continue;
            }
            char *list = strdup(v), *save = NULL;
            if (!list) return 70;
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (a[1] == 'd') {
                    if (!strcmp(tok, "cfg"))
                        dump_cfg = true;
                    else {
                        int rc = usage_error("unknown dump '%s' (known: cfg)", tok);
                        free(list);
                        return rc;
                    }
                    continue;
                }
                const struct pass *p = NULL;
                for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++)
                    if (!strcmp(passes[k].name, tok)) p = &passes[k];
                if (!p) {
                    int rc = usage_error("unknown pass '%s'", tok);
                    free(list);
                    return rc;
                }
                if (npipe == sizeof pipeline / sizeof pipeline[0]) {
                    free(list);
                    return usage_error("too many passes%s", "");
                }
                pipeline[npipe++] = p;
            }
            free(list);
        } else if (!strcmp(a, "--report") || !strcmp(a, "--report=text")) {
            report = 1;
        } else if (!strcmp(a, "--case-b")) {
            tidal_opts.case_b = true;
        } else if (!strcmp(a, "--assume-balanced-arrive")) {
            tidal_opts.assume_balanced_arrive = true;
        } else if (!strcmp(a, "--report=json")) {
            report = 2;
        } else if (!strncmp(a, "--report=", 9)) {
            return usage_error("unknown report format '%s' (text or json)", a + 9);
        } else if (!strcmp(a, "--cubin") || !strncmp(a, "--cubin=", 8)) {
            cubin = true;
            cubin_arch = a[7] == '=' ? a + 8 : NULL;
        } else if (!strncmp(a, "--emit=", 7)) {
            emit = a + 7;
            if (strcmp(emit, "ptx") && strcmp(emit, "llvm") && strcmp(emit, "bc"))
                return usage_error("unknown output kind '%s' (ptx, llvm or bc)", emit);
        } else if (!strcmp(a, "--arch") || !strncmp(a, "--arch=", 7)) {
            if (a[6] == '=')
                arch = a + 7;
            else if (i + 1 >= argc)
                return usage_error("option '%s' needs an argument", a);
            else
                arch = argv[++i];
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (in) {
            return usage_error("more than one input file ('%s')", a);
        } else {
            in = a;
        }
    }
    if (!in) return usage_error("no input file%s", "");
    if (cubin && !out) return usage_error("--cubin needs -o FILE%s", "");
    /* The PTX goes to standard output unless -o names a file or only reports were
     * asked for (--stats, -d); --report then goes to standard error. */
    if (!out && !stats && !dump_cfg) out = "-";

    size_t len;
    char *src = ptx_read_file(in, &len);
    if (!src) {
        fprintf(stderr, "tidal-opt: cannot read '%s': %s\n", in, strerror(errno));
        return 1;
    }
    const char *name = strcmp(in, "-") ? in : "<stdin>";
    bool is_ir = llvm_input(in, src, len);
    if (!is_ir && (arch || (emit && strcmp(emit, "ptx")))) {
        free(src);
        return usage_error("%s applies to LLVM IR input (.ll, .bc) only", arch ? "--arch" : "--emit=llvm|bc");
    }
    if (is_ir) {
        int irc = llvm_path(name, &src, &len, emit, arch, pipeline, npipe, stats, dump_cfg, report, cubin, out);
        if (irc >= 0) return irc; /* done; -1: src is now PTX, continue below */
    }
    ptx_diag d;
    ptx_module *m = ptx_parse(name, src, len, &d);
    free(src);
    if (!m) {
        ptx_diag_print(&d, stderr);
        return 1;
    }
    if (m->ntoks == 0) { /* no token: nothing but whitespace and comments */
        fprintf(stderr,
                "%s:1:1: error: no PTX in the input (it is empty or holds only whitespace and comments); "
                "a PTX module starts with .version\n",
                name);
        ptx_module_free(m);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < npipe && !rc; i++)
        if (pipeline[i]->run(m, &d)) rc = 1;
    /* LLVM IR lowered to PTX (--emit=ptx): the report names the .ll/.bc, but its line
     * numbers are of the lowered PTX */
    for (unsigned i = 0; is_ir && i < ntidal_reports; i++)
        tidal_reports[i].note = "lowered to PTX by NVPTX; line numbers are of that PTX, which tidal-opt "
                                "--emit=ptx without -p prints";
    if (!rc && report) {
        FILE *rf = out && !strcmp(out, "-") ? stderr : stdout;
        for (unsigned i = 0; i < ntidal_reports; i++) {
            if (report == 2)
                tidal_report_print_json(&tidal_reports[i], rf);
            else
                tidal_report_print_text(&tidal_reports[i], rf);
        }
        if (!ntidal_reports) fputs("tidal-opt: --report: the tidal pass did not run (add -p tidal)\n", stderr);
    }
    if (!rc && stats && ptx_stats_print(m, stdout, &d)) rc = 1;
    if (!rc && dump_cfg) {
        for (uint32_t i = 0; i < ptx_func_count(m) && !rc; i++) {
            ptx_func *f = ptx_func_at(m, i);
            if (!f->has_body) continue;
            ptx_cfg *c = ptx_cfg_build(f, &d);
            if (!c) {
                rc = 1;
                break;
            }
            ptx_cfg_dump(c, stdout);
            ptx_cfg_free(c);
        }
    }
    if (rc) {
        ptx_diag_print(&d, stderr);
        ptx_module_free(m);
        return 1;
    }
    if (out && cubin) {
        size_t plen;
        char *text = ptx_print_to_string(m, &plen);
        const char *arch = cubin_arch ? cubin_arch : m->target;
        if (!text) ptx_ice("cannot print the module");
        if (!arch[0]) {
            free(text);
            ptx_module_free(m);
            return usage_error("--cubin: the module has no .target; give --cubin=ARCH%s", "");
        }
        void *bin = NULL;
        size_t blen = 0;
        char backend[256], err[4096];
        int crc = tidal_ptx_to_cubin(text, plen, arch, &bin, &blen, backend, sizeof backend, err, sizeof err);
        free(text);
        if (crc) {
            fprintf(stderr, "tidal-opt: cannot compile '%s' for %s: %s\n", name, arch, err);
            ptx_module_free(m);
            return 1;
        }
        fprintf(stderr, "tidal-opt: cubin for %s by %s\n", arch, backend);
        FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
        int werr = !f || fwrite(bin, 1, blen, f) != blen;
        if (f && (f != stdout ? fclose(f) : fflush(f))) werr = 1;
        free(bin);
        ptx_module_free(m);
        if (werr) {
            fprintf(stderr, "tidal-opt: cannot write '%s': %s\n", out, strerror(errno));
            return 1;
        }
        return 0;
    }
    if (out) {
        FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
        if (!f) {
            fprintf(stderr, "tidal-opt: cannot write '%s': %s\n", out, strerror(errno));
            ptx_module_free(m);
            return 1;
        }
        int werr = ptx_print(m, f);
        if (f != stdout ? fclose(f) : fflush(f)) werr = -1;
        if (werr) {
            fprintf(stderr, "tidal-opt: error writing '%s': %s\n", out, strerror(errno));
            if (f != stdout) remove(out);
            ptx_module_free(m);
            return 1;
        }
    }
    ptx_module_free(m);
    return 0;
}
