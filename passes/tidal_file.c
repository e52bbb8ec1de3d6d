/* tidal_file.c — read, parse and rewrite one PTX file: the step tidal-ptxas and
 * tidal-nvcc share (tidal.h, tidal_rewrite_file). */
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "tidal.h"

void tidal_options_from_env(tidal_options *opt)
{
    const char *b = getenv("TIDAL_CASE_B");
    if (b && *b && strcmp(b, "0")) opt->case_b = true;
    const char *a = getenv("TIDAL_ASSUME_BALANCED_ARRIVE");
    if (a && *a && strcmp(a, "0")) opt->assume_balanced_arrive = true;
}

ptx_module *tidal_rewrite_file(const char *path, const char *shown, const tidal_options *opt, tidal_report *rep,
                               ptx_diag *diag, int *why)
{
    size_t len;
    char *src = ptx_read_file(path, &len);
    if (!src) {
        *why = -1;
        return NULL;
    }
    ptx_module *m = ptx_parse(shown, src, len, diag);
    free(src);
    if (!m) {
        *why = 1;
        return NULL;
    }
    tidal_run(m, opt, rep);
    return m;
}
