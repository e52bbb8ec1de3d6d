/* nvcc_wrap.c — the cicc / ptxas / fatbinary personalities of tidal-nvcc
 * (see nvcc_wrap.h). */
#include "nvcc_wrap.h"
#include "exec.h"
#include "nvcc_proc.h"
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

/* <priv>/.tidal-done/<dev>-<ino>: the file with that identity was written by cicc in
 * this run and is already rewritten. */
static char *done_path(const struct stat *st)
{
    return tidal_xasprintf("%s/.tidal-done/%llx-%llx", priv_dir(), (unsigned long long)st->st_dev,
                           (unsigned long long)st->st_ino);
}

static bool is_done(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return false;
    char *mark = done_path(&st);
    bool done = access(mark, F_OK) == 0;
    free(mark);
    return done;
}

/* Appends the report in one write(): nvcc --threads runs tools in parallel. */
static void append_report(const tidal_report *rep)
{
    const char *path = getenv(NVCC_ENV_REPORT);
    if (!path || !*path) return;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return;
    tidal_report_print_text(rep, mem);
    fclose(mem);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        fprintf(stderr, "tidal-nvcc: warning: cannot append to the report '%s': %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    free(text);
}

/* Rewrites PTX file `in` into `out` (written through a temporary file in out's
 * directory and renamed, so `out` may equal `in`). `shown` names the file in
 * messages; the report names `rep_file` (NULL: `shown`) with `rep_note` after it.
 * Returns 0 on success, 1 when the input is left as it is (reason printed: tidal
 * cannot parse it), -1 on an I/O error (printed). */
static int rewrite_file(const char *in, const char *out, const char *shown, const char *rep_file, const char *rep_note)
{
    tidal_report rep;
    ptx_diag d;
    int why;
    tidal_options opt = TIDAL_OPTIONS_DEFAULT;
    tidal_options_from_env(&opt); /* --tidal-case-b sets TIDAL_CASE_B */
    ptx_module *m = tidal_rewrite_file(in, shown, &opt, &rep, &d, &why);
    if (!m && why < 0) {
        fprintf(stderr, "tidal-nvcc: error: cannot read '%s': %s\n", shown, strerror(errno));
        return -1;
    }
    if (!m) {
        fputs("tidal-nvcc: warning: ", stderr);
        ptx_diag_print(&d, stderr);
        fprintf(stderr, "tidal-nvcc: warning: '%s' is used without the tidal rewrite\n", shown);
        return 1;
    }
    if (rep_file) rep.file = rep_file;
    rep.note = rep_note;
    append_report(&rep);
    char *tmp = tidal_xasprintf("%s.tidal-XXXXXX", out);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    int bad = !f || ptx_print(m, f);
    if (f && fclose(f))
        bad = 1;
    else if (!f && fd >= 0)
        close(fd);
    ptx_module_free(m);
    if (!bad) {
        /* keep the permissions the file had (mkstemp makes it 0600) */
        struct stat st;
        mode_t mode = stat(in, &st) == 0 ? (st.st_mode & 07777) : 0644;
        if (chmod(tmp, mode) || rename(tmp, out)) bad = 1;
    }
    if (bad) {
        fprintf(stderr, "tidal-nvcc: error: cannot write '%s': %s\n", out, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

static void mark_done(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return;
    char *mark = done_path(&st);
    int fd = open(mark, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) close(fd);
    free(mark);
}

/* The rewritten copy of a user's PTX file `in`: <priv>/.tidal-user/<dev>-<ino>/<name>,
 * made once per run and shared by every tool call that reads `in`. Returns a
 * malloc'd path, or NULL when `in` is to be used as it is. */
static char *user_copy(const char *in)
{
    struct stat st;
    if (stat(in, &st)) return NULL; /* the tool reports the missing file */
    char *dir = tidal_xasprintf("%s/.tidal-user/%llx-%llx", priv_dir(), (unsigned long long)st.st_dev,
                                (unsigned long long)st.st_ino);
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
            int fd = open(failed, O_WRONLY | O_CREAT, 0600);
            if (fd >= 0) close(fd);
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
        if (!tidal_ptxas_ptx_input(i > 1 ? argv[i - 1] : NULL, a) || is_done(a)) continue;
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
