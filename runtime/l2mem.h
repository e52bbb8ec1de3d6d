/* l2mem.h — memory homed on one L2 side (l2mem.c): the flip bits from the probe's
 * latencies, for the unit tests. */
#ifndef TIDAL_L2MEM_H
#define TIDAL_L2MEM_H

#include <stddef.h>
#include <stdint.h>

#include "runtime_internal.h"

#define TIDAL_L2MEM_NPROBE 9 /* probed blocks per granule: 0 1 2 3 4 8 32 128 256 */

/* lat[g * TIDAL_L2MEM_NPROBE + i]: the L2-hit latency from a side-1 SM of probed block i of
 * granule g after a side-0 SM loaded it. flips (granules / 32 words, rounded up) gets bit g
 * = granule g's flip. TIDAL_ERR_UNSUPPORTED when the latencies are not two kinds at least
 * 40 cycles apart, or a block is not on the side the pattern puts it. */
int tidal__l2mem_flips(const uint16_t *lat, size_t granules, uint32_t *flips);

#endif
