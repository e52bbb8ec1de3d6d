/* functions.c — what each launched function is, found once per function: libtidal's
 * table of functions by handle (CUfunction or CUkernel), the CUkernel handles the
 * interposers saw made, and the classification of a function on first sight (rewritten
 * with its clone and parameter layout, refused by the pass, a clone, or unknown) without
 * a failing driver call. The launch path (launch.c) asks tidal__fn_lookup; it decides and
 * launches, this file only knows. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "functions.h"
#include "partitions.h"

/* ------------------------------------------------------------------ function table */

static struct {
    tidal__fn *tab; /* open addressing on f */
    unsigned cap, count;
} F;

static size_t fn_hash(CUfunction f, unsigned cap)
{
    uint64_t x = (uint64_t)(uintptr_t)f;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)(x & (cap - 1));
}

tidal__fn *tidal__fn_slot(CUfunction f)
{
    if (!F.tab) return NULL;
    for (size_t i = fn_hash(f, F.cap);; i = (i + 1) & (F.cap - 1)) {
        if (F.tab[i].f == f || F.tab[i].f == NULL) return &F.tab[i];
    }
}

static int fn_grow(void)
{
    unsigned cap = F.cap ? F.cap * 2 : 256;
    tidal__fn *old = F.tab;
    unsigned oldcap = F.cap;
    F.tab = calloc(cap, sizeof *F.tab);
    if (!F.tab) {
        F.tab = old;
        return -1;
    }
    F.cap = cap;
    for (unsigned i = 0; i < oldcap; i++)
        if (old[i].f) *tidal__fn_slot(old[i].f) = old[i];
    free(old);
    return 0;
}

/* ------------------------------------------------------------------ CUkernel handles */

/* Launch entry points take CUkernel handles cast to CUfunction (library kernels: CUDA
 * 13's cudart launches <<<>>> kernels so), and no driver query tells the two kinds apart
 * without failing on the wrong one: cuFuncGetModule of a CUkernel and cuKernelGetFunction
 * of a CUfunction both return CUDA_ERROR_INVALID_HANDLE, which compute-sanitizer reports.
 * So the kind is known from where the handle was made: the preload's cuLibraryGetKernel
 * and cuLibraryEnumerateKernels hooks note every CUkernel here, and the cudart wrappers
 * pass __cudaLaunchKernel's cudaKernel_t as one (tidal_launch_req.kernel). The set has
 * its own lock (the hooks run on any thread, before tidal_init too) and outlives
 * tidal_shutdown, as the handles do. */
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static CUkernel *kernels; /* open addressing on the handle; NULL: empty */
static unsigned kernels_cap, kernels_count;

static CUkernel *kernel_slot(CUkernel *t, unsigned cap, CUkernel k)
{
    for (size_t i = fn_hash((CUfunction)k, cap);; i = (i + 1) & (cap - 1))
        if (t[i] == k || t[i] == NULL) return &t[i];
}

void tidal__note_kernels(const CUkernel *k, unsigned n)
{
    pthread_mutex_lock(&kernels_lock);
    for (unsigned i = 0; i < n; i++) {
        if (!k[i]) continue;
        if (2 * (kernels_count + 1) > kernels_cap) {
            unsigned cap = kernels_cap ? kernels_cap * 2 : 256;
            CUkernel *t = calloc(cap, sizeof *t);
            if (!t) break; /* not noted: recognised later at the cost of one failed call */
            for (unsigned j = 0; j < kernels_cap; j++)
                if (kernels[j]) *kernel_slot(t, cap, kernels[j]) = kernels[j];
            free(kernels);
            kernels = t;
            kernels_cap = cap;
        }
        CUkernel *e = kernel_slot(kernels, kernels_cap, k[i]);
        if (!*e) {
            *e = k[i];
            kernels_count++;
        }
    }
    pthread_mutex_unlock(&kernels_lock);
}

static int noted_kernel(CUfunction f)
{
    pthread_mutex_lock(&kernels_lock);
    int yes = kernels && *kernel_slot(kernels, kernels_cap, (CUkernel)f) == (CUkernel)f;
    pthread_mutex_unlock(&kernels_lock);
    return yes;
}

/* ------------------------------------------------------------------ classification */

/* The clone's parameter count: from the size of NAME__tidal_nparams (abi/tidal_abi.h),
 * since the driver cannot count parameters. A module rewritten before that global
 * existed: counted by cuFuncGetParamInfo until it fails (one failing call, that module
 * only). 0: unknown. */
static unsigned clone_nparams(const tidal__module *m, const tidal__mod_fn *k)
{
    const tidal_cu *cu = tidal__cu();
    size_t n = strlen(k->name), sl = strlen(TIDAL_NPARAMS_SUFFIX);
    char *g = malloc(n + sl + 1);
    if (!g) return 0;
    memcpy(g, k->name, n);
    memcpy(g + n, TIDAL_NPARAMS_SUFFIX, sl + 1);
    CUdeviceptr d;
    size_t bytes = 0;
    CUresult r = cu->ModuleGetGlobal(&d, &bytes, m->mod, g);
    free(g);
    if (r == CUDA_SUCCESS) return bytes >= 1 && bytes <= 4096 ? (unsigned)bytes : 0;
    unsigned c = 0;
    size_t off, sz;
    while (c < 4096 && cu->FuncGetParamInfo(k->clone, c, &off, &sz) == CUDA_SUCCESS) c++;
    tidal__log("%s: no %s%s (rewritten by an older tidal): %u parameters counted", k->name, k->name,
               TIDAL_NPARAMS_SUFFIX, c);
    return c;
}

/* e->f as this context's CUfunction (e->fn) and its module. A handle of unknown kind is
 * taken for a CUfunction first; a CUkernel made where no hook saw it costs one failed
 * cuFuncGetModule, once. */
static int fn_resolve(tidal__fn *e, int kernel, CUmodule *mod)
{
    const tidal_cu *cu = tidal__cu();
    CUfunction g;
    const int get = cu->KernelGetFunction != NULL;
    if (kernel || noted_kernel(e->f)) {
        if (!get || cu->KernelGetFunction(&g, (CUkernel)e->f) != CUDA_SUCCESS) return -1;
        e->fn = g;
        return cu->FuncGetModule(mod, g) == CUDA_SUCCESS ? 0 : -1;
    }
    e->fn = e->f;
    if (cu->FuncGetModule(mod, e->f) == CUDA_SUCCESS) return 0;
    if (!get || cu->KernelGetFunction(&g, (CUkernel)e->f) != CUDA_SUCCESS) return -1;
    tidal__log("%p: a CUkernel made where libtidal did not see it (told by a failed cuFuncGetModule)", (void *)e->f);
    e->fn = g;
    return cu->FuncGetModule(mod, g) == CUDA_SUCCESS ? 0 : -1;
}

/* Classify f on first sight: which module, rewritten or not, its clone. Every driver call
 * here succeeds for the modules tidal writes: the module's function list says which
 * kernels have clones. */
static void fn_classify(tidal__fn *e, int kernel)
{
    const tidal_cu *cu = tidal__cu();
    e->kind = FN_UNKNOWN;
    e->mod = NULL;
    CUmodule mod;
    if (fn_resolve(e, kernel, &mod) != 0) return;
    tidal__module *m = tidal__module_get(mod);
    if (!m || !m->rewritten) return;
    e->mod = m;
    const tidal__mod_fn *k = tidal__module_fn(m, e->fn);
    if (!k) return; /* not in the module's list: launched as given */
    if (k->is_clone) {
        e->kind = FN_CLONE; /* launched directly by someone who knows the ABI */
        return;
    }
    /* First launch from a case-b module: its __tidal_ctl follows the default partition,
     * so launches that bypass libtidal run case b there. (Without case b there is no
     * such word; make_plan falls back to the default partition by itself.) */
    if (m->has_ctl && !m->ctl && tidal__part_default()) tidal__module_set_ctl(m, tidal__part_default());
    if (!k->clone) {
        e->kind = FN_REFUSED; /* the pass left this kernel as it was (its report says why) */
        tidal__log("%s: not rewritten (refused by the pass); launched unchanged", k->name);
        return;
    }
    unsigned n = clone_nparams(m, k);
    if (n == 0) return; /* FN_UNKNOWN: launched as given */
    e->nparams = n - 1;
    e->poff = calloc(n, sizeof *e->poff);
    e->psize = calloc(n, sizeof *e->psize);
    if (!e->poff || !e->psize) return;
    size_t off = 0, sz = 0;
    int ok = 1;
    for (unsigned i = 0; ok && i < e->nparams; i++)
        ok = cu->FuncGetParamInfo(e->fn, i, &e->poff[i], &e->psize[i]) == CUDA_SUCCESS;
    if (!ok || cu->FuncGetParamInfo(k->clone, e->nparams, &off, &sz) != CUDA_SUCCESS || sz != sizeof(tidal_launch)) {
        e->kind = FN_REFUSED;
        tidal__warn(
            "%s: its clone's parameters do not match the ABI (%u parameters, %zu-byte last); launched unchanged",
            k->name, n, sz);
        return;
    }
    e->launch_off = off;
    e->clone = k->clone;
    e->kind = FN_REWRITTEN;
    tidal__log("%s: rewritten, %u parameters, tidal_launch at offset %zu", k->name, e->nparams, off);
}

tidal__fn *tidal__fn_lookup(CUfunction f, int kernel)
{
    tidal__fn *e = tidal__fn_slot(f);
    if (e && e->f == f) return e;
    if (!F.tab || 2 * (F.count + 1) > F.cap) {
        if (fn_grow() != 0) return NULL;
    }
    e = tidal__fn_slot(f);
    memset(e, 0, sizeof *e);
    e->f = f;
    e->fn = f;
    F.count++;
    fn_classify(e, kernel);
    return e;
}

void tidal__fns_teardown(void)
{
    for (unsigned i = 0; i < F.cap; i++) {
        free(F.tab[i].poff);
        free(F.tab[i].psize);
    }
    free(F.tab);
    memset(&F, 0, sizeof F);
}
