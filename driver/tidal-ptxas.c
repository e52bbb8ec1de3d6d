/* tidal-ptxas — a drop-in for ptxas that applies the tidal rewrite first.
 *
 * Triton (TRITON_PTXAS_PATH) and other tools call it exactly like ptxas. It
 * finds the PTX input among the arguments, writes the rewritten PTX to a
 * temporary file, and runs the real ptxas with the same arguments, the input
 * replaced. The user's file is never modified. `--version` and calls without a
 * PTX input go straight to the real ptxas: build tools parse `ptxas --version`
 * (Triton reads "release N.M" from it), so it stays ptxas's, byte for byte;
 * `--tidal-version` prints tidal's version, then the real ptxas's. */
#define _POSIX_C_SOURCE 200809L
#include "ptx.h"
#include "tidal.h"
#include "dropin.h"
#include "exec.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TIDAL_VERSION
#error "TIDAL_VERSION (the CMake project version) is defined by CMakeLists.txt"
#endif

static const char usage_text[] =
    "usage: tidal-ptxas [--tidal-off] [--tidal-case-b] [--tidal-assume-balanced-arrive] [--tidal-report=FILE]\n"
    "                   [ptxas options] INPUT.ptx\n"
    "\n"
    "A drop-in for NVIDIA's ptxas: rewrites INPUT.ptx with the tidal pass (SM gate +\n"
    "persistent logical blocks, see tidal-opt --help) into a temporary file and runs\n"
    "the real ptxas with the same arguments on it. INPUT.ptx itself is not changed.\n"
    "Kernels the pass cannot prove safe are passed through byte-identical.\n"
    "\n"
    "tidal-ptxas's own options (removed before ptxas runs):\n"
    "  --tidal-off            run the real ptxas on the input unchanged\n"
    "  --tidal-report=FILE    append the rewrite report (text) to FILE\n"
    "  --tidal-case-b         also put the case-b check into the original entries (launches\n"
    "                         that bypass libtidal obey the module's partition; +~0.2 us per\n"
    "                         launch); TIDAL_CASE_B=1 in the environment does the same (for\n"
    "                         callers such as Triton that choose ptxas's arguments)\n"
    "  --tidal-assume-balanced-arrive\n"
    "                         also rewrite kernels with bar.arrive/barrier.arrive (refused by\n"
    "                         default: named-arrive, see tidal-opt --help);\n"
    "                         TIDAL_ASSUME_BALANCED_ARRIVE=1 does the same\n"
    "  --tidal-help           show this help (--help is ptxas's)\n"
    "  --tidal-version        show tidal's version, then the real ptxas's --version\n"
    "                         (--version is the real ptxas's alone, unchanged: tools\n"
    "                         such as Triton parse it)\n"
    "\n"
    "The real ptxas is $TIDAL_REAL_PTXAS, else $CUDA_HOME/bin/ptxas, else\n"
    "/usr/local/cuda/bin/ptxas. Calls without a .ptx input (e.g. --version) go to it\n"
    "directly. If the input cannot be parsed, tidal-ptxas says so on stderr and\n"
    "assembles the input unchanged.\n"
    "\n"
    "Use with Triton: TRITON_PTXAS_PATH=/path/to/tidal-ptxas\n"
    "exit status: that of the real ptxas; 2 for tidal-ptxas usage errors; 127 when the\n"
    "real ptxas cannot be run.\n";

/* Rewrites `in` into a copy under its own file name in a new private directory (so
 * ptxas's messages still name the user's file); returns the copy's malloc'd path, or
 * NULL when the input is to be assembled unchanged (reason already printed). */
static char *rewrite(const char *in, const char *report, const tidal_options *opt)
{
    dropin_rewrite_job job = {
        .tool = "tidal-ptxas", .in = in, .shown = in, .fallback = "assembled", .opt = opt, .report = report};
    int why;
    ptx_module *m = dropin_rewrite(&job, &why);
    if (!m) {
        if (why == DROPIN_UNREADABLE)
            fprintf(stderr, "tidal-ptxas: warning: cannot read '%s' (%s); ptxas gets it unchanged\n", in,
                    strerror(errno));
        return NULL;
    }
    char dir[4096];
    if (!tidal_make_temp_dir(dir, sizeof dir, "tidal-ptxas")) {
        fprintf(stderr, "tidal-ptxas: cannot create a temporary directory '%s': %s\n", dir, strerror(errno));
        ptx_module_free(m);
        exit(1);
    }
    char *path = tidal_path_join(dir, tidal_base_name(in));
    if (dropin_write(m, path, in)) {
        fprintf(stderr, "tidal-ptxas: cannot write a temporary file '%s': %s\n", path, strerror(errno));
        rmdir(dir);
        free(path);
        ptx_module_free(m);
        exit(1);
    }
    ptx_module_free(m);
    return path;
}

int main(int argc, char **argv)
{
    ptx_set_fatal_handler(tidal_driver_fatal);
    const char *ptxas = tidal_real_ptxas();
    bool off = false;
    const char *report_path = NULL;
    tidal_options opt = TIDAL_OPTIONS_DEFAULT;
    tidal_options_from_env(&opt);
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) return 70;
    int n = 0, input = -1;
    args[n++] = (char *)ptxas;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--tidal-help")) {
            fputs(usage_text, stdout);
            free(args);
            return 0;
        } else if (!strcmp(a, "--tidal-version")) {
            printf("tidal-ptxas (tidal) %s\nwraps %s, whose --version follows:\n", TIDAL_VERSION, ptxas);
            fflush(stdout);
            char *vargs[] = {(char *)ptxas, "--version", NULL};
            free(args);
            return tidal_run_ptxas("tidal-ptxas", vargs);
        } else if (!strcmp(a, "--tidal-off")) {
            off = true;
            continue;
        } else if (!strncmp(a, "--tidal-report=", 15)) {
            report_path = a + 15;
            continue;
        } else if (!strcmp(a, "--tidal-case-b")) {
            opt.case_b = true;
            continue;
        } else if (!strcmp(a, "--tidal-assume-balanced-arrive")) {
            opt.assume_balanced_arrive = true;
            continue;
        } else if (!strncmp(a, "--tidal-", 8)) {
            fprintf(stderr, "tidal-ptxas: unknown option '%s' (see --tidal-help)\n", a);
            free(args);
            return 2;
        }
        /* the PTX input (the last one): after the arguments kept so far */
        if (dropin_ptx_input(n > 1 ? args[n - 1] : NULL, a)) input = n;
        args[n++] = (char *)a;
    }
    args[n] = NULL;
    char *tmp = NULL;
    if (!off && input > 0) {
        if (report_path && !dropin_report_ok(report_path)) {
            fprintf(stderr, "tidal-ptxas: warning: cannot open '%s': %s\n", report_path, strerror(errno));
            report_path = NULL;
        }
        tmp = rewrite(args[input], report_path, &opt);
        if (tmp) args[input] = tmp;
    }
    /* run, not exec: the copy is removed after ptxas */
    int rc = tidal_run_ptxas("tidal-ptxas", args);
    if (tmp) {
        unlink(tmp);
        char *dir = tidal_dir_name(tmp);
        rmdir(dir);
        free(dir);
        free(tmp);
    }
    free(args);
    return rc;
}
