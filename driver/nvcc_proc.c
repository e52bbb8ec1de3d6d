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

char *nvcc_find_real(const char **why)
{
    const char *env = getenv("TIDAL_NVCC"), *cuda = getenv("CUDA_HOME");
    const char *cand;
    char *under_cuda = NULL;
    if (env && *env) {
        cand = env;
        *why = "TIDAL_NVCC does not name an executable";
    } else if (cuda && *cuda) {
        cand = under_cuda = tidal_path_join(cuda, "bin/nvcc");
        *why = "$CUDA_HOME/bin/nvcc is not an executable (set TIDAL_NVCC)";
    } else {
        cand = "/usr/local/cuda/bin/nvcc";
        *why = "no nvcc at /usr/local/cuda/bin/nvcc (set TIDAL_NVCC or CUDA_HOME)";
    }
    /* Absolute, but not canonical: nvcc derives its include paths from the
     * directory it is run from, and -M output names them. */
    char *real = tidal_abs_path(cand);
    free(under_cuda);
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
    char *path = tidal_path_join(dir, name);
    int rc = symlink(target, path);
    if (rc) fprintf(stderr, "tidal-nvcc: error: cannot create '%s': %s\n", path, strerror(errno));
    free(path);
    return rc ? -1 : 0;
}

/* The real profile with $(_HERE_) resolved to the real bin directory, its
 * CICC_PATH renamed TIDAL_REAL_CICC_PATH (nvcc exports profile variables to
 * the tools it runs), and CICC_PATH and PATH pointing at our bin first. */
static int write_profile(const char *real_bin, const char *bin)
{
    char *in_path = tidal_path_join(real_bin, "nvcc.profile"), *out_path = tidal_path_join(bin, "nvcc.profile");
    FILE *in = NULL, *out = NULL;
    int rc = -1;
    if (!(in = fopen(in_path, "r"))) {
        fprintf(stderr, "tidal-nvcc: error: cannot read '%s': %s\n", in_path, strerror(errno));
        goto done;
    }
    if (!(out = fopen(out_path, "w"))) {
        fprintf(stderr, "tidal-nvcc: error: cannot write '%s': %s\n", out_path, strerror(errno));
        goto done;
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
    if (!had_cicc) fprintf(out, "\nTIDAL_REAL_CICC_PATH = %s/../nvvm/bin\n", real_bin);
    fprintf(out, "\n# tidal-nvcc\nCICC_PATH = %s\nPATH += %s:\n", bin, bin);
    int failed = fclose(out);
    out = NULL;
    if (failed)
        fprintf(stderr, "tidal-nvcc: error: cannot write '%s': %s\n", out_path, strerror(errno));
    else
        rc = 0;
done:
    if (in) fclose(in);
    if (out) fclose(out);
    free(in_path);
    free(out_path);
    return rc;
}

/* Links every entry of `from` into `to` under its own name, but those `skip` accepts.
 * Returns 0, -1 when a link fails (said), -2 when `from` cannot be listed (errno set). */
static int link_entries(const char *from, const char *to, bool (*skip)(const char *name))
{
    DIR *d = opendir(from);
    if (!d) return -2;
    int bad = 0;
    for (struct dirent *e; !bad && (e = readdir(d));) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || skip(n)) continue;
        char *target = tidal_path_join(from, n);
        bad = link_to(target, to, n);
        free(target);
    }
    closedir(d);
    return bad;
}

/* the CUDA root's entries but bin (ours) and hidden ones */
static bool skip_in_root(const char *n) { return !strcmp(n, "bin") || n[0] == '.'; }

/* the real bin directory's files but the ones ours replace */
static bool skip_in_bin(const char *n)
{
    return !strcmp(n, "nvcc") || !strcmp(n, "nvcc.profile") || !strcmp(n, "cicc") || !strcmp(n, "ptxas") ||
           !strcmp(n, "fatbinary");
}

char *nvcc_make_priv(const char *real_nvcc, const char *self)
{
    char priv[PATH_MAX];
    if (!tidal_make_temp_dir(priv, sizeof priv, "tidal-nvcc")) {
        fprintf(stderr, "tidal-nvcc: error: cannot create a temporary directory '%s': %s\n", priv, strerror(errno));
        return NULL;
    }
    char *real_bin = tidal_dir_name(real_nvcc), *root = tidal_path_join(real_bin, "..");
    char *bin = tidal_path_join(priv, "bin"), *done = tidal_path_join(priv, ".tidal-done"),
         *user = tidal_path_join(priv, ".tidal-user");
    int bad = mkdir(bin, 0700) || mkdir(done, 0700) || mkdir(user, 0700);
    if (bad) fprintf(stderr, "tidal-nvcc: error: cannot create directories in '%s': %s\n", priv, strerror(errno));
    static const char *const ours[] = {"cicc", "ptxas", "fatbinary"};
    for (int i = 0; !bad && i < 3; i++) bad = link_to(self, bin, ours[i]);
    if (!bad) bad = link_to(real_nvcc, bin, "nvcc") || write_profile(real_bin, bin);
    /* nvcc finds targets/<arch> (its _TARGET_DIR_) relative to its own
     * directory: mirror the real CUDA root around our bin. */
    if (!bad && (bad = link_entries(root, priv, skip_in_root)) == -2)
        fprintf(stderr,
                "tidal-nvcc: error: cannot list the CUDA root '%s' (nvcc finds targets/ and nvvm/ beside its bin "
                "directory, so the private copy must mirror it): %s\n",
                root, strerror(errno));
    if (!bad && (bad = link_entries(real_bin, bin, skip_in_bin)) == -2)
        fprintf(stderr, "tidal-nvcc: error: cannot list '%s': %s\n", real_bin, strerror(errno));
    free(real_bin);
    free(root);
    free(bin);
    free(done);
    free(user);
    if (bad) {
        nvcc_remove_tree(priv);
        return NULL;
    }
    return strdup(priv);
}
