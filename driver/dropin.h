/* dropin.h — what the two drop-ins share: tidal-ptxas, and tidal-nvcc's cicc, ptxas and
 * fatbinary personalities (nvcc_wrap.c). Which of ptxas's arguments are PTX inputs, and
 * the rewrite of a PTX file they hand on to the real tool: read, parse and transform (the
 * library's tidal_rewrite_file), the warning when tidal cannot parse it, the report, and
 * the rewritten module written to its file.
 *
 * Where the rewritten file goes, and for how long, stays each one's own: tidal-ptxas
 * writes a copy into a private directory and removes it once ptxas is done; tidal-nvcc
 * rewrites cicc's output in place, and makes one copy of a user's .ptx per nvcc run,
 * shared by every tool that reads it and removed with the private directory. */
#ifndef TIDAL_DROPIN_H
#define TIDAL_DROPIN_H

#include "ptx.h"
#include "tidal.h"

#include <stdbool.h>

/* ptxas's command line: `arg`, after `prev` (NULL when arg is the first argument), is a
 * PTX input: not an option, not the value of -o / --output-file, a name ending in .ptx. */
bool dropin_ptx_input(const char *prev, const char *arg);

typedef struct dropin_rewrite_job {
    const char *tool;     /* messages' prefix: "tidal-ptxas", "tidal-nvcc" */
    const char *in;       /* the PTX file */
    const char *shown;    /* what messages and the report call it */
    const char *fallback; /* the warning's words for what happens to `in` when tidal cannot
                             parse it: "assembled", "used" (... without the tidal rewrite) */
    const tidal_options *opt;
    const char *report;      /* the file the text report is appended to, or NULL */
    const char *report_file; /* what the report names instead of `shown`, or NULL */
    const char *report_note; /* the report's note after that name, or NULL */
} dropin_rewrite_job;

/* The report file can be appended to (it is created when missing, as dropin_rewrite's
 * appending does): checked before the tool runs, so a bad path is said once. errno set when
 * not. */
bool dropin_report_ok(const char *path);

/* dropin_rewrite's reasons for returning NULL */
enum {
    DROPIN_UNREADABLE = -1, /* the file cannot be read (errno set); not said: tidal-ptxas warns
                               and lets ptxas report it, tidal-nvcc fails */
    DROPIN_UNPARSED = 1,    /* tidal cannot parse it; warned ("TOOL: warning: DIAG", then
                               "TOOL: warning: 'SHOWN' is FALLBACK without the tidal rewrite") */
};

/* Reads, parses and rewrites job->in, and appends the report (in one write(): nvcc
 * --threads and Triton's compile workers run tools in parallel on one report file).
 * Returns the module, for dropin_write and ptx_module_free; NULL with *why set when the
 * file is to be used as it is. */
ptx_module *dropin_rewrite(const dropin_rewrite_job *job, int *why);

/* Writes m to `out` through a temporary file in out's directory, then renamed onto it: so
 * `out` may be the file m was read from, and a tool running in parallel never reads it half
 * written. `out` gets the permissions of the file `like` (0644 when it cannot be read).
 * Returns 0, or -1 with errno set (not said: each drop-in words it). */
int dropin_write(const ptx_module *m, const char *out, const char *like);

#endif
