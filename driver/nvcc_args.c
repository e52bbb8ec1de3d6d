/* nvcc_args.c — classifying an nvcc command line (see nvcc_args.h).
 *
 * nvcc options are written `-name`, `--long-name`, `-name=value`,
 * `-name value`; -I/-L/-l/-D/-U/-O also take an attached value. The table
 * below lists every option of `nvcc --help` (CUDA 13.0) that takes a separate
 * value, so that value is not taken for an input file. */
#include "nvcc_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const value_opts[] = {
    "output-file",
    "o",
    "pre-include",
    "include",
    "library",
    "l",
    "define-macro",
    "D",
    "undefine-macro",
    "U",
    "include-path",
    "I",
    "system-include",
    "isystem",
    "library-path",
    "L",
    "output-directory",
    "odir",
    "compiler-bindir",
    "ccbin",
    "archiver-binary",
    "arbin",
    "libdevice-directory",
    "ldir",
    "target-directory",
    "target-dir",
    "optimization-info",
    "opt-info",
    "optimize",
    "O",
    "Ofast-compile",
    "Ofc",
    "dopt",
    "ftemplate-backtrace-limit",
    "ftemplate-depth",
    "compiler-options",
    "Xcompiler",
    "linker-options",
    "Xlinker",
    "archive-options",
    "Xarchive",
    "ptxas-options",
    "Xptxas",
    "nvlink-options",
    "Xnvlink",
    "Xfatbin",
    "threads",
    "t",
    "split-compile",
    "split-compile-extended",
    "fdevice-time-trace",
    "keep-dir",
    "time",
    "run-args",
    "input-drive-prefix",
    "idp",
    "dependency-drive-prefix",
    "ddp",
    "drive-prefix",
    "dp",
    "dependency-target-name",
    "MT",
    "dependency-output",
    "MF",
    "gpu-architecture",
    "arch",
    "gpu-code",
    "code",
    "generate-code",
    "gencode",
    "maxrregcount",
    "Werror",
    "diag-error",
    "diag-suppress",
    "diag-warn",
    "jump-table-density",
    "jtd",
    "frandom-seed",
    "sanitize",
    "options-file",
    "optf",
    "entries",
    "cudart",
    "cudadevrt",
    "x",
    "std",
    "machine",
    "m",
    "static-global-template-stub",
    "device-entity-has-hidden-visibility",
    "relocatable-device-code",
    "rdc",
    "ftz",
    "prec-div",
    "prec-sqrt",
    "fmad",
    "default-stream",
    "host-linker-script",
    "hls",
    "brief-diagnostics",
    "brief-diag",
    "device-stack-protector",
    "compress-mode",
    NULL,
};

/* Options after which nvcc stops before the host link. */
static const char *const stop_opts[] = {
    "compile",
    "c",
    "device-c",
    "dc",
    "device-w",
    "dw",
    "device-link",
    "dlink",
    "lib",
    "ptx",
    "cubin",
    "fatbin",
    "preprocess",
    "E",
    "generate-dependencies",
    "M",
    "generate-nonsystem-dependencies",
    "MM",
    "cuda",
    "optix-ir",
    "ltoir",
    "fdevice-syntax-only",
    NULL,
};

/* Options that make nvcc print something and compile nothing. */
static const char *const info_opts[] = {
    "version", "V", "help", "h", "list-gpu-code", "code-ls", "list-gpu-arch", "arch-ls", "clean-targets", "clean", NULL,
};

static const char *const lto_opts[] = {"dlink-time-opt", "dlto", "lto", "gen-opt-lto", "ltoir", NULL};

static bool in(const char *const *tab, const char *name, size_t len)
{
    for (; *tab; tab++)
        if (strlen(*tab) == len && !strncmp(*tab, name, len)) return true;
    return false;
}

/* Storage for expanded --options-file contents. */
static char **store;
static size_t nstore, capstore;

static char *keep(char *s)
{
    if (nstore == capstore) {
        capstore = capstore ? 2 * capstore : 16;
        char **n = realloc(store, capstore * sizeof *n);
        if (!n) abort();
        store = n;
    }
    return store[nstore++] = s;
}

void nvcc_mode_free(void)
{
    for (size_t i = 0; i < nstore; i++) free(store[i]);
    free(store);
    store = NULL;
    nstore = capstore = 0;
}

static void scan(int argc, char **argv, nvcc_mode *m, int depth);

/* Splits an options file into words (whitespace, '...' and "..." quoting,
 * backslash escapes) and scans them. */
static void scan_file(const char *path, nvcc_mode *m, int depth)
{
    FILE *f = depth < 8 ? fopen(path, "rb") : NULL;
    if (!f) return; /* nvcc reports an unreadable options file itself */
    char *buf = NULL;
    size_t cap = 0, len = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (len + 1 >= cap) {
            cap = cap ? 2 * cap : 256;
            char *n = realloc(buf, cap);
            if (!n) abort();
            buf = n;
        }
        buf[len++] = (char)c;
    }
    fclose(f);
    if (!buf) return;
    buf[len] = 0;
    keep(buf);
    char **words = NULL;
    int nwords = 0;
    char *r = buf, *w = buf;
    while (*r) {
        while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r') r++;
        if (!*r) break;
        char *start = w;
        char quote = 0;
        while (*r && (quote || !(*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r'))) {
            if (quote && *r == quote)
                quote = 0, r++;
            else if (!quote && (*r == '"' || *r == '\''))
                quote = *r++;
            else if (*r == '\\' && r[1] && quote != '\'')
                r++, *w++ = *r++;
            else
                *w++ = *r++;
        }
        bool at_end = !*r;
        if (!at_end) r++;
        *w++ = 0;
        char **n = realloc(words, (size_t)(nwords + 1) * sizeof *n);
        if (!n) abort();
        words = n;
        words[nwords++] = start;
        if (at_end) break;
    }
    scan(nwords, words, m, depth + 1);
    free(words);
}

static void note_value(const char *name, size_t len, const char *value, nvcc_mode *m, int depth)
{
    if (!value) return;
    if (in((const char *const[]){"options-file", "optf", NULL}, name, len)) {
        /* a comma-separated list of files */
        char *copy = keep(strdup(value));
        if (!copy) abort();
        for (char *save = NULL, *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
            scan_file(p, m, depth);
    } else if (in((const char *const[]){"gpu-architecture", "arch", "gpu-code", "code", "generate-code", "gencode",
                                        NULL},
                  name, len)) {
        if (strstr(value, "lto_") && !m->lto_why) m->lto = true, m->lto_why = value;
    }
}

static void scan(int argc, char **argv, nvcc_mode *m, int depth)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !a[1]) {
            m->ninputs++;
            if (access(a, F_OK)) m->nmissing++;
            continue;
        }
        const char *name = a + 1 + (a[1] == '-');
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const char *value = eq ? eq + 1 : NULL;
        if (!eq && in(value_opts, name, len)) {
            value = i + 1 < argc ? argv[++i] : NULL;
        }
        note_value(name, len, value, m, depth);
        if (in(stop_opts, name, len)) m->stop_early = true;
        if (in(info_opts, name, len)) m->info_only = true;
        if (in(lto_opts, name, len) && !m->lto_why) m->lto = true, m->lto_why = a;
    }
}

void nvcc_mode_scan(int argc, char **argv, nvcc_mode *mode)
{
    memset(mode, 0, sizeof *mode);
    scan(argc, argv, mode, 0);
    mode->host_link = mode->ninputs > 0 && !mode->nmissing && !mode->stop_early && !mode->info_only;
}
