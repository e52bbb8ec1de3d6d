/* bench/vram/bimodal.cu -- what a bimodal tensor buys (issue 13 build item 3, SGDRC's two
 * copies of a memory-bound BE tensor): BE streams one copy or the other, chosen by the
 * tensor's live mode, next to an LS latency probe on the other L2 side.
 *
 * BE: 1024-thread blocks (2 per SM) streaming a 256 MiB tidal_bimodal tensor whose side copy
 * is homed on side 1; every warp reads the mode once per 16 blocks of 4 KiB (a chunk) and
 * streams the copy it names. LS: l2mem_iso's probe, one thread on two side-0 SMs reading
 * 2048 lines of the side-0 half of its own tidal_l2mem (DRAM latency after a flush). Phases:
 *   a  LS idle,   BE on every SM,        mode ALL  (what BE has while LS sleeps)
 *   b  LS active, BE on side 1's SMs,    mode SIDE (LS active: BE leaves LS's SMs and memory side)
 *   c  LS active, BE on side 1's SMs,    mode ALL  (the same without a bimodal tensor)
 *   d  LS idle,   BE on every SM,        mode SIDE (the side copy kept while LS sleeps: what
 *                                                   a single-copy colored tensor costs BE)
 * BE is confined by tidal partitions along the sides (green-context streams, as l2mem_iso),
 * the mode is switched with tidal_bimodal_set before each phase. Each phase 3 times, BE for
 * at least 20 ms a run; one CSV line a run, a table, and a PHASE line per phase (medians).
 *
 *   nvcc -O2 -arch=sm_90 -I runtime -I abi bimodal.cu -L LIBDIR -ltidal -lcuda -o bimodal
 *   bimodal OUT.csv            (bench/vram/bimodal.sh builds libtidal and runs it) */
#include "l2_bench.cuh"

static const size_t BE_BYTES = (size_t)256 << 20; /* each copy: 4x the L2 */
static const size_t LS_BYTES = (size_t)64 << 20;  /* LS reads 3 x 2048 lines 4 KiB + 128 B apart */
static const unsigned NLS = 2048;
static const double BE_MS = 20;

/* A bimodal tensor as a stream source: the descriptor copied once (only its mode changes),
 * the mode re-read at the start of every chunk of 16 blocks. */
struct Bimodal {
    const tidal_bimodal_desc *dev;
    tidal_bimodal_desc d;
    unsigned mode;
    __device__ void chunk(unsigned long long i)
    {
        if (i % 16 == 0) mode = tidal_bimodal_mode(dev);
    }
    __device__ unsigned long long addr(unsigned long long o) const { return tidal_bimodal_addr(&d, mode, o); }
};

__global__ void be_bimodal(const tidal_bimodal_desc *dev, volatile unsigned *stop, unsigned *started,
                           unsigned long long *bytes)
{
    Bimodal src = {dev, *dev, 0};
    stream_blocks(src, src.d.size, stop, started, bytes);
}

static unsigned median_u(std::vector<unsigned> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static double median_d(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    unsigned nsm;
    tidal_smset s0, s1, all;
    const char *csv_path = bench_start(argc, argv, &nsm, &s0, &s1);
    // LS: the two lowest SMs of side 0 (a TPC); BE: side 1 while LS is active, else every SM
    tidal_smset rest, ls = ls_sms(s0, nsm, &rest);
    for (int w = 0; w < 4; w++) all.bits[w] = s0.bits[w] | s1.bits[w];
    printf("sides: %s | %s; LS on %s\n", fmt(s0).c_str(), fmt(s1).c_str(), fmt(ls).c_str());
    cudaStream_t sls = part_stream("ls", ls, -1), sside1 = part_stream("be-side1", s1, 0),
                 sall = part_stream("be-all", all, 0);
    // LS's data: the side-0 half of its own tidal_l2mem; BE's: a bimodal tensor, side copy on 1
    tidal_l2mem *mls;
    TK(tidal_l2mem_create(LS_BYTES, &mls));
    tidal_l2_layout Lls;
    TK(tidal_l2mem_layout(mls, &Lls));
    Data lsd = {Lls, 0};
    tidal_bimodal *t;
    step("bimodal create");
    TK(tidal_bimodal_create(BE_BYTES, 1, &t));
    uint64_t dv;
    TK(tidal_bimodal_desc_addr(t, &dv));
    const tidal_bimodal_desc *desc = (const tidal_bimodal_desc *)(uintptr_t)dv;
    {
        std::vector<unsigned> host(BE_BYTES / 4);
        for (size_t w = 0; w < host.size(); w++) host[w] = (unsigned)w * 2654435761u;
        step("bimodal write");
        TK(tidal_bimodal_write(t, 0, host.data(), BE_BYTES));
    }
    tidal_bimodal_desc h;
    TK(tidal_bimodal_desc_get(t, &h));
    printf("BE tensor: %zu MiB a copy, the side copy on side %u (block-index mask 0x%x, %u granules)\n",
           BE_BYTES >> 20, h.side, h.l2.mask, h.l2.granules);
    Runner R(nsm, NLS);
    auto be = [desc](cudaStream_t st, unsigned blocks, unsigned *stop, unsigned *started, unsigned long long *bytes) {
        be_bimodal<<<blocks, 1024, 0, st>>>(desc, stop, started, bytes);
    };
    struct Phase {
        const char *name, *ls, *sms, *mode;
        bool ls_active;
        cudaStream_t bes;
        const tidal_smset *besms;
        unsigned bimodal_mode;
    } phases[] = {
        {"a", "idle", "all", "all", false, sall, &all, TIDAL_BIMODAL_ALL},
        {"b", "active", "side1", "side", true, sside1, &s1, TIDAL_BIMODAL_SIDE},
        {"c", "active", "side1", "all", true, sside1, &s1, TIDAL_BIMODAL_ALL},
        {"d", "idle", "all", "side", false, sall, &all, TIDAL_BIMODAL_SIDE},
    };
    const int NPH = sizeof phases / sizeof phases[0], REPS = 3;
    FILE *csv = fopen(csv_path, "w");
    if (!csv) {
        perror(csv_path);
        return 1;
    }
    fprintf(csv, "phase,ls,be_sms,mode,rep,ls_median,ls_p90,ls_p99,be_gbs\n");
    printf("| phase | LS | BE SMs | mode | LS median | LS p90 | LS p99 | BE GB/s |\n|---|---|---|---|---|---|---|---|\n");
    std::vector<unsigned> med[NPH], p99[NPH];
    std::vector<double> gbs[NPH];
    for (int rep = 0; rep < REPS; rep++)
        for (int i = 0; i < NPH; i++) {
            const Phase &p = phases[i];
            step("bimodal set");
            TK(tidal_bimodal_set(t, p.bimodal_mode));
            unsigned be_blocks = 2 * tidal_smset_count(p.besms);
            RunResult r = R.run(p.bes, be_blocks, be, p.ls_active ? sls : nullptr, lsd, (unsigned)rep * NLS, BE_MS);
            fprintf(csv, "%s,%s,%s,%s,%d,%u,%u,%u,%.1f\n", p.name, p.ls, p.sms, p.mode, rep, r.median, r.p90, r.p99,
                    r.gbs);
            printf("| %s | %s | %s | %s | %u | %u | %u | %.1f |\n", p.name, p.ls, p.sms, p.mode, r.median, r.p90, r.p99,
                   r.gbs);
            fflush(stdout);
            med[i].push_back(r.median);
            p99[i].push_back(r.p99);
            gbs[i].push_back(r.gbs);
        }
    fclose(csv);
    // one line a phase, medians of the runs: bimodal.sh and the docs quote these
    for (int i = 0; i < NPH; i++) {
        const Phase &p = phases[i];
        char lsn[64] = "ls_median=- ls_p99=-";
        if (p.ls_active) snprintf(lsn, sizeof lsn, "ls_median=%u ls_p99=%u", median_u(med[i]), median_u(p99[i]));
        printf("PHASE %s ls=%s be_sms=%s(%u) mode=%s be_gbs=%.1f %s\n", p.name, p.ls, p.sms,
               tidal_smset_count(p.besms), p.mode, median_d(gbs[i]), lsn);
    }
    TK(tidal_bimodal_destroy(t));
    TK(tidal_l2mem_destroy(mls));
    return 0;
}
