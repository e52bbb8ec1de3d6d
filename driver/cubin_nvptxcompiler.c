/* cubin_nvptxcompiler.c — PTX to cubin in process with NVIDIA's libnvptxcompiler
 * (nvPTXCompiler.h), the ptxas of the CUDA toolkit as a library. It ships only as a
 * static archive (libnvptxcompiler_static.a), so it is linked in at build time where
 * the toolkit has it (CMake: TIDAL_NVPTXCOMPILER) and this file is compiled only then;
 * cubin.c falls back to nvJitLink or the ptxas executable elsewhere. */
#include "cubin.h"

#include <nvPTXCompiler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *result_name(nvPTXCompileResult r)
{
    switch (r) {
    case NVPTXCOMPILE_SUCCESS: return "success";
    case NVPTXCOMPILE_ERROR_INVALID_COMPILER_HANDLE: return "invalid compiler handle";
    case NVPTXCOMPILE_ERROR_INVALID_INPUT: return "invalid input";
    case NVPTXCOMPILE_ERROR_COMPILATION_FAILURE: return "compilation failure";
    case NVPTXCOMPILE_ERROR_INTERNAL: return "internal error";
    case NVPTXCOMPILE_ERROR_OUT_OF_MEMORY: return "out of memory";
    case NVPTXCOMPILE_ERROR_COMPILER_INVOCATION_INCOMPLETE: return "compiler invocation incomplete";
    case NVPTXCOMPILE_ERROR_UNSUPPORTED_PTX_VERSION: return "unsupported PTX version";
    default: return "unknown status";
    }
}

/* The compiler's error log, or "" (malloc'd). */
static char *error_log(nvPTXCompilerHandle h)
{
    size_t n = 0;
    char *log = NULL;
    if (nvPTXCompilerGetErrorLogSize(h, &n) == NVPTXCOMPILE_SUCCESS && (log = calloc(n + 1, 1)) &&
        nvPTXCompilerGetErrorLog(h, log) == NVPTXCOMPILE_SUCCESS)
        return log;
    free(log);
    return calloc(1, 1);
}

int tidal_cubin_by_nvptxcompiler(const char *ptx, size_t len, const char *arch, void **out, size_t *out_len,
                                 char *backend, size_t bsize, char *err, size_t esize)
{
    nvPTXCompilerHandle h = NULL;
    nvPTXCompileResult r = nvPTXCompilerCreate(&h, len, ptx);
    if (r != NVPTXCOMPILE_SUCCESS) {
        snprintf(err, esize, "nvPTXCompilerCreate: %s", result_name(r));
        return -1;
    }
    char gpu[64];
    snprintf(gpu, sizeof gpu, "--gpu-name=%s", arch);
    const char *const opts[] = {gpu};
    int rc = -1;
    r = nvPTXCompilerCompile(h, 1, opts);
    if (r != NVPTXCOMPILE_SUCCESS) {
        char *log = error_log(h);
        /* the log ends in a newline; keep messages one line where it is one line */
        size_t n = strlen(log);
        while (n && (log[n - 1] == '\n' || log[n - 1] == '\r')) log[--n] = 0;
        snprintf(err, esize, "nvPTXCompiler: %s%s%s", result_name(r), *log ? ": " : "", log);
        free(log);
    } else {
        size_t n = 0;
        void *buf = NULL;
        if (nvPTXCompilerGetCompiledProgramSize(h, &n) == NVPTXCOMPILE_SUCCESS && (buf = malloc(n ? n : 1)) &&
            nvPTXCompilerGetCompiledProgram(h, buf) == NVPTXCOMPILE_SUCCESS) {
            unsigned major = 0, minor = 0;
            nvPTXCompilerGetVersion(&major, &minor);
            *out = buf;
            *out_len = n;
            snprintf(backend, bsize, "libnvptxcompiler %u.%u (in process, static)", major, minor);
            rc = 0;
        } else {
            free(buf);
            snprintf(err, esize, "nvPTXCompiler produced no cubin");
        }
    }
    nvPTXCompilerDestroy(&h);
    return rc;
}
