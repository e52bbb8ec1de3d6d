/* exec.h — running CUDA tools from tidal's drivers. */
#ifndef TIDAL_EXEC_H
#define TIDAL_EXEC_H

/* The real ptxas: $TIDAL_REAL_PTXAS, else $CUDA_HOME/bin/ptxas when it is
 * executable, else /usr/local/cuda/bin/ptxas. */
const char *tidal_real_ptxas(void);

/* Runs the real ptxas with argv (argv[0] included, NULL-terminated) and waits.
 * Returns its exit status, 128+signal, or 127 when it cannot be started (said
 * on stderr, prefixed with `who`). */
int tidal_run_ptxas(const char *who, char *const argv[]);

#endif
