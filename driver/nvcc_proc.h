/* nvcc_proc.h — finding the real nvcc and making the private nvcc directory (exec.h runs programs). */
#ifndef TIDAL_NVCC_PROC_H
#define TIDAL_NVCC_PROC_H

/* The real nvcc: $TIDAL_NVCC, else $CUDA_HOME/bin/nvcc, else
 * /usr/local/cuda/bin/nvcc (PATH is never searched). Returns a malloc'd
 * canonical path, or NULL with *why set to a static message. */
char *nvcc_find_real(const char **why);

/* Makes the private directory: <priv>/bin holds an `nvcc` link to the real
 * nvcc, an nvcc.profile derived from the real one (CICC_PATH and the front of
 * PATH point at <priv>/bin), links to every other file of the real bin
 * directory (crt/ for link.stub, nvlink, cudafe++, ...), and cicc, ptxas,
 * fatbinary linked to `self` (the tidal-nvcc executable). Returns the
 * malloc'd <priv> path, or NULL (message printed). */
char *nvcc_make_priv(const char *real_nvcc, const char *self);

/* Removes a directory tree (the private directory). */
void nvcc_remove_tree(const char *dir);

#endif
