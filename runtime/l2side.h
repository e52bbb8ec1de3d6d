/* l2side.h — the two L2 sides (l2side.c): which SMs read through which half of the L2,
 * measured once per process for tidal_l2_sides. */
#ifndef TIDAL_L2SIDE_H
#define TIDAL_L2SIDE_H

#include "runtime_internal.h"

/* Where the probe kernel leaves SM s's summed latency + 1 (u64): its control block + this
 * + 8 s (l2side.c; the unit tests' fake device writes it there too). */
#define TIDAL_L2SIDE_CTL_SUM 1040

/* The split of SMs by their mean L2-hit latency on lines one SM loaded (mean[s] cycles,
 * 0: SM s was not measured): side[0] gets the SMs on SM 0's side. TIDAL_ERR_UNSUPPORTED
 * when the means do not form two clusters at least 40 cycles apart with none in the middle
 * third; TIDAL_ERR_CUDA when an SM was not measured. Pure (the unit tests call it). */
int tidal__l2_classify(const double *mean, unsigned nsm, tidal_smset side[2]);
/* The sides, measured on the first call (lock held, libtidal's context current); a failure
 * is kept and returned again with its text. */
int tidal__l2_sides_get(tidal_smset side[2]);
/* Forget the measurement (tidal_shutdown). */
void tidal__l2_teardown(void);

#endif
