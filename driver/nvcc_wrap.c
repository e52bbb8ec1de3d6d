/* nvcc_wrap.c — the cicc / ptxas / fatbinary personalities of tidal-nvcc
 * (see nvcc_wrap.h). */
#include "nvcc_wrap.h"
#include "dropin.h"
#include "exec.h"
#include "ptx.h"
#include "tidal.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *priv_dir(void) { return getenv(NVCC_ENV_PRIV); }

/* <priv>/<sub>/<dev>-<ino>: what this run keeps about the file with that identity (not
 * its path: the tools may name one file by different paths). */
static char *by_identity(const char *sub, const struct stat *st)
{
    return tidal_xasprintf("%s/%s/%llx-%llx", priv_dir(), sub, (unsigned long long)st->st_dev,
                           (unsigned long long)st->st_ino);
}

/* an empty file, a mark whose existence is all it says */
static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) close(fd);
}

/* <priv>/.tidal-done/<dev>-<ino>: the file with that identity was written by cicc in
 * this run and is already rewritten. */
static bool is_done(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return false;
    char *mark = by_identity(".tidal-done", &st);
    bool done = access(mark, F_OK) == 0;
    free(mark);
    return done;
}

/* Rewrites PTX file `in` into `out` (through a temporary file and rename: `out` may
 * equal `in`). `shown` names the file in messages; the report names `rep_file` (NULL:
 * `shown`) with `rep_note` after it. Returns 0 on success, 1 when the input is left as it
 * is (reason printed: tidal cannot parse it), -1 on an I/O error (printed). */
static int rewrite_file(const char *in, const char *out, const char *shown, const char *rep_file, const char *rep_note)
{
    tidal_options opt = TIDAL_OPTIONS_DEFAULT;
    tidal_options_from_env(&opt); /* --tidal-case-b sets TIDAL_CASE_B */
    const char *report = getenv(NVCC_ENV_REPORT);
    dropin_rewrite_job job = {.tool = "tidal-nvcc",
                              .in = in,
                              .shown = shown,
                              .fallback = "used",
                              .opt = &opt,
                              .report = report && *report ? report : NULL,
                              .report_file = rep_file,
                              .report_note = rep_note};
    int why;
    ptx_module *m = dropin_rewrite(&job, &why);
    if (!m && why == DROPIN_UNREADABLE) {
        fprintf(stderr, "tidal-nvcc: error: cannot read '%s': %s\n", shown, strerror(errno));
        return -1;
    }
    if (!m) return 1;
    int bad = dropin_write(m, out, in);
    ptx_module_free(m);
    if (bad) {
        fprintf(stderr, "tidal-nvcc: error: cannot write '%s': %s\n", out, strerror(errno));
        return -1;
    }
    return 0;
}

static void mark_done(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return;
    char *mark = by_identity(".tidal-done", &st);
    touch(mark);
    free(mark);
}

/* The rewritten copy of a user's PTX file `in`: <priv>/.tidal-user/<dev>-<ino>/<name>,
 * made once per run and shared by every tool call that reads `in`. Returns a
 * malloc'd path, or NULL when `in` is to be used as it is. */
static char *user_copy(const char *in)
{
    struct stat st;
    if (stat(in, &st)) return NULL; /* the tool reports the missing file */
    char *dir = by_identity(".tidal-user", &st);
    char *copy = tidal_path_join(dir, tidal_base_name(in)), *failed = tidal_xasprintf("%s/.unchanged", dir);
    char *result = NULL;
    if (access(copy, F_OK) == 0) {
        result = copy;
    } else if (access(failed, F_OK) == 0) {
        /* tidal could not parse it earlier in this run: warned once already */
    } else if (mkdir(dir, 0700) && errno != EEXIST) {
        fprintf(stderr, "tidal-nvcc: error: cannot create '%s': %s\n", dir, strerror(errno));
        exit(1);
    } else {
        int r = rewrite_file(in, copy, in, NULL, NULL);
        if (r < 0) exit(1);
        if (r == 0) {
            result = copy;
        } else {
            touch(failed);
        }
    }
    if (result != copy) free(copy);
    free(failed);
    free(dir);
    return result;
}

/* The real tool beside the real nvcc, in place of this process: nvcc waits on this pid for
 * the tool's status (and its signals), and the files substituted stay until tidal-nvcc
 * removes the private directory. */
static int exec_real(const char *tool, char **argv)
{
    const char *bin = getenv(NVCC_ENV_REAL_BIN);
    char *path = tidal_xasprintf("%s/%s", bin && *bin ? bin : "/usr/local/cuda/bin", tool);
    argv[0] = path;
    int rc = tidal_exec(path, argv, "tidal-nvcc: error", NULL);
    free(path);
    return rc;
}

/* The report of cicc's PTX names the user's source, not nvcc's temporary PTX file
 * (/tmp/tmpxft_..., removed when nvcc ends): `src` as the user gave it to nvcc
 * (--orig_src_file_name), and in `note` the virtual architecture and what the line
 * numbers are of: the PTX cicc generated, which --keep leaves (rewritten) in the keep
 * directory. Both malloc'd, or NULL when cicc was not told the source. */
static void cicc_report_names(int argc, char **argv, const char *out, char **src, char **note)
{
    const char *file = NULL, *path = NULL, *arch = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--orig_src_file_name"))
            file = argv[i + 1];
        else if (!strcmp(argv[i], "--orig_src_path_name"))
            path = argv[i + 1];
        else if (!strcmp(argv[i], "-arch"))
            arch = argv[i + 1];
    }
    *src = *note = NULL;
    if (!file || !*file) file = path;
    if (!file || !*file) return;
    bool temporary = !strncmp(tidal_base_name(out), "tmpxft_", 7);
    *src = tidal_xasprintf("%s", file);
    *note = tidal_xasprintf("%s%sPTX generated by cicc%s%s; line numbers are of that PTX, before the rewrite",
                            arch ? arch : "", arch ? " " : "", temporary ? "" : ", kept rewritten as ",
                            temporary ? "" : out);
}

static int wrap_cicc(int argc, char **argv)
{
    const char *dir = getenv(NVCC_ENV_REAL_CICC), *bin = getenv(NVCC_ENV_REAL_BIN);
    char *path = dir && *dir ? tidal_xasprintf("%s/cicc", dir)
                             : tidal_xasprintf("%s/../nvvm/bin/cicc", bin && *bin ? bin : "/usr/local/cuda/bin");
    const char *out = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "-o")) out = argv[i + 1];
    char *src = NULL, *note = NULL;
    if (out) cicc_report_names(argc, argv, out, &src, &note);
    argv[0] = path;
    /* run, not exec: cicc's output is rewritten once it is written */
    int rc = tidal_run_wait(path, argv, 0, NULL, NULL);
    if (rc < 0) rc = 127;
    if (rc == 127) fprintf(stderr, "tidal-nvcc: error: cannot run the real cicc '%s'\n", path);
    argv[0] = NULL;
    free(path);
    if (rc || !out || !tidal_ends_with(out, ".ptx")) {
        free(src);
        free(note);
        return rc;
    }
    int r = rewrite_file(out, out, out, src, note);
    free(src);
    free(note);
    if (r < 0) return 1;
    mark_done(out);
    return 0;
}

static int wrap_ptxas(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!dropin_ptx_input(i > 1 ? argv[i - 1] : NULL, a) || is_done(a)) continue;
        char *copy = user_copy(a);
        if (copy) argv[i] = copy; /* freed by exec */
    }
    return exec_real("ptxas", argv);
}

static int wrap_fatbinary(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--image3=", 9) || !strstr(a, "kind=ptx")) continue;
        const char *file = strstr(a, "file=");
        if (!file || is_done(file + 5)) continue;
        char *copy = user_copy(file + 5);
        if (!copy) continue;
        char *arg = tidal_xasprintf("%.*s%s", (int)(file + 5 - a), a, copy);
        free(copy);
        argv[i] = arg;
    }
    return exec_real("fatbinary", argv);
}

int nvcc_wrap_main(int argc, char **argv, int *rc)
{
    const char *priv = priv_dir();
    if (!priv || !*priv || argc < 1) return 0;
    const char *base = tidal_base_name(argv[0]);
    if (!strcmp(base, "cicc"))
        *rc = wrap_cicc(argc, argv);
    else if (!strcmp(base, "ptxas"))
        *rc = wrap_ptxas(argc, argv);
    else if (!strcmp(base, "fatbinary"))
        *rc = wrap_fatbinary(argc, argv);
    else
        return 0;
    return 1;
}
