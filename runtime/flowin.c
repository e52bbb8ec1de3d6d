/* flowin.c — flow-in: the clone launches of a partition that may still run, and joiners
 * for them when the partition gains SMs. A joiner is the same clone with the same
 * parameters, flagged TIDAL_LAUNCH_JOIN and carrying the running launch's key; its blocks
 * claim logical blocks from the owner's slot on the SMs the mask allows (abi/tidal_abi.h).
 * They run on libtidal's join stream (device.c), beside the owner's. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "flowin.h"
#include "tidal_abi.h"

static atomic_ullong joins;

void tidal__flow_add(tidal__flow *f, const tidal__inflight *rec, CUstream s)
{
    const tidal_cu *cu = tidal__cu();
    tidal__inflight *slot = &f->rec[f->next++ % TIDAL_INFLIGHT];
    CUevent ev = slot->done;
    free(slot->buf);
    *slot = *rec;
    if (!ev && cu->EventCreate(&ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) ev = NULL;
    slot->done = ev;
    slot->used = ev && cu->EventRecord(ev, s) == CUDA_SUCCESS;
    if (!slot->used) {
        free(slot->buf);
        slot->buf = NULL;
    }
}

/* Every launch still running gets joiners, occupancy times the SMs added; those the
 * hardware places on SMs outside the mask leave at once. */
void tidal__flow_join(tidal__flow *f, unsigned added_sms)
{
    const tidal_cu *cu = tidal__cu();
    for (unsigned i = 0; i < TIDAL_INFLIGHT; i++) {
        tidal__inflight *r = &f->rec[i];
        if (!r->used) continue;
        CUresult q = cu->EventQuery(r->done);
        if (q != CUDA_ERROR_NOT_READY) { /* finished (or failed): nothing to join */
            r->used = 0;
            free(r->buf);
            r->buf = NULL;
            continue;
        }
        tidal_launch tl;
        memcpy(&tl, r->buf + r->launch_off, sizeof tl);
        tl.flags |= TIDAL_LAUNCH_JOIN;
        memcpy(r->buf + r->launch_off, &tl, sizeof tl);
        size_t n = r->bufsize;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, r->buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, CU_LAUNCH_PARAM_END};
        /* as many joiners as the added SMs hold; those the hardware puts elsewhere leave */
        unsigned joiners = r->occ * added_sms;
        if (joiners > r->workers || joiners == 0) joiners = r->workers;
        CUresult lr = cu->LaunchKernel(r->clone, joiners, 1, 1, r->block[0], r->block[1], r->block[2], r->smem,
                                       tidal__join_stream(), NULL, extra);
        if (lr == CUDA_SUCCESS)
            atomic_fetch_add(&joins, 1);
        else
            tidal__log("joiners for launch %llx: %d", (unsigned long long)r->key, (int)lr);
    }
}

void tidal__flow_free(tidal__flow *f)
{
    for (unsigned i = 0; i < TIDAL_INFLIGHT; i++) {
        free(f->rec[i].buf);
        if (f->rec[i].done) tidal__cu()->EventDestroy(f->rec[i].done);
        memset(&f->rec[i], 0, sizeof f->rec[i]);
    }
}

unsigned long long tidal__flow_joins(void) { return atomic_load(&joins); }
void tidal__flow_joins_reset(void) { atomic_store(&joins, 0); }
