/* nvcc_proc.c — see nvcc_proc.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "nvcc_proc.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* buf = a/b; false (and errno ENAMETOOLONG) when it does not fit */
static bool path2(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return false;
    }
    return true;
}

char *nvcc_find_real(const char **why)
{
    char buf[PATH_MAX];
    const char *env = getenv("TIDAL_NVCC"), *cuda = getenv("CUDA_HOME");
    const char *cand;
    if (env && *env) {
        cand = env;
        *why = "TIDAL_NVCC does not name an executable";
    } else if (cuda && *cuda) {
        snprintf(buf, sizeof buf, "%s/bin/nvcc", cuda);
        cand = buf;
        *why = "$CUDA_HOME/bin/nvcc is not an executable (set TIDAL_NVCC)";
    } else {
        cand = "/usr/local/cuda/bin/nvcc";
        *why = "no nvcc at /usr/local/cuda/bin/nvcc (set TIDAL_NVCC or CUDA_HOME)";
    }
    /* Absolute, but not canonical: nvcc derives its include paths from the
     * directory it is run from, and -M output names them. */
    char *real = tidal_abs_path(cand);
    if (!real || access(real, X_OK)) {
        free(real);
        return NULL;
    }
    /* never ourselves */
    char *a = realpath(real, NULL), *b = realpath("/proc/self/exe", NULL);
    bool self = a && b && !strcmp(a, b);
    free(a);
    free(b);
    if (self) {
        *why = "the real nvcc would be tidal-nvcc itself (check TIDAL_NVCC and CUDA_HOME)";
        free(real);
        return NULL;
    }
    return real;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void nvcc_remove_tree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static int link_to(const char *target, const char *dir, const char *name)
{
    char path[PATH_MAX];
    if (path2(path, sizeof path, dir, name) && symlink(target, path) == 0) return 0;
    fprintf(stderr, "tidal-nvcc: error: cannot create '%s': %s\n", path, strerror(errno));
    return -1;
}

/* The real profile with $(_HERE_) resolved to the real bin directory, its
 * CICC_PATH renamed TIDAL_REAL_CICC_PATH (nvcc exports profile variables to
 * the tools it runs), and CICC_PATH and PATH pointing at our bin first. */
static int write_profile(const char *real_bin, const char *bin)
{
    char path[PATH_MAX];
    FILE *in = path2(path, sizeof path, real_bin, "nvcc.profile") ? fopen(path, "r") : NULL;
    if (!in) {
        fprintf(stderr, "tidal-nvcc: error: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    FILE *out = path2(path, sizeof path, bin, "nvcc.profile") ? fopen(path, "w") : NULL;
    if (!out) {
        fprintf(stderr, "tidal-nvcc: error: cannot write '%s': %s\n", path, strerror(errno));
        fclose(in);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    bool had_cicc = false;
    while (getline(&line, &cap, in) > 0) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!strncmp(p, "CICC_PATH", 9) && strchr(" \t=+", p[9])) {
            fputs("TIDAL_REAL_", out);
            had_cicc = true;
        }
        for (const char *q = line; *q; q++) {
            if (!strncmp(q, "$(_HERE_)", 9)) {
                fputs(real_bin, out);
                q += 8;
            } else {
                fputc(*q, out);
            }
        }
    }
    free(line);
    fclose(in);
    if (!had_cicc) fprintf(out, "\nTIDAL_REAL_CICC_PATH = %s/../nvvm/bin\n", real_bin);
    fprintf(out, "\n# tidal-nvcc\nCICC_PATH = %s\nPATH += %s:\n", bin, bin);
    if (fclose(out)) {
        fprintf(stderr, "tidal-nvcc: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

char *nvcc_make_priv(const char *real_nvcc, const char *self)
{
    const char *tmp = getenv("TMPDIR");
    char priv[PATH_MAX], bin[PATH_MAX], sub[PATH_MAX], real_bin[PATH_MAX];
    snprintf(priv, sizeof priv, "%s/tidal-nvcc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(priv)) {
        fprintf(stderr, "tidal-nvcc: error: cannot create a temporary directory '%s': %s\n", priv, strerror(errno));
        return NULL;
    }
    snprintf(real_bin, sizeof real_bin, "%s", real_nvcc);
    char *slash = strrchr(real_bin, '/');
    if (slash) *slash = 0;
    int bad = !path2(bin, sizeof bin, priv, "bin") || mkdir(bin, 0700);
    bad = bad || !path2(sub, sizeof sub, priv, ".tidal-done") || mkdir(sub, 0700);
    bad = bad || !path2(sub, sizeof sub, priv, ".tidal-user") || mkdir(sub, 0700);
    if (bad) fprintf(stderr, "tidal-nvcc: error: cannot create directories in '%s': %s\n", priv, strerror(errno));
    static const char *const ours[] = {"cicc", "ptxas", "fatbinary"};
    for (int i = 0; !bad && i < 3; i++) bad = link_to(self, bin, ours[i]);
    if (!bad) bad = link_to(real_nvcc, bin, "nvcc") || write_profile(real_bin, bin);
    /* nvcc finds targets/<arch> (its _TARGET_DIR_) relative to its own
     * directory: mirror the real CUDA root around our bin. */
    char root[PATH_MAX];
    if (!bad && !path2(root, sizeof root, real_bin, "..")) bad = 1;
    DIR *d = bad ? NULL : opendir(root);
    for (struct dirent *e; d && !bad && (e = readdir(d));) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "bin") || n[0] == '.') continue;
        bad = !path2(sub, sizeof sub, root, n) || link_to(sub, priv, n);
    }
    if (d) closedir(d);
    d = bad ? NULL : opendir(real_bin);
    if (!bad && !d) {
        fprintf(stderr, "tidal-nvcc: error: cannot list '%s': %s\n", real_bin, strerror(errno));
        bad = 1;
    }
    for (struct dirent *e; d && !bad && (e = readdir(d));) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "nvcc") || !strcmp(n, "nvcc.profile") ||
            !strcmp(n, "cicc") || !strcmp(n, "ptxas") || !strcmp(n, "fatbinary"))
            continue;
        bad = !path2(sub, sizeof sub, real_bin, n) || link_to(sub, bin, n);
    }
    if (d) closedir(d);
    if (bad) {
        nvcc_remove_tree(priv);
        return NULL;
    }
    return strdup(priv);
}
