/* modules.h — the modules libtidal has seen (modules.c): which carry the rewrite, their
 * functions paired with their clones (listed once, without a failing driver call), and
 * the partition each is attached to (tidal_module_attach, tidal.triton; with case b, the
 * module's __tidal_ctl). functions.c classifies a function through its module; the launch
 * path reads a module's attachment. Called with the lock held. */
#ifndef TIDAL_MODULES_H
#define TIDAL_MODULES_H

#include "runtime_internal.h"

struct tidal_part;

/* One function of a rewritten module, as listed when the module was first seen: an
 * original with its clone (NULL: the pass refused it), or a clone. */
typedef struct tidal__mod_fn {
    CUfunction fn;
    CUfunction clone;
    const char *name; /* the driver's (valid while the module is loaded) */
    int is_clone;
} tidal__mod_fn;

/* A module's record; it stays where it is until teardown (functions keep a pointer). */
typedef struct tidal__module {
    CUmodule mod;
    int rewritten;
    int has_ctl;                /* defines __tidal_ctl (rewritten with case b: an 8-byte marker) */
    struct tidal_part *ctl;     /* the partition it is attached to; with has_ctl, what __tidal_ctl
                                 * was set to (NULL: still 0) */
    tidal__mod_fn *fns;         /* rewritten: every function, sorted by handle */
    tidal__mod_fn *fns_by_name; /* the same, sorted by name */
    unsigned nfns;
} tidal__module;

/* m's record, made (m classified) on first sight; NULL without memory. */
tidal__module *tidal__module_get(CUmodule m);
/* f in a rewritten m, by handle, else by name (the driver's handle for a listed function
 * need not be the listed one); NULL: not in m */
const tidal__mod_fn *tidal__module_fn(const tidal__module *m, CUfunction f);
/* Attach m to p (case b: write p's control block into __tidal_ctl, once). */
int tidal__module_set_ctl(tidal__module *m, struct tidal_part *p);
void tidal__modules_teardown(void);

/* The partition the module is attached to (NULL: none, or no module) */
static inline struct tidal_part *tidal__module_part(const tidal__module *m) { return m ? m->ctl : NULL; }

#endif
