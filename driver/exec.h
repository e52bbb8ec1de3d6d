/* exec.h — running other programs from tidal's drivers: the one place that calls execv.
 *
 * Two ways, because the jobs differ:
 *   tidal_run_wait  fork, exec, wait: the driver has work left after the program (tidal-nvcc
 *                   removes its private directory after nvcc, its cicc personality rewrites
 *                   cicc's output, tidal-ptxas removes its copy, tidal-opt reads the cubin);
 *   tidal_exec      exec in place, no fork: nothing is left to do, and the program is to be
 *                   this process (tidal-nvcc's ptxas and fatbinary personalities, whose pid,
 *                   status and signals nvcc waits on; --tidal-off, --help, --tidal-version).
 * And the real ptxas, which tidal-ptxas and tidal-opt's ptxas backend both run. */
#ifndef TIDAL_EXEC_H
#define TIDAL_EXEC_H

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

/* Replaces this process with `path` run with argv (argv[0] included, NULL-terminated;
 * PATH is never searched). Returns only when it cannot, with 127, after saying
 * "PREFIX: cannot run WHAT 'PATH': REASON" on stderr when `prefix` is not NULL (without
 * "WHAT " when `what` is NULL). */
int tidal_exec(const char *path, char *const argv[], const char *prefix, const char *what);

/* Runs `path` with argv (as tidal_exec) in a child and waits. Returns its exit status,
 * 128+signal, or TIDAL_RUN_NO_FORK / TIDAL_RUN_NO_WAIT. A child that cannot run `path`
 * exits 127, having said so as tidal_exec does. */
int tidal_run_wait(const char *path, char *const argv[], unsigned flags, const char *prefix, const char *what);

/* The real ptxas: $TIDAL_REAL_PTXAS, else $CUDA_HOME/bin/ptxas when it is
 * executable, else /usr/local/cuda/bin/ptxas. (tidal-nvcc's ptxas personality runs
 * the ptxas beside the real nvcc instead: nvcc's own toolkit, whatever these say.) */
const char *tidal_real_ptxas(void);

/* Runs the real ptxas with argv (argv[0] included, NULL-terminated) and waits.
 * Returns its exit status, 128+signal, or 127 when it cannot be started (said
 * on stderr, prefixed with `who`). */
int tidal_run_ptxas(const char *who, char *const argv[]);

#endif
