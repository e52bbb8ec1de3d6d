/* nvcc_help.h — tidal-nvcc's manual page (--tidal-help, and before nvcc's --help). */
#ifndef TIDAL_NVCC_HELP_H
#define TIDAL_NVCC_HELP_H
extern const char nvcc_help_text[];
#endif
