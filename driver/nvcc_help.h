/* nvcc_help.h — tidal-nvcc's manual page (--tidal-help, and before nvcc's --help). */
#ifndef TIDAL_NVCC_HELP_H
#define TIDAL_NVCC_HELP_H

/* The install's libdir as seen from its bindir, where the runtime is looked for by
 * default (CMake computes it from GNUInstallDirs: ../lib, ../lib64, ../lib/<multiarch>);
 * the build tree has build/bin and build/lib. */
#ifndef TIDAL_BIN_TO_LIBDIR
#define TIDAL_BIN_TO_LIBDIR "../lib"
#endif

extern const char nvcc_help_text[];
#endif
