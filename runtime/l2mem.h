/* l2mem.h — memory homed on one L2 side (l2mem.c): the device's pattern and the flip bits
 * from the probe's latencies (for the unit tests), and creation under the lock (for
 * bimodal.c). */
#ifndef TIDAL_L2MEM_H
#define TIDAL_L2MEM_H

#include <stddef.h>
#include <stdint.h>

#include "runtime_internal.h"

/* The probed blocks of every granule, in this order: block 0 and blocks 2^k (k = 0..8) give
 * the pattern bit by bit (granule 0's) and each granule's flip; the others (several bits
 * at once) check that the side is a parity of the block index at all. */
#define TIDAL_L2MEM_NPROBE 16
extern const unsigned tidal__l2mem_probe_blocks[TIDAL_L2MEM_NPROBE];

/* lat[g * TIDAL_L2MEM_NPROBE + i]: the L2-hit latency from a side-1 SM of probed block i of
 * granule g after a side-0 SM loaded it. *mask gets the device's pattern (bit k = side of
 * block 2^k ^ side of block 0, on granule 0), flips (granules / 32 words, rounded up) bit
 * g = granule g's flip. TIDAL_ERR_UNSUPPORTED when the latencies are not two kinds at
 * least 40 cycles apart, when the pattern is empty (every block of granule 0 on one side),
 * or when a probed block is not on the side the pattern puts it (the text names the
 * granule and block). */
int tidal__l2mem_measure(const uint16_t *lat, size_t granules, uint32_t *flips, unsigned *mask);

/* tidal_l2mem_create and _destroy with the lock held and libtidal's context current. */
int tidal__l2mem_create_locked(size_t per_side, tidal_l2mem **out);
void tidal__l2mem_destroy_locked(tidal_l2mem *m);

#endif
