/* modules.c — the modules libtidal has seen: whether each carries the rewrite (found from
 * its function names, listed once: no failing driver call), its functions paired with their
 * clones and loaded eagerly, and the partition it is attached to (tidal_module_attach). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "modules.h"
#include "partitions.h"

/* The records, each allocated once so that functions keep pointers to them. */
static struct {
    tidal__module **tab;
    unsigned n, cap;
} M;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const tidal__mod_fn *)a)->name, ((const tidal__mod_fn *)b)->name);
}

static int by_handle(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const tidal__mod_fn *)a)->fn, y = (uintptr_t)((const tidal__mod_fn *)b)->fn;
    return (x > y) - (x < y);
}

/* The entry named by the first len bytes of name in t (sorted by name), or NULL. */
static tidal__mod_fn *named(const tidal__mod_fn *t, unsigned n, const char *name, size_t len)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        int c = strncmp(t[mid].name, name, len);
        if (c == 0) c = t[mid].name[len] != '\0'; /* longer than the key: after it */
        if (c == 0) return (tidal__mod_fn *)&t[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Whether m carries the rewrite, found without a failing driver call (compute-sanitizer
 * reports each): its function names (listed once per module) show clones
 * NAME__tidal_reshaped, and only then is the marker asked for. cuModuleGetGlobal of the
 * marker in every module failed in most of them: cuBLAS, cuDNN, PyTorch's own kernels.
 * A rewritten module keeps the list, each original paired with its clone, and has every
 * function loaded now: with lazy loading the first launch of a kernel waits for the
 * kernels already running in the process (../shared/docs/platform.md). */
static void module_scan(tidal__module *r)
{
    const tidal_cu *cu = tidal__cu();
    unsigned n = 0, nclones = 0;
    if (cu->ModuleGetFunctionCount(&n, r->mod) != CUDA_SUCCESS || n == 0) return;
    CUfunction *fs = calloc(n, sizeof *fs);
    tidal__mod_fn *t = calloc(n, sizeof *t), *byname = calloc(n, sizeof *t);
    if (!fs || !t || !byname || cu->ModuleEnumerateFunctions(fs, n, r->mod) != CUDA_SUCCESS) goto out;
    const size_t sl = strlen(TIDAL_RESHAPED_SUFFIX);
    for (unsigned i = 0; i < n; i++) {
        t[i].fn = fs[i];
        if (cu->FuncGetName(&t[i].name, fs[i]) != CUDA_SUCCESS || !t[i].name) goto out;
        size_t len = strlen(t[i].name);
        t[i].is_clone = len > sl && strcmp(t[i].name + len - sl, TIDAL_RESHAPED_SUFFIX) == 0;
        nclones += (unsigned)t[i].is_clone;
    }
    if (!nclones) goto out;
    CUdeviceptr d;
    size_t bytes;
    if (cu->ModuleGetGlobal(&d, &bytes, r->mod, TIDAL_MARKER_SYMBOL) != CUDA_SUCCESS) {
        tidal__warn("a module has %u tidal clones but no %s (rewritten for another ABI?): launched unchanged", nclones,
                    TIDAL_MARKER_SYMBOL);
        goto out;
    }
    r->has_ctl = bytes >= TIDAL_MARKER_BYTES_CASE_B; /* case b: the module has __tidal_ctl */
    qsort(t, n, sizeof *t, by_name);
    for (unsigned i = 0; i < n; i++) {
        if (!t[i].is_clone) continue;
        tidal__mod_fn *o = named(t, n, t[i].name, strlen(t[i].name) - sl);
        if (o && !o->is_clone) o->clone = t[i].fn;
    }
    memcpy(byname, t, n * sizeof *t);
    qsort(t, n, sizeof *t, by_handle);
    for (unsigned i = 0; i < n; i++) cu->FuncLoad(t[i].fn);
    r->rewritten = 1;
    r->fns = t;
    r->fns_by_name = byname;
    r->nfns = n;
    t = byname = NULL;
out:
    free(fs);
    free(t);
    free(byname);
}

tidal__module *tidal__module_get(CUmodule m)
{
    for (unsigned i = 0; i < M.n; i++)
        if (M.tab[i]->mod == m) return M.tab[i];
    if (tidal__grow((void **)&M.tab, &M.cap, M.n + 1, sizeof *M.tab) != 0) return NULL;
    tidal__module *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    M.tab[M.n++] = r;
    r->mod = m;
    module_scan(r);
    return r;
}

const tidal__mod_fn *tidal__module_fn(const tidal__module *m, CUfunction f)
{
    unsigned lo = 0, hi = m->nfns;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (m->fns[mid].fn == f) return &m->fns[mid];
        if ((uintptr_t)m->fns[mid].fn < (uintptr_t)f)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *name = NULL;
    if (!m->nfns || tidal__cu()->FuncGetName(&name, f) != CUDA_SUCCESS || !name) return NULL;
    return named(m->fns_by_name, m->nfns, name, strlen(name));
}

int tidal__module_set_ctl(tidal__module *m, struct tidal_part *p)
{
    if (m->ctl == p) return TIDAL_OK;
    if (!m->has_ctl) {
        /* no device word to write (no case b): the attachment is libtidal's alone, and
         * may move (launches from unbound streams follow it as clones) */
        if (m->ctl) tidal__part_release(m->ctl);
        m->ctl = p;
        tidal__part_hold(p);
        return TIDAL_OK;
    }
    if (m->ctl)
        return tidal__fail(TIDAL_ERR_BUSY, "module's __tidal_ctl already names partition \"%s\" (written once)",
                           m->ctl->name);
    const tidal_cu *cu = tidal__cu();
    CUdeviceptr ctl;
    size_t bytes = 0;
    CU_TRY(cu->ModuleGetGlobal(&ctl, &bytes, m->mod, TIDAL_CTL_SYMBOL), "cuModuleGetGlobal(__tidal_ctl)");
    if (bytes != 8) return tidal__fail(TIDAL_ERR_NOT_REWRITTEN, "__tidal_ctl has %zu bytes, want 8", bytes);
    uint64_t v = (uint64_t)p->dev;
    int st = tidal__ctl_write(ctl, &v, 8, "cuMemcpyHtoDAsync(__tidal_ctl)");
    if (st) return st;
    m->ctl = p;
    tidal__part_hold(p);
    return TIDAL_OK;
}

int tidal_module_attach(void *module, tidal_part *p)
{
    if (!module) return tidal__fail(TIDAL_ERR_INVALID, "tidal_module_attach: NULL module");
    tidal__lock();
    NEED_INIT("tidal_module_attach");
    int st = TIDAL_OK;
    tidal__call saved = tidal__ctx_enter();
    tidal__module *m = tidal__module_get((CUmodule)module);
    if (!m)
        st = tidal__fail(TIDAL_ERR_NO_MEMORY, "module table");
    else if (!m->rewritten)
        st = tidal__fail(TIDAL_ERR_NOT_REWRITTEN, "module has no kernel rewritten by tidal (no NAME%s with %s)",
                         TIDAL_RESHAPED_SUFFIX, TIDAL_MARKER_SYMBOL);
    else {
        struct tidal_part *target = p ? p : tidal__part_default();
        if (target) st = tidal__module_set_ctl(m, target);
    }
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

void tidal__modules_teardown(void)
{
    for (unsigned i = 0; i < M.n; i++) {
        free(M.tab[i]->fns);
        free(M.tab[i]->fns_by_name);
        free(M.tab[i]);
    }
    free(M.tab);
    memset(&M, 0, sizeof M);
}
