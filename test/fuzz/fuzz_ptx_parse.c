/* libFuzzer target: the PTX front end must never crash or hang, every module
 * it accepts must print back byte-identical, and the tidal pass must handle
 * (rewrite or refuse) whatever the parser accepts. */
#include "ptx.h"
#include "tidal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    ptx_diag d;
    ptx_module *m = ptx_parse("fuzz.ptx", (const char *)data, size, &d);
    if (!m) {
        if (!d.nerrors || !d.msg[0]) abort(); /* rejected input must say why */
        return 0;
    }
    size_t n;
    char *out = ptx_print_to_string(m, &n);
    if (!out || n != size || memcmp(out, data, size) != 0) abort();
    free(out);
    for (uint32_t i = 0; i < ptx_func_count(m); i++) {
        ptx_func *f = ptx_func_at(m, i);
        if (!f->has_body) continue;
        ptx_diag cd;
        ptx_diag_init(&cd, "fuzz.ptx");
        ptx_func_stats st;
        (void)ptx_func_stats_compute(f, &st, &cd);
    }
    tidal_report rep;
    tidal_run(m, NULL, &rep);
    out = ptx_print_to_string(m, &n);
    if (!out) abort();
    free(out);
    ptx_module_free(m);
    return 0;
}
