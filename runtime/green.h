/* green.h — green contexts (green.c): the device's finest SM groups, measured once, and one
 * green context per SM set that is a union of them; streams.c makes partition streams in
 * them. Called with the lock held. */
#ifndef TIDAL_GREEN_H
#define TIDAL_GREEN_H

#include "runtime_internal.h"

typedef struct tidal__green {
    tidal_smset set;
    CUgreenCtx g;
} tidal__green;

/* The green context of exactly set (made when create and set is a union of groups; one
 * per set, cached), or NULL: placement is off, set is no union of groups, or none is
 * left. */
const tidal__green *tidal__green_for(const tidal_smset *set, int create);
/* Whether set is a union of groups (placement on). */
int tidal__green_is_union(const tidal_smset *set);
void tidal__green_teardown(void);

#endif
