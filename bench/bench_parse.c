/* Parser throughput: parses (and re-prints) every PTX file given, repeatedly,
 * and reports MB/s of PTX. Usage: bench_parse [-n SECONDS] FILE.ptx... */
#define _POSIX_C_SOURCE 200809L
#include "ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double seconds = 3.0;
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "-n")) {
        seconds = atof(argv[2]);
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: bench_parse [-n SECONDS] FILE.ptx...\n");
        return 2;
    }
    int nf = argc - first;
    char **src = calloc(nf, sizeof *src);
    size_t *len = calloc(nf, sizeof *len), total = 0;
    for (int i = 0; i < nf; i++) {
        src[i] = ptx_read_file(argv[first + i], &len[i]);
        if (!src[i]) {
            perror(argv[first + i]);
            return 1;
        }
        total += len[i];
    }
    /* warm-up and correctness */
    for (int i = 0; i < nf; i++) {
        ptx_diag d;
        ptx_module *m = ptx_parse(argv[first + i], src[i], len[i], &d);
        if (!m) {
            ptx_diag_print(&d, stderr);
            return 1;
        }
        ptx_module_free(m);
    }
    double best_parse = 0, t0 = now();
    unsigned long rounds = 0;
    while (now() - t0 < seconds) {
        double s = now();
        for (int i = 0; i < nf; i++) {
            ptx_module *m = ptx_parse(argv[first + i], src[i], len[i], NULL);
            ptx_module_free(m);
        }
        double mbs = total / (now() - s) / 1e6;
        if (mbs > best_parse) best_parse = mbs;
        rounds++;
    }
    double avg = total * (double)rounds / (now() - t0) / 1e6;
    printf("files %d, bytes %zu, rounds %lu\n", nf, total, rounds);
    printf("parse throughput: %.1f MB/s (mean), %.1f MB/s (best round)\n", avg, best_parse);
    for (int i = 0; i < nf; i++) free(src[i]);
    free(src);
    free(len);
    return 0;
}
