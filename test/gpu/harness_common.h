// test/gpu/harness_common.h -- host-side pieces of the ABI v4 launch cases that
// harness.cu and tvm/run_tvm.cu share: the test partitions' slot layout, how a clone
// launch of each mode is planned (workers, chunk, base, flags, as libtidal would), the
// host's epoch bookkeeping, and the check of the slot table after a launch. Header only,
// no CUDA calls (the callers own the device memory); needs abi/tidal_abi.h on the path.
//
// Launch cases (abi/tidal_abi.h):
//   a          the rewritten entry, original grid, __tidal_ctl = 0: the verbatim body
//   b          the rewritten entry, original grid, __tidal_ctl -> partition: probe mode
//              (slot by %gridid, reset by the last block); >= 2^24 blocks: the original body
//   c-probe    the clone, flags PROBE (key 0: the tag is %gridid), reset at the end
//   c-epoch    the clone in epoch mode: the host names the slot and gives epoch = last + 1;
//              dynamic tickets from 0; the slot is never reset
//   c-static1  STATIC, chunk chosen so that the workers cover the grid (one wave: no slot
//              memory is touched at all)
//   c-static   STATIC with dynamic tickets after the workers' own chunks (base = workers *
//              chunk < total)
// Every clone launch gets TIDAL_CLONE_SMEM(d) bytes of dynamic shared memory for a launch of
// d and tidal_launch.sh_off = TIDAL_SH_OFFSET(d): its protocol words follow the kernel's own.
#ifndef TIDAL_HARNESS_COMMON_H
#define TIDAL_HARNESS_COMMON_H

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tidal_abi.h"

static_assert(TIDAL_ABI_VERSION == 5, "these helpers speak ABI v5");
static_assert(sizeof(tidal_launch) == TIDAL_LAUNCH_BYTES && TIDAL_LAUNCH_BYTES == 64, "launch layout");
static_assert(sizeof(tidal_slot) == TIDAL_SLOT_BYTES, "slot layout");
static_assert(sizeof(tidal_partition) == TIDAL_PARTITION_HEADER, "partition layout");
static_assert(offsetof(tidal_partition, violations) == TIDAL_PARTITION_OFF_VIOLATIONS, "abi");
static_assert(offsetof(tidal_partition, exec_count) == TIDAL_PARTITION_OFF_EXEC_COUNT, "abi");
static_assert(offsetof(tidal_partition, sm_blocks) == TIDAL_PARTITION_OFF_SM_BLOCKS, "abi");
static_assert(offsetof(tidal_partition, slot_mask) == TIDAL_PARTITION_OFF_SLOT_MASK, "abi");
static_assert(offsetof(tidal_slot, claim) == TIDAL_SLOT_OFF_CLAIM, "abi");
static_assert(offsetof(tidal_slot, guard) == TIDAL_SLOT_OFF_GUARD, "abi");
static_assert(offsetof(tidal_slot, shards_done) == TIDAL_SLOT_OFF_SHARDS_DONE, "abi");
static_assert(offsetof(tidal_launch, chunk) == TIDAL_LAUNCH_OFF_CHUNK, "abi");
static_assert(offsetof(tidal_launch, slot) == TIDAL_LAUNCH_OFF_SLOT, "abi");
static_assert(offsetof(tidal_launch, epoch) == TIDAL_LAUNCH_OFF_EPOCH, "abi");
static_assert(offsetof(tidal_launch, flags) == TIDAL_LAUNCH_OFF_FLAGS, "abi");
static_assert(offsetof(tidal_launch, base) == TIDAL_LAUNCH_OFF_BASE, "abi");
static_assert(offsetof(tidal_launch, key) == TIDAL_LAUNCH_OFF_KEY, "abi");
static_assert(offsetof(tidal_launch, sh_off) == TIDAL_LAUNCH_OFF_SH_OFF, "abi");

namespace th
{

// ---------------------------------------------------------------- the slot table
// NPROBE probe slots (searched by probe-mode launches: case b, c-probe) and NEPOCH slots
// that the host hands to "streams" (epoch mode), each tagged TIDAL_SLOT_RESERVED once.
// Where the header has probe_base, the epoch slots come first and the probe range
// starts at probe_base = NEPOCH (so a probe search that ignored probe_base would land on
// an epoch slot and show); otherwise the epoch slots follow the probe range, which a
// probe search (slot_mask + 1 slots from 0) never reaches.
constexpr uint32_t NPROBE = 16, NEPOCH = 2, NSLOTS = NPROBE + NEPOCH;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
constexpr uint32_t PROBE_FIRST = NEPOCH, EPOCH_FIRST = 0;
#else
constexpr uint32_t PROBE_FIRST = 0, EPOCH_FIRST = NPROBE;
#endif
constexpr uint32_t E_MAIN = 0; // epoch slot of the ordinary c-epoch / c-static runs (and join)
constexpr uint32_t E_WRAP = 1; // epoch slot of the wrap check
inline uint32_t epoch_slot_index(uint32_t k) { return EPOCH_FIRST + k; }
inline bool is_epoch_index(uint32_t index) { return index - EPOCH_FIRST < NEPOCH; } // unsigned wrap below EPOCH_FIRST
inline uint64_t slot_offset(uint32_t index) { return TIDAL_PARTITION_HEADER + (uint64_t)index * TIDAL_SLOT_BYTES; }
inline uint64_t partition_bytes() { return TIDAL_PARTITION_BYTES(NSLOTS); }

inline void header_init(tidal_partition *p, const uint64_t mask[4], uint64_t exec_count, uint64_t sm_blocks)
{
    memset(p, 0, sizeof *p);
    memcpy(p->mask, mask, sizeof p->mask);
    p->exec_count = exec_count;
    p->sm_blocks = sm_blocks;
    p->slot_mask = NPROBE - 1;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
    p->probe_base = PROBE_FIRST;
#endif
}

// A fresh epoch slot: all zero but the tag.
inline void epoch_slot_init(tidal_slot *s)
{
    memset(s, 0, sizeof *s);
    s->tag = TIDAL_SLOT_RESERVED;
}

// The host's epoch of each epoch slot: epoch = one more than the slot's last launch;
// before it would pass TIDAL_EPOCH_MASK the caller must zero the slot's claim and guard
// words (needs_reset) and the sequence restarts at 1.
struct Epochs {
    uint32_t last[NEPOCH] = {};
    bool needs_reset(uint32_t k) const { return last[k] >= TIDAL_EPOCH_MASK; }
    // call after the reset when needs_reset(k)
    uint32_t take(uint32_t k)
    {
        if (last[k] >= TIDAL_EPOCH_MASK) last[k] = 0;
        return ++last[k];
    }
};

// ---------------------------------------------------------------- planning a clone launch
inline uint32_t clamp_chunk(uint64_t c)
{
    return (uint32_t)std::min<uint64_t>(TIDAL_MAX_CHUNK, std::max<uint64_t>(1, c));
}
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

enum CloneMode {
    C_PROBE,        // PROBE, dynamic: workers = occ x allowed SMs
    C_EPOCH,        // epoch mode, dynamic: workers = occ x all SMs (libtidal's choice), chunk from the allowed SMs
    C_STATIC1,      // epoch mode, STATIC, chunk so that the workers cover the grid when they can
    C_STATIC,       // epoch mode, STATIC with dynamic tickets after the own chunks
    C_PROBE_STATIC, // PROBE + STATIC with dynamic tickets (a graph-captured clone in a green context)
    C_STATIC_FIRST, // as C_STATIC, each worker's own chunk (first) about 3/4 of the grid / workers: larger
                    // than the tickets (libtidal's choice for a measured long kernel)
    C_NOHIST,       // as C_EPOCH without HIST / EXEC: exec_count and sm_blocks stay untouched
};

struct Plan {
    unsigned workers = 1; // the physical grid (x)
    tidal_launch tl{};
    bool halved = false; // C_STATIC: the grid was one wave at occ x SMs; workers halved for tickets
    bool probe() const { return tl.flags & TIDAL_LAUNCH_PROBE; }
    bool is_static() const { return tl.flags & TIDAL_LAUNCH_STATIC; }
    uint64_t total() const { return (uint64_t)tl.grid[0] * tl.grid[1] * tl.grid[2]; }
    bool dynamic_work() const { return !is_static() || (uint64_t)tl.base < total(); }
    // epoch mode and the launch touches slot memory (not a covering STATIC launch)
    bool touches_epoch_slot() const { return !probe() && dynamic_work(); }
    // logical blocks a worker may run on an SM outside a fixed mask without the guard:
    // STATIC: its own chunk, and the one chunk it claims when it arrives
    uint64_t outside_allowance() const
    {
        if (!is_static()) return 0;
        uint64_t a = tl.base + (dynamic_work() ? (uint64_t)workers * tl.chunk : 0);
        return std::min<uint64_t>(a, total());
    }
    // an empty mask must raise violations (the guard keeps a worker): dynamic modes always;
    // STATIC when the one claim per arriving worker cannot finish the tickets
    bool empty_mask_needs_violation() const
    {
        if (!is_static()) return true;
        return dynamic_work() && total() - tl.base > (uint64_t)workers * tl.chunk;
    }
    std::string describe() const
    {
        char b[256];
        snprintf(b, sizeof b, "workers %u chunk %u first %u base %u flags %u", workers, tl.chunk, tl.first, tl.base,
                 tl.flags);
        std::string s = b;
        if (!probe()) s += " slot " + std::to_string(tl.slot) + " epoch " + std::to_string(tl.epoch);
        if (is_static()) s += dynamic_work() ? " (static + tickets)" : " (one wave: no slot memory)";
        if (halved) s += " (workers halved: one wave at occ x SMs)";
        return s;
    }
};

// occ: clone occupancy per SM; nsm: SMs of the device; allowed: SMs the mask allows (for a
// live-flip run: nsm); partition: device pointer or 0 (__tidal_ctl); slot: epoch slot index
// in the table (epoch modes); epoch: the host's next epoch for it.
inline Plan plan_clone(CloneMode m, int occ, int nsm, int allowed, const unsigned grid[3], uint64_t partition,
                       uint32_t slot, uint32_t epoch)
{
    Plan p;
    const uint64_t logical = (uint64_t)grid[0] * grid[1] * grid[2];
    const uint64_t o = (uint64_t)std::max(occ, 1), S = (uint64_t)std::max(allowed, 1);
    tidal_launch &tl = p.tl;
    memset(&tl, 0, sizeof tl);
    tl.partition = partition;
    tl.grid[0] = grid[0];
    tl.grid[1] = grid[1];
    tl.grid[2] = grid[2];
    const uint32_t rec = TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC;
    uint64_t workers = 1;
    switch (m) {
    case C_PROBE:
        workers = o * (uint64_t)std::max(allowed, 0);
        if (workers < 1) workers = 1;
        tl.chunk = clamp_chunk(logical / (workers * 8));
        tl.flags = TIDAL_LAUNCH_PROBE | rec;
        break;
    case C_EPOCH:
    case C_NOHIST:
        workers = std::min<uint64_t>(o * (uint64_t)std::max(nsm, 1), logical);
        tl.chunk = clamp_chunk(logical / (o * S * 8));
        tl.flags = m == C_NOHIST ? 0 : rec;
        break;
    case C_STATIC1: {
        tl.chunk = clamp_chunk(ceil_div(logical, o * S));
        workers = std::min<uint64_t>(o * S, ceil_div(logical, tl.chunk));
        tl.flags = TIDAL_LAUNCH_STATIC | rec;
        break;
    }
    case C_STATIC:
    case C_STATIC_FIRST:
    case C_PROBE_STATIC: {
        tl.chunk = clamp_chunk(logical / (o * S * 8));
        uint64_t cover = ceil_div(logical, tl.chunk);
        workers = std::min<uint64_t>(o * S, cover);
        if (workers >= cover && cover > 1) {
            workers = cover / 2;
            p.halved = true;
        }
        tl.flags = TIDAL_LAUNCH_STATIC | rec | (m == C_PROBE_STATIC ? TIDAL_LAUNCH_PROBE : 0);
        if (m == C_STATIC_FIRST && workers >= 1) {
            uint64_t first = std::max<uint64_t>(tl.chunk, logical * 3 / 4 / workers);
            if (workers * first < logical) tl.first = (uint32_t)first; // else no tickets: C_STATIC's
        }
        break;
    }
    }
    if (workers < 1) workers = 1;
    p.workers = (unsigned)workers;
    // exactly phys x (own chunk); tidal_launch.first below chunk means chunk (abi/tidal_abi.h)
    if (tl.flags & TIDAL_LAUNCH_STATIC) tl.base = (uint32_t)(workers * std::max(tl.chunk, tl.first));
    if (!(tl.flags & TIDAL_LAUNCH_PROBE)) {
        tl.slot = slot;
        tl.epoch = epoch;
    }
    return p;
}

// ---------------------------------------------------------------- the slot table after a launch
// What the launch did to the epoch slots: slot < 0: nothing (b, c-probe, a covering
// STATIC launch: every epoch slot must be byte-identical to before).
struct SlotUse {
    int slot = -1; // table index of the epoch slot the launch used, if it touched it
    uint32_t epoch = 0;
    uint64_t total = 0, base = 0, chunk = 1;
    uint64_t phys = 0;        // owner workers
    uint64_t joiner_phys = 0; // blocks of JOIN grids launched with it
};

inline std::string slot_words(const tidal_slot &s)
{
    char b[200];
    snprintf(b, sizeof b, "{tag 0x%" PRIx64 ", claim 0x%016" PRIx64 ", guard 0x%016" PRIx64 ", shards_done %u}", s.tag,
             s.claim, s.guard, s.shards_done);
    return b;
}

inline bool all_zero(const void *p, size_t n, size_t from = 0, size_t *first = nullptr)
{
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = from; i < n; i++)
        if (b[i]) {
            if (first) *first = i;
            return false;
        }
    return true;
}

// The state an epoch-mode launch must leave in its slot (abi/tidal_abi.h): the tag as
// the host wrote it; claim: epoch field == epoch, no joiner inside, next a multiple of the
// chunk, at least the tickets (total - base, rounded up to chunks) and at most one
// overshooting claim per owner worker and joiner block more; guard: epoch field == epoch,
// every owner worker arrived, no more working than workers; the rest of the slot zero.
inline std::string check_epoch_state(const tidal_slot &s, const SlotUse &u)
{
    std::string w;
    char b[320];
    const uint64_t c = s.claim, g = s.guard;
    const uint64_t ce = c >> TIDAL_EPOCH_SHIFT, ge = g >> TIDAL_EPOCH_SHIFT;
    const uint64_t next = c & TIDAL_CLAIM_NEXT_MASK,
                   joiners = (c >> TIDAL_CLAIM_JOINER_SHIFT) & TIDAL_CLAIM_JOINER_MASK;
    const uint64_t arrived = (g >> TIDAL_GUARD_ARRIVED_SHIFT) & TIDAL_GUARD_ACTIVE_MASK,
                   active = g & TIDAL_GUARD_ACTIVE_MASK;
    const uint64_t need = u.total - u.base, lo = ceil_div(need, u.chunk) * u.chunk,
                   hi = lo + (u.phys + u.joiner_phys) * u.chunk;
    if (s.tag != TIDAL_SLOT_RESERVED) {
        snprintf(b, sizeof b, "tag 0x%" PRIx64 " (want TIDAL_SLOT_RESERVED); ", s.tag);
        w += b;
    }
    if (ce != u.epoch) {
        snprintf(b, sizeof b, "claim epoch %" PRIu64 ", want %u; ", ce, u.epoch);
        w += b;
    }
    if (joiners) {
        snprintf(b, sizeof b, "claim says %" PRIu64 " joiners still inside; ", joiners);
        w += b;
    }
    if (next % u.chunk || next < lo || next > hi) {
        snprintf(b, sizeof b, "claim next %" PRIu64 ", want a multiple of %" PRIu64 " in [%" PRIu64 ", %" PRIu64 "]; ",
                 next, u.chunk, lo, hi);
        w += b;
    }
    if (ge != u.epoch) {
        snprintf(b, sizeof b, "guard epoch %" PRIu64 ", want %u; ", ge, u.epoch);
        w += b;
    }
    if (arrived != u.phys) {
        snprintf(b, sizeof b, "guard: %" PRIu64 " workers arrived, want %" PRIu64 "; ", arrived, u.phys);
        w += b;
    }
    if (active > u.phys) {
        snprintf(b, sizeof b, "guard: %" PRIu64 " working > %" PRIu64 " workers; ", active, u.phys);
        w += b;
    }
    size_t first = 0;
    if (!all_zero(&s, sizeof s, TIDAL_SLOT_OFF_SHARDS_DONE, &first)) {
        snprintf(b, sizeof b, "non-zero byte at offset %zu (probe-mode fields in an epoch slot); ", first);
        w += b;
    }
    return w;
}

// before/after: the whole table (NSLOTS). Returns "" when the table is as it must be;
// *repair gets the table indices to put back (probe slots: zero; epoch slots: init).
inline std::string check_slots(const std::vector<tidal_slot> &before, const std::vector<tidal_slot> &after,
                               const SlotUse &u, std::vector<uint32_t> *repair)
{
    std::string w;
    for (uint32_t i = PROBE_FIRST; i < PROBE_FIRST + NPROBE; i++) {
        size_t first = 0;
        if (all_zero(&after[i], sizeof after[i], 0, &first)) continue;
        if (repair->empty() || w.find("probe slot") == std::string::npos)
            w += "probe slot " + std::to_string(i) + " not reset after the launch (first non-zero byte at " +
                 std::to_string(first) + ") " + slot_words(after[i]) + "; ";
        repair->push_back(i);
    }
    for (uint32_t k = 0; k < NEPOCH; k++) {
        const uint32_t i = epoch_slot_index(k);
        std::string e;
        if ((int)i == u.slot)
            e = check_epoch_state(after[i], u);
        else if (memcmp(&before[i], &after[i], sizeof after[i]))
            e = "changed by a launch that must not touch it: " + slot_words(before[i]) + " -> " + slot_words(after[i]) +
                "; ";
        if (e.empty()) continue;
        w += "epoch slot " + std::to_string(i) + ": " + e;
        repair->push_back(i);
    }
    return w;
}

} // namespace th

#endif
