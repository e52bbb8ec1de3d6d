/* nvcc_args.h — what tidal-nvcc needs to know about an nvcc command line.
 *
 * tidal-nvcc passes nvcc's arguments through untouched; this module only
 * reads them (with --options-file contents expanded) to learn the mode: will
 * nvcc do a host link, is LTO asked for, ... */
#ifndef TIDAL_NVCC_ARGS_H
#define TIDAL_NVCC_ARGS_H

#include <stdbool.h>

typedef struct nvcc_mode {
    int ninputs;         /* non-option arguments (input files) */
    int nmissing;        /* ... of which do not exist (nvcc will stop with an error) */
    bool stop_early;     /* -c, -dc, -dw, -dlink, -lib, -ptx, -cubin, -fatbin, -E, -M, ... */
    bool info_only;      /* --version, --help, --list-gpu-arch, ... : nothing is compiled */
    bool lto;            /* -dlto, -lto, -ltoir, lto_NN targets */
    bool host_link;      /* nvcc will run the host linker (an executable or -shared):
                          * inputs, all present, and no option that stops earlier */
    const char *lto_why; /* the argument that asked for LTO */
} nvcc_mode;

/* Reads argv[0..argc) (nvcc's arguments, tidal-nvcc's own already removed).
 * Strings in *mode point into argv or into storage freed by nvcc_mode_free. */
void nvcc_mode_scan(int argc, char **argv, nvcc_mode *mode);
void nvcc_mode_free(void);

#endif
