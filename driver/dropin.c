/* dropin.c — the rewrite step tidal-ptxas and tidal-nvcc share (see dropin.h). */
#define _POSIX_C_SOURCE 200809L
#include "dropin.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool dropin_ptx_input(const char *prev, const char *arg)
{
    bool after_o = prev && (!strcmp(prev, "-o") || !strcmp(prev, "--output-file"));
    return arg[0] != '-' && !after_o && tidal_ends_with(arg, ".ptx");
}

static int open_report(const char *path) { return open(path, O_WRONLY | O_APPEND | O_CREAT, 0666); }

bool dropin_report_ok(const char *path)
{
    int fd = open_report(path);
    if (fd < 0) return false;
    close(fd);
    return true;
}

static void append_report(const char *tool, const char *path, const tidal_report *rep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return;
    tidal_report_print_text(rep, mem);
    fclose(mem);
    int fd = open_report(path);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        fprintf(stderr, "%s: warning: cannot append to the report '%s': %s\n", tool, path, strerror(errno));
    if (fd >= 0) close(fd);
    free(text);
}

ptx_module *dropin_rewrite(const dropin_rewrite_job *job, int *why)
{
    tidal_report rep;
    ptx_diag d;
    int lib_why;
    ptx_module *m = tidal_rewrite_file(job->in, job->shown, job->opt, &rep, &d, &lib_why);
    if (!m && lib_why < 0) {
        *why = DROPIN_UNREADABLE;
        return NULL;
    }
    if (!m) {
        fprintf(stderr, "%s: warning: ", job->tool);
        ptx_diag_print(&d, stderr);
        fprintf(stderr, "%s: warning: '%s' is %s without the tidal rewrite\n", job->tool, job->shown, job->fallback);
        *why = DROPIN_UNPARSED;
        return NULL;
    }
    if (job->report) {
        if (job->report_file) rep.file = job->report_file;
        rep.note = job->report_note;
        append_report(job->tool, job->report, &rep);
    }
    return m;
}

int dropin_write(const ptx_module *m, const char *out, const char *like)
{
    /* named after the directory, not `out`: as long a name as out's still fits */
    char *dir = tidal_dir_name(out), *tmp = tidal_path_join(dir, ".tidal-XXXXXX");
    free(dir);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    int bad = !f || ptx_print(m, f);
    if (f && fclose(f))
        bad = 1;
    else if (!f && fd >= 0)
        close(fd);
    if (!bad) {
        /* keep the permissions the file had (mkstemp makes it 0600) */
        struct stat st;
        mode_t mode = stat(like, &st) == 0 ? (st.st_mode & 07777) : 0644;
        if (chmod(tmp, mode) || rename(tmp, out)) bad = 1;
    }
    if (bad) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
    }
    free(tmp);
    return bad ? -1 : 0;
}
