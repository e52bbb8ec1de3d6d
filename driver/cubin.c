/* cubin.c — PTX to cubin, first backend that is there: libnvptxcompiler (linked
 * statically when the toolkit has it: cubin_nvptxcompiler.c), nvJitLink (dlopen'ed,
 * so the drivers need no CUDA library to run), the ptxas executable. */
#define _POSIX_C_SOURCE 200809L
#include "cubin.h"
#include "exec.h"
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void *nvjl_handle;
typedef int (*nvjl_create_fn)(nvjl_handle *, unsigned, const char **);
typedef int (*nvjl_add_fn)(nvjl_handle, int, const void *, size_t, const char *);
typedef int (*nvjl_complete_fn)(nvjl_handle);
typedef int (*nvjl_size_fn)(nvjl_handle, size_t *);
typedef int (*nvjl_get_fn)(nvjl_handle, void *);
typedef int (*nvjl_log_fn)(nvjl_handle, char *);
typedef int (*nvjl_destroy_fn)(nvjl_handle *);
enum { NVJITLINK_INPUT_PTX = 2 }; /* nvJitLinkInputType in nvJitLink.h (CUDA 13) */

static int by_nvjitlink(const char *ptx, size_t len, const char *arch, void **out, size_t *out_len, char *backend,
                        size_t bsize, char *err, size_t esize)
{
    static const char *const libs[] = {"libnvJitLink.so.13", "libnvJitLink.so",
                                       "/usr/local/cuda/lib64/libnvJitLink.so.13",
                                       "/usr/local/cuda/lib64/libnvJitLink.so", NULL};
    void *lib = NULL;
    const char *name = NULL;
    for (int i = 0; libs[i] && !lib; i++) lib = dlopen(name = libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, esize, "nvJitLink is not available (%s)", dlerror());
        return 1; /* not an error of the input: try the next backend */
    }
    nvjl_create_fn create = (nvjl_create_fn)dlsym(lib, "nvJitLinkCreate");
    nvjl_add_fn add = (nvjl_add_fn)dlsym(lib, "nvJitLinkAddData");
    nvjl_complete_fn complete = (nvjl_complete_fn)dlsym(lib, "nvJitLinkComplete");
    nvjl_size_fn size = (nvjl_size_fn)dlsym(lib, "nvJitLinkGetLinkedCubinSize");
    nvjl_get_fn get = (nvjl_get_fn)dlsym(lib, "nvJitLinkGetLinkedCubin");
    nvjl_size_fn log_size = (nvjl_size_fn)dlsym(lib, "nvJitLinkGetErrorLogSize");
    nvjl_log_fn get_log = (nvjl_log_fn)dlsym(lib, "nvJitLinkGetErrorLog");
    nvjl_destroy_fn destroy = (nvjl_destroy_fn)dlsym(lib, "nvJitLinkDestroy");
    if (!create || !add || !complete || !size || !get || !log_size || !get_log || !destroy) {
        snprintf(err, esize, "%s lacks the nvJitLink entry points", name);
        dlclose(lib);
        return 1;
    }
    char opt[64];
    snprintf(opt, sizeof opt, "-arch=%s", arch);
    const char *opts[] = {opt};
    nvjl_handle h = NULL;
    int rc = -1;
    if (create(&h, 1, opts)) {
        snprintf(err, esize, "nvJitLinkCreate failed for %s", opt);
        dlclose(lib);
        return -1;
    }
    if (add(h, NVJITLINK_INPUT_PTX, ptx, len, "tidal.ptx") || complete(h)) {
        size_t n = 0;
        char *log = NULL;
        if (!log_size(h, &n) && n && (log = malloc(n + 1)) && !get_log(h, log)) {
            log[n] = 0;
            snprintf(err, esize, "nvJitLink: %s", log);
        } else {
            snprintf(err, esize, "nvJitLink rejected the PTX");
        }
        free(log);
    } else {
        size_t n = 0;
        void *buf = NULL;
        if (!size(h, &n) && (buf = malloc(n ? n : 1)) && !get(h, buf)) {
            *out = buf;
            *out_len = n;
            snprintf(backend, bsize, "nvJitLink (%s)", name);
            rc = 0;
        } else {
            free(buf);
            snprintf(err, esize, "nvJitLink produced no cubin");
        }
    }
    destroy(&h);
    /* not dlclose'd: nvJitLink keeps allocations in its globals, which would
     * look leaked once the library is unmapped */
    return rc;
}

static int by_ptxas(const char *ptx, size_t len, const char *arch, void **out, size_t *out_len, char *backend,
                    size_t bsize, char *err, size_t esize)
{
    const char *ptxas = tidal_real_ptxas();
    char dir[4096];
    if (!tidal_make_temp_dir(dir, sizeof dir, "tidal-cubin")) {
        snprintf(err, esize, "cannot create a temporary directory: %s", strerror(errno));
        return -1;
    }
    char *in = tidal_path_join(dir, "in.ptx"), *obj = tidal_path_join(dir, "out.cubin");
    int rc = -1;
    if (tidal_write_file(in, ptx, len)) {
        snprintf(err, esize, "cannot write '%s': %s", in, strerror(errno));
        goto done;
    }
    char archopt[64];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    char *argv[] = {(char *)ptxas, archopt, in, "-o", obj, NULL};
    int prc = tidal_run_ptxas("tidal-opt", argv);
    if (prc) {
        snprintf(err, esize, "%s %s failed (exit %d)", ptxas, archopt, prc);
        goto done;
    }
    if (access(obj, R_OK)) {
        snprintf(err, esize, "ptxas wrote no cubin");
        goto done;
    }
    size_t n = 0;
    char *buf = ptx_read_file(obj, &n);
    if (buf && n > 0) {
        *out = buf;
        *out_len = n;
        snprintf(backend, bsize, "ptxas (%s)", ptxas);
        rc = 0;
    } else {
        free(buf);
        snprintf(err, esize, "cannot read ptxas's cubin");
    }
done:
    unlink(in);
    unlink(obj);
    rmdir(dir);
    free(in);
    free(obj);
    return rc;
}

bool tidal_cubin_have_nvptxcompiler(void)
{
#ifdef TIDAL_HAVE_NVPTXCOMPILER
    return true;
#else
    return false;
#endif
}

int tidal_ptx_to_cubin(const char *ptx, size_t len, const char *arch, void **cubin, size_t *cubin_len, char *backend,
                       size_t backend_size, char *err, size_t err_size)
{
    const char *force = getenv("TIDAL_CUBIN_BACKEND");
    if (force && *force && strcmp(force, "ptxas") && strcmp(force, "nvjitlink") && strcmp(force, "nvptxcompiler")) {
        snprintf(err, err_size, "TIDAL_CUBIN_BACKEND=%s: not one of nvptxcompiler, nvjitlink, ptxas", force);
        return -1;
    }
    if (force && !strcmp(force, "ptxas"))
        return by_ptxas(ptx, len, arch, cubin, cubin_len, backend, backend_size, err, err_size);
    if (!force || !*force || !strcmp(force, "nvptxcompiler")) {
#ifdef TIDAL_HAVE_NVPTXCOMPILER
        /* it is the toolkit's ptxas itself: its verdict on the PTX is final */
        return tidal_cubin_by_nvptxcompiler(ptx, len, arch, cubin, cubin_len, backend, backend_size, err, err_size);
#else
        if (force && *force) {
            snprintf(err, err_size,
                     "TIDAL_CUBIN_BACKEND=nvptxcompiler: this build has no libnvptxcompiler (it is linked "
                     "in when the CUDA toolkit has lib64/libnvptxcompiler_static.a and include/nvPTXCompiler.h)");
            return -1;
        }
#endif
    }
    int rc = by_nvjitlink(ptx, len, arch, cubin, cubin_len, backend, backend_size, err, err_size);
    if (rc <= 0 || (force && !strcmp(force, "nvjitlink"))) return rc ? -1 : 0;
    return by_ptxas(ptx, len, arch, cubin, cubin_len, backend, backend_size, err, err_size);
}
