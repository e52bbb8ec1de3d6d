/* bimodal.c — bimodal tensors (docs/runtime.md "Bimodal tensors", abi/tidal_l2.h): SGDRC's
 * two copies of a memory-bound best-effort (BE) tensor, one spread over all memory and one
 * in BE's own memory colors, and a switch of the copy kernels read while they run.
 *
 * On the H200 the colors user space controls are the two L2 sides (l2mem.c), and memory
 * homed on a side is every other 4 KiB block of its granules, not a linear range: no VMM
 * remap can turn one copy into the other under a running kernel. So kernels read a mode
 * word in the tensor's descriptor and address the copy it names (tidal_bimodal_mode,
 * tidal_bimodal_addr). The word is published the way a partition's live mask is
 * (tidal__ctl_write: the non-blocking control stream, waited for) and read the way the
 * mask is (a relaxed GPU-scope load at a logical block's start): one mechanism, one
 * ordering. Called with the lock held where it touches the device. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "l2mem.h"
#include "tidal_l2.h"

struct tidal_bimodal {
    tidal_l2mem *l2;      /* side h.side's half holds the side copy (the other half is unused) */
    CUdeviceptr all;      /* the linear copy */
    CUdeviceptr desc;     /* the tidal_bimodal_desc kernels read */
    tidal_bimodal_desc h; /* what desc holds, the mode as last set */
    uint32_t *flips;      /* host copy of the l2mem's flip bits: writes translate on the host */
};

static void release(struct tidal_bimodal *t)
{
    const tidal_cu *cu = tidal__cu();
    if (t->desc) cu->MemFree(t->desc);
    if (t->all) cu->MemFree(t->all);
    if (t->l2) tidal__l2mem_destroy_locked(t->l2);
    free(t->flips);
    free(t);
}

static int create_locked(size_t size, unsigned side, struct tidal_bimodal **out)
{
    const tidal_cu *cu = tidal__cu();
    if (!cu->MemcpyDtoDAsync)
        return tidal__fail(TIDAL_ERR_NO_DRIVER, "tidal_bimodal_create: the driver has no cuMemcpyDtoDAsync");
    struct tidal_bimodal *t = calloc(1, sizeof *t);
    if (!t) return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_bimodal_create");
    int st = tidal__l2mem_create_locked(size, &t->l2);
    if (!st) st = tidal_l2mem_layout(t->l2, &t->h.l2);
    size_t nwords = (t->h.l2.granules + 31) / 32;
    if (!st && !(t->flips = malloc(nwords * sizeof *t->flips)))
        st = tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_bimodal_create: flip bits");
    if (!st) st = tidal_l2mem_flips(t->l2, t->flips, nwords);
    CUresult r = CUDA_SUCCESS;
    if (!st) r = cu->MemAlloc(&t->all, size);
    if (!st && r == CUDA_SUCCESS) r = cu->MemAlloc(&t->desc, sizeof t->h);
    /* the copies start identical: zero, the whole granules of the side copy with them */
    if (!st && r == CUDA_SUCCESS) r = cu->MemsetD8Async(t->all, 0, size, tidal__ctl_stream());
    if (!st && r == CUDA_SUCCESS)
        r = cu->MemsetD8Async(t->h.l2.base, 0, (size_t)t->h.l2.granules << TIDAL_L2_GRANULE_SHIFT, tidal__ctl_stream());
    if (!st && r != CUDA_SUCCESS) st = tidal__cuda_fail(r, "tidal_bimodal_create: the copies");
    if (!st) {
        t->h.mode = TIDAL_BIMODAL_ALL;
        t->h.side = side;
        t->h.all = t->all;
        t->h.size = size;
        /* on the control stream after the memsets: when it returns, all of it is done */
        st = tidal__ctl_write(t->desc, &t->h, sizeof t->h, "cuMemcpyHtoDAsync(bimodal descriptor)");
    }
    if (st) {
        release(t);
        return st;
    }
    tidal__log("bimodal tensor: %zu bytes at 0x%llx and in side %u of the L2 memory at 0x%llx (mask 0x%x)", size,
               (unsigned long long)t->all, side, (unsigned long long)t->h.l2.base, t->h.l2.mask);
    *out = t;
    return TIDAL_OK;
}

int tidal_bimodal_create(size_t size, unsigned side, tidal_bimodal **out)
{
    if (!out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_create: NULL");
    if (!size) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_create: 0 bytes");
    if (side > 1)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_create: side %u (the L2 has sides 0 and 1)", side);
    tidal__lock();
    NEED_INIT("tidal_bimodal_create");
    tidal__call saved = tidal__ctx_enter();
    int st = create_locked(size, side, out);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

/* The linear copy from the host, then the side copy from the linear one on the device: one
 * copy per run of 4 KiB pieces that lie back to back in the side copy (a piece never
 * crosses a 4 KiB block, whose neighbour in the side copy is elsewhere). */
static int write_locked(struct tidal_bimodal *t, size_t offset, const void *src, size_t n)
{
    const tidal_cu *cu = tidal__cu();
    CUstream s = tidal__ctl_stream();
    CU_TRY(cu->MemcpyHtoDAsync(t->all + offset, src, n, s), "tidal_bimodal_write: cuMemcpyHtoDAsync");
    tidal_l2_layout L = t->h.l2;
    L.flips = (uint64_t)(uintptr_t)t->flips;
    size_t end = offset + n, run_src = offset, run_len = 0;
    CUdeviceptr run_dst = 0;
    for (size_t o = offset; o < end;) {
        size_t piece = ((o | 4095) + 1 < end ? (o | 4095) + 1 : end) - o;
        CUdeviceptr dst = tidal_l2_addr(&L, t->h.side, o);
        if (run_len && dst == run_dst + run_len) {
            run_len += piece;
        } else {
            if (run_len)
                CU_TRY(cu->MemcpyDtoDAsync(run_dst, t->all + run_src, run_len, s),
                       "tidal_bimodal_write: cuMemcpyDtoDAsync");
            run_dst = dst;
            run_src = o;
            run_len = piece;
        }
        o += piece;
    }
    CU_TRY(cu->MemcpyDtoDAsync(run_dst, t->all + run_src, run_len, s), "tidal_bimodal_write: cuMemcpyDtoDAsync");
    CU_TRY(cu->StreamSynchronize(s), "tidal_bimodal_write: cuStreamSynchronize(control stream)");
    return TIDAL_OK;
}

int tidal_bimodal_write(tidal_bimodal *t, size_t offset, const void *src, size_t n)
{
    if (!t || (!src && n)) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_write: NULL");
    if (offset > t->h.size || n > t->h.size - offset)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_write: %zu bytes at offset %zu, the tensor has %llu", n,
                           offset, (unsigned long long)t->h.size);
    if (!n) return TIDAL_OK;
    tidal__lock();
    NEED_INIT("tidal_bimodal_write");
    tidal__call saved = tidal__ctx_enter();
    int st = write_locked(t, offset, src, n);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

int tidal_bimodal_set(tidal_bimodal *t, unsigned mode)
{
    if (!t) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_set: NULL");
    if (mode != TIDAL_BIMODAL_ALL && mode != TIDAL_BIMODAL_SIDE)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_set: mode %u (TIDAL_BIMODAL_ALL or TIDAL_BIMODAL_SIDE)",
                           mode);
    tidal__lock();
    NEED_INIT("tidal_bimodal_set");
    tidal__call saved = tidal__ctx_enter();
    uint32_t word = mode;
    int st = tidal__ctl_write(t->desc + offsetof(tidal_bimodal_desc, mode), &word, sizeof word,
                              "cuMemcpyHtoDAsync(bimodal mode)");
    if (!st) t->h.mode = mode;
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

int tidal_bimodal_desc_addr(const tidal_bimodal *t, uint64_t *dev)
{
    if (!t || !dev) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_desc_addr: NULL");
    *dev = t->desc;
    return TIDAL_OK;
}

int tidal_bimodal_desc_get(const tidal_bimodal *t, tidal_bimodal_desc *out)
{
    if (!t || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_desc_get: NULL");
    tidal__lock(); /* the mode may be changing on another thread */
    *out = t->h;
    tidal__unlock();
    return TIDAL_OK;
}

int tidal_bimodal_destroy(tidal_bimodal *t)
{
    if (!t) return tidal__fail(TIDAL_ERR_INVALID, "tidal_bimodal_destroy: NULL");
    tidal__lock();
    NEED_INIT("tidal_bimodal_destroy");
    tidal__call saved = tidal__ctx_enter();
    tidal__cu()->StreamSynchronize(tidal__ctl_stream());
    release(t);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return TIDAL_OK;
}
