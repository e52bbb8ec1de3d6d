/* nvcc_wrap.h — tidal-nvcc run as cicc, ptxas or fatbinary inside nvcc.
 *
 * tidal-nvcc starts nvcc from a private directory whose nvcc.profile makes
 * nvcc run `<priv>/bin/cicc`, `ptxas` and `fatbinary`: symbolic links to the
 * tidal-nvcc executable. Invoked under those names (with TIDAL_NVCC_PRIV set)
 * it plays the tool:
 *   cicc       runs the real cicc, then rewrites the .ptx it wrote in place
 *              (nvcc's own intermediate file, or the user's -ptx output) and
 *              records it as rewritten;
 *   ptxas      a .ptx input not written by cicc in this run (a user's .ptx)
 *              is replaced by a rewritten copy under <priv>; then the real ptxas;
 *   fatbinary  the same for every `--image3=kind=ptx,...,file=F` input.
 * A user's file is never modified. */
#ifndef TIDAL_NVCC_WRAP_H
#define TIDAL_NVCC_WRAP_H

/* Environment shared by tidal-nvcc and its tool personalities. */
#define NVCC_ENV_PRIV "TIDAL_NVCC_PRIV"           /* the private directory */
#define NVCC_ENV_REAL_BIN "TIDAL_NVCC_REAL_BIN"   /* the real nvcc's bin directory */
#define NVCC_ENV_REPORT "TIDAL_NVCC_REPORT"       /* --tidal-report FILE (absolute) */
#define NVCC_ENV_REAL_CICC "TIDAL_REAL_CICC_PATH" /* set by the private nvcc.profile */

/* Returns 1 and sets *rc when argv[0] names a tool tidal-nvcc plays (and
 * TIDAL_NVCC_PRIV is set); 0 otherwise. */
int nvcc_wrap_main(int argc, char **argv, int *rc);

#endif
