/* l2addr.c — the runtime side of tidal-opt's l2addr pass (docs/design.md §2 "The l2addr
 * pass"): a translated pointer parameter reads its layout from a module word
 * __tidal_l2addr_p<N>_<KERNEL> (a tidal_l2addr_slot, abi/tidal_l2.h); this fills it from a
 * tidal_l2mem and a side, or clears it. The word is published the way a partition's mask
 * is (tidal__ctl_write), so kernels launched after the call returns translate with it. */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "tidal_l2.h"

static int attach_locked(CUmodule mod, const char *kernel, unsigned param, const tidal_l2mem *m, unsigned side,
                         uint64_t *base)
{
    char name[512];
    int n = snprintf(name, sizeof name, TIDAL_L2ADDR_SYMBOL_FMT, param, kernel);
    if (n < 0 || (size_t)n >= sizeof name)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2addr_attach: kernel name of %zu bytes", strlen(kernel));
    tidal_l2addr_slot slot;
    memset(&slot, 0, sizeof slot);
    if (m) {
        int st = tidal_l2mem_layout(m, &slot.l2);
        if (st) return st;
        slot.side = side;
    }
    CUdeviceptr word = 0;
    size_t bytes = 0;
    CUresult r = tidal__cu()->ModuleGetGlobal(&word, &bytes, mod, name);
    if (r == CUDA_ERROR_NOT_FOUND)
        return tidal__fail(TIDAL_ERR_NOT_REWRITTEN,
                           "tidal_l2addr_attach: the module has no %s: parameter %u of %s was not translated "
                           "(tidal-opt -p l2addr --l2addr %s:%u, and see its report)",
                           name, param, kernel, kernel, param);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuModuleGetGlobal(l2addr word)");
    if (bytes != sizeof slot)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2addr_attach: %s is %zu bytes, not %zu (another tidal's pass?)",
                           name, bytes, sizeof slot);
    int st = tidal__ctl_write(word, &slot, sizeof slot, "cuMemcpyHtoDAsync(l2addr word)");
    if (st) return st;
    if (base) *base = slot.l2.base;
    tidal__log("l2addr: %s:%u %s", kernel, param, m ? (side ? "side 1's half" : "side 0's half") : "untranslated");
    return TIDAL_OK;
}

int tidal_l2addr_attach(void *module, const char *kernel, unsigned param, const tidal_l2mem *m, unsigned side,
                        uint64_t *base)
{
    if (base) *base = 0;
    if (!module || !kernel || !*kernel)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2addr_attach: NULL module or kernel name");
    if (m && side > 1) return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2addr_attach: side %u (0 or 1)", side);
    tidal__lock();
    NEED_INIT("tidal_l2addr_attach");
    tidal__call saved = tidal__ctx_enter();
    int st = attach_locked((CUmodule)module, kernel, param, m, side, base);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}
