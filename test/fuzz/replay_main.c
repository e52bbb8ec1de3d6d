/* A main for a libFuzzer target without libFuzzer (gcc has none): runs
 * LLVMFuzzerTestOneInput once on every file named, and on every regular file in every
 * directory named (in name order), so a plain or sanitizer build replays the seeds and the
 * saved crashes in ctest. A target's own failure aborts; this says what it was running.
 *
 *   fuzz_<target>_replay [-q] PATH...     exit 0: all ran; 1: a file could not be read;
 *                                         2: usage; the target aborts on a finding */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static unsigned g_runs;
static int g_quiet;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0, n;
    unsigned char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            unsigned char *p = realloc(buf, cap *= 2);
            if (!p) {
                free(buf);
                buf = NULL;
            } else {
                buf = p;
            }
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "fuzz replay: cannot read %s\n", path);
        return -1;
    }
    if (!g_quiet) fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    g_runs++;
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz replay: no such file or directory: %s\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    DIR *d = opendir(path);
    if (!d) return -1;
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue; /* ., .., hidden files */
        if (count == cap) {
            char **p = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            if (!p) {
                rc = -1;
                break;
            }
            names = p;
        }
        size_t n = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[count] = malloc(n))) {
            rc = -1;
            break;
        }
        snprintf(names[count++], n, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (count) qsort(names, count, sizeof *names, cmp_names);
    for (size_t i = 0; i < count; i++) {
        if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) rc = run_file(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && !strcmp(argv[1], "-q")) {
        g_quiet = 1;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: %s [-q] FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = first; i < argc; i++)
        if (run_path(argv[i]) != 0) return 1;
    printf("fuzz replay: %u inputs, no failure\n", g_runs);
    return 0;
}
