/* tidal-nvcc — a drop-in for nvcc 13 that applies the tidal rewrite.
 *
 * main() reads tidal-nvcc's own --tidal-* options, decides from nvcc's
 * arguments whether a host link will happen (then the runtime libraries are
 * appended), makes the private directory (nvcc_proc.c) and runs the real nvcc
 * from it. Inside that run, nvcc calls this same executable as cicc, ptxas and
 * fatbinary (nvcc_wrap.c), which is where PTX gets rewritten. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dropin.h"
#include "exec.h"
#include "nvcc_args.h"
#include "nvcc_help.h"
#include "nvcc_proc.h"
#include "nvcc_wrap.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TIDAL_VERSION
#error "TIDAL_VERSION (the CMake project version) is defined by CMakeLists.txt"
#endif

static const char *const wraps[] = {
    "-Xlinker",
    "--wrap=cudaLaunchKernel",
    "-Xlinker",
    "--wrap=cudaLaunchKernel_ptsz",
    "-Xlinker",
    "--wrap=cudaLaunchKernelExC",
    "-Xlinker",
    "--wrap=cudaLaunchKernelExC_ptsz",
    /* CUDA 13's <<<>>> stubs call these (with a cudaKernel_t), not cudaLaunchKernel */
    "-Xlinker",
    "--wrap=__cudaLaunchKernel",
    "-Xlinker",
    "--wrap=__cudaLaunchKernel_ptsz",
};

typedef struct opts {
    bool off, help, no_runtime, version;
    const char *report, *runtime;
} opts;

/* <dir of the tidal-nvcc executable>/TIDAL_BIN_TO_LIBDIR, else .../../lib when only that
 * one has the runtime: relative to the executable, so an installed tree works wherever it
 * is put (and through a symlink: self is the resolved path). */
static char *default_runtime(const char *self)
{
    char *dir = tidal_dir_name(self);
    char *lib = tidal_path_join(dir, TIDAL_BIN_TO_LIBDIR);
    if (strcmp(TIDAL_BIN_TO_LIBDIR, "../lib")) {
        char *probe = tidal_path_join(lib, "libtidal.a"), *build = tidal_path_join(dir, "../lib");
        char *bprobe = tidal_path_join(build, "libtidal.a");
        if (access(probe, R_OK) && !access(bprobe, R_OK)) {
            free(lib);
            lib = build;
            build = NULL;
        }
        free(probe);
        free(build);
        free(bprobe);
    }
    free(dir);
    return lib;
}

/* Appends the runtime to args (capacity checked by the caller); returns the
 * new count, or -1 when a library is missing (said). */
static int add_runtime(char **args, int n, const opts *o, const char *self, char **owned)
{
    char *dir = o->runtime                                                    ? strdup(o->runtime)
                : getenv("TIDAL_RUNTIME_DIR") && *getenv("TIDAL_RUNTIME_DIR") ? strdup(getenv("TIDAL_RUNTIME_DIR"))
                                                                              : default_runtime(self);
    if (!dir) abort();
    owned[0] = tidal_path_join(dir, "libtidal_cudart.a");
    owned[1] = tidal_path_join(dir, "libtidal.a");
    free(dir);
    for (int i = 0; i < 2; i++) {
        if (access(owned[i], R_OK)) {
            fprintf(stderr,
                    "tidal-nvcc: error: the tidal runtime library '%s' is missing (%s); build it "
                    "(ninja tidal tidal_cudart), point --tidal-runtime=DIR or TIDAL_RUNTIME_DIR at it, "
                    "or link without it with --tidal-no-runtime\n",
                    owned[i], strerror(errno));
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof wraps / sizeof *wraps; i++) args[n++] = (char *)wraps[i];
    args[n++] = owned[0];
    args[n++] = owned[1];
    args[n++] = "-ldl";
    args[n++] = "-lpthread";
    args[n++] = "-lm";
    return n;
}

/* Makes the report path absolute (nvcc's tools may run elsewhere) and checks
 * that it can be appended to. */
static char *report_path(const char *path)
{
    char *abs = tidal_abs_path(path);
    if (!abs) return NULL;
    if (!dropin_report_ok(abs)) {
        fprintf(stderr, "tidal-nvcc: error: cannot open the report file '%s': %s\n", path, strerror(errno));
        free(abs);
        return NULL;
    }
    return abs;
}

static int run_nvcc(const char *real, char **args, const opts *o, const char *self)
{
    char *report = NULL;
    if (o->report && !(report = report_path(o->report))) return 1;
    char *priv = nvcc_make_priv(real, self);
    if (!priv) {
        free(report);
        return 1;
    }
    char *real_bin = tidal_dir_name(real), *nvcc = tidal_path_join(priv, "bin/nvcc");
    setenv(NVCC_ENV_PRIV, priv, 1);
    setenv(NVCC_ENV_REAL_BIN, real_bin, 1);
    if (report)
        setenv(NVCC_ENV_REPORT, report, 1);
    else
        unsetenv(NVCC_ENV_REPORT);
    /* Like system(): ^C reaches nvcc (same process group); we outlive it to
     * remove the private directory. */
    args[0] = nvcc;
    int rc = tidal_run_wait(nvcc, args, TIDAL_RUN_OUTLIVE, NULL, NULL);
    if (rc == TIDAL_RUN_NO_FORK) fprintf(stderr, "tidal-nvcc: error: fork: %s\n", strerror(errno));
    if (rc < 0)
        rc = 1;
    else if (rc == 127)
        fprintf(stderr, "tidal-nvcc: error: cannot run the real nvcc '%s'\n", real);
    nvcc_remove_tree(priv);
    free(priv);
    free(nvcc);
    free(real_bin);
    free(report);
    return rc;
}

int main(int argc, char **argv)
{
    ptx_set_fatal_handler(tidal_driver_fatal);
    int rc;
    if (nvcc_wrap_main(argc, argv, &rc)) return rc;

    opts o = {0};
    /* nvcc's arguments, plus room for the runtime */
    char **args = calloc((size_t)argc + 24, sizeof *args);
    if (!args) return 1;
    int n = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--tidal-help")) {
            fputs(nvcc_help_text, stdout);
            free(args);
            return 0;
        } else if (!strcmp(a, "--tidal-version")) {
            o.version = true;
        } else if (!strcmp(a, "--tidal-off")) {
            o.off = true;
        } else if (!strcmp(a, "--tidal-case-b")) {
            setenv("TIDAL_CASE_B", "1", 1); /* read by the rewrite step inside nvcc */
        } else if (!strcmp(a, "--tidal-assume-balanced-arrive")) {
            setenv("TIDAL_ASSUME_BALANCED_ARRIVE", "1", 1);
        } else if (!strcmp(a, "--tidal-no-runtime")) {
            o.no_runtime = true;
        } else if (!strncmp(a, "--tidal-report=", 15) && a[15]) {
            o.report = a + 15;
        } else if (!strncmp(a, "--tidal-runtime=", 16) && a[16]) {
            o.runtime = a + 16;
        } else if (!strncmp(a, "--tidal-", 8)) {
            fprintf(stderr, "tidal-nvcc: error: unknown option '%s' (see --tidal-help)\n", a);
            free(args);
            return 2;
        } else {
            if (!strcmp(a, "--help") || !strcmp(a, "-help") || !strcmp(a, "-h")) o.help = true;
            args[n++] = argv[i];
        }
    }
    /* --version stays nvcc's own, byte for byte: CMake's compiler detection matches
     * "nvcc: NVIDIA (R) Cuda compiler driver" and the first "V<major>.<minor>.<patch>"
     * in it, other build systems "release N.M"; tidal's version has its own flag. */
    if (o.version) {
        printf("tidal-nvcc (tidal) %s\n", TIDAL_VERSION);
        fflush(stdout);
    }
    const char *why = NULL;
    char *real = nvcc_find_real(&why);
    if (!real) {
        fprintf(stderr, "tidal-nvcc: error: cannot find the real nvcc: %s\n", why);
        free(args);
        return 1;
    }
    /* These exec nvcc in place: there is nothing to clean up after it. */
    if (o.version) {
        printf("wraps %s, whose --version follows:\n", real);
        fflush(stdout);
        char *vargs[] = {real, "--version", NULL};
        tidal_exec(real, vargs, "tidal-nvcc: error", "the real nvcc");
        return 1;
    }
    if (o.help && !o.off) { /* with --tidal-off, nvcc's page alone */
        fputs(nvcc_help_text, stdout);
        fputs("\n---------------------------------------------------------------------------\n"
              "nvcc's own options follow (tidal-nvcc passes them through):\n",
              stdout);
        fflush(stdout);
    }
    if (o.off || o.help) {
        args[0] = real;
        tidal_exec(real, args, "tidal-nvcc: error", "the real nvcc");
        return 1;
    }
    char *self = realpath("/proc/self/exe", NULL);
    if (!self) {
        fprintf(stderr, "tidal-nvcc: error: cannot locate the tidal-nvcc executable: %s\n", strerror(errno));
        return 1;
    }
    nvcc_mode mode;
    nvcc_mode_scan(n - 1, args + 1, &mode);
    char *owned[2] = {NULL, NULL};
    rc = 0;
    if (mode.lto) {
        fprintf(stderr,
                "tidal-nvcc: error: link-time optimization ('%s') is not supported: the PTX is "
                "generated inside nvlink, where tidal cannot rewrite it; use sm_NN/compute_NN "
                "targets, or --tidal-off\n",
                mode.lto_why);
        rc = 1;
    } else if (mode.host_link && !o.no_runtime && (n = add_runtime(args, n, &o, self, owned)) < 0) {
        rc = 1;
    }
    nvcc_mode_free();
    if (!rc) {
        args[n] = NULL;
        rc = run_nvcc(real, args, &o, self);
    }
    free(owned[0]);
    free(owned[1]);
    free(self);
    free(real);
    free(args);
    return rc;
}
