/* exec.h — running CUDA tools from tidal's drivers: the one process runner
 * (tidal-opt, tidal-ptxas and tidal-nvcc with its cicc personality all run
 * their children through tidal_run_wait). */
#ifndef TIDAL_EXEC_H
#define TIDAL_EXEC_H

#include <stdbool.h>

/* tidal_run_wait's results besides an exit status (0..255) or 128+signal */
enum {
    TIDAL_RUN_NO_FORK = -1, /* fork failed (errno set); nothing ran */
    TIDAL_RUN_NO_WAIT = -2, /* waitpid failed (errno set) */
};

/* tidal_run_wait's flags */
enum {
    /* Like system(): SIGINT and SIGQUIT are ignored in the caller from the call
     * on, and stay ignored after it (a ^C reaches the child through the process
     * group; the caller outlives it to clean up); the child gets the
     * dispositions they had. */
    TIDAL_RUN_OUTLIVE = 1u << 0,
};

/* Runs `path` with argv (argv[0] included, NULL-terminated; PATH is never
 * searched) and waits. Returns its exit status, 128+signal, or TIDAL_RUN_NO_FORK
 * / TIDAL_RUN_NO_WAIT. A child whose execv fails exits 127; when `who` is not
 * NULL it first says "WHO: cannot run WHAT 'PATH': REASON" on stderr. */
int tidal_run_wait(const char *path, char *const argv[], unsigned flags, const char *who, const char *what);

/* The real ptxas: $TIDAL_REAL_PTXAS, else $CUDA_HOME/bin/ptxas when it is
 * executable, else /usr/local/cuda/bin/ptxas. */
const char *tidal_real_ptxas(void);

/* ptxas's command line: `arg`, after `prev` (NULL when arg is the first argument), is a
 * PTX input: not an option, not the value of -o / --output-file, a name ending in .ptx.
 * tidal-ptxas and tidal-nvcc's ptxas personality find the files to rewrite with it. */
bool tidal_ptxas_ptx_input(const char *prev, const char *arg);

/* Runs the real ptxas with argv (argv[0] included, NULL-terminated) and waits.
 * Returns its exit status, 128+signal, or 127 when it cannot be started (said
 * on stderr, prefixed with `who`). */
int tidal_run_ptxas(const char *who, char *const argv[]);

#endif
