/* bench/vram/l2mem_iso.cu -- the isolation benchmark of issue 13 on libtidal's own parts:
 * memory homed on one L2 side (tidal_l2mem) and SM partitions along the sides
 * (tidal_l2_sides, tidal_partition_stream).
 *
 * LS: one thread on a partition of two side-0 SMs reads 2048 lines once each (DRAM latency,
 * cycles: the L2 is flushed before every run), from its data: the side-0 half of a
 * tidal_l2mem (colored) or a cudaMalloc buffer (uncolored). BE: 1024-thread blocks streaming
 * their data: the side-1 half of another tidal_l2mem (colored) or a cudaMalloc buffer, on a
 * partition of the other side's SMs or of every SM but LS's. Every configuration 3 times;
 * one CSV line each, and a table.
 *
 *   nvcc -O2 -arch=sm_90 -I runtime -I abi l2mem_iso.cu -L LIBDIR -ltidal -lcuda -o l2mem_iso
 *   l2mem_iso OUT.csv          (bench/vram/l2mem_iso.sh builds libtidal and runs it) */
#include "l2_bench.cuh"

static const size_t PER_SIDE = (size_t)256 << 20; /* per half: BE streams 256 MiB, 4x the L2 */
static const unsigned NLS = 2048;

/* BE: every warp streams d's 4 KiB blocks until *stop (l2_bench.cuh). */
__global__ void be_stream(Data d, unsigned long long bytes_total, volatile unsigned *stop, unsigned *started,
                          unsigned long long *bytes)
{
    stream_blocks(d, bytes_total, stop, started, bytes);
}

int main(int argc, char **argv)
{
    unsigned nsm;
    tidal_smset s0, s1;
    const char *csv_path = bench_start(argc, argv, &nsm, &s0, &s1);
    // LS: the two lowest SMs of side 0 (a TPC); BE: side 1, or every SM but LS's
    tidal_smset rest, ls = ls_sms(s0, nsm, &rest);
    printf("sides: %s | %s; LS on %s\n", fmt(s0).c_str(), fmt(s1).c_str(), fmt(ls).c_str());
    cudaStream_t sls = part_stream("ls", ls, -1), sside1 = part_stream("be-side1", s1, 0),
                 srest = part_stream("be-rest", rest, 0);
    // data: LS's and BE's colored halves (two tidal_l2mem: LS uses side 0 of one, BE side 1
    // of the other), and plain buffers of the same sizes
    tidal_l2mem *mls, *mbe;
    TK(tidal_l2mem_create(PER_SIDE, &mls));
    TK(tidal_l2mem_create(PER_SIDE, &mbe));
    tidal_l2_layout Lls, Lbe;
    TK(tidal_l2mem_layout(mls, &Lls));
    TK(tidal_l2mem_layout(mbe, &Lbe));
    char *pl, *pb;
    RK(cudaMalloc(&pl, PER_SIDE));
    RK(cudaMalloc(&pb, PER_SIDE));
    RK(cudaMemset(pl, 1, PER_SIDE));
    RK(cudaMemset(pb, 2, PER_SIDE));
    Data ls_col = {Lls, 0}, be_col = {Lbe, 1};
    Data ls_plain = plain_data(pl), be_plain = plain_data(pb);
    Runner R(nsm, NLS);
    struct Cfg {
        const char *ls, *be, *sms;
        Data lsd, bed;
        cudaStream_t bes;
        tidal_smset *besms;
    } cfgs[] = {
        {"side0-half", "none", "-", ls_col, be_col, nullptr, nullptr},
        {"plain", "none", "-", ls_plain, be_plain, nullptr, nullptr},
        {"side0-half", "side1-half", "side1", ls_col, be_col, sside1, &s1},
        {"plain", "plain", "side1", ls_plain, be_plain, sside1, &s1},
        {"side0-half", "side1-half", "all-but-ls", ls_col, be_col, srest, &rest},
        {"plain", "plain", "all-but-ls", ls_plain, be_plain, srest, &rest},
    };
    FILE *csv = fopen(csv_path, "w");
    if (!csv) {
        perror(csv_path);
        return 1;
    }
    fprintf(csv, "ls_data,be_data,be_sms,rep,ls_median,ls_p90,ls_p99,be_gbs\n");
    printf("| LS data | BE data | BE SMs | LS median | LS p90 | LS p99 | BE GB/s |\n|---|---|---|---|---|---|---|\n");
    for (int rep = 0; rep < 3; rep++)
        for (const Cfg &c : cfgs) {
            const Data bed = c.bed;
            auto be = [bed](cudaStream_t st, unsigned blocks, unsigned *stop, unsigned *started,
                            unsigned long long *bytes) {
                be_stream<<<blocks, 1024, 0, st>>>(bed, PER_SIDE, stop, started, bytes);
            };
            unsigned be_blocks = c.bes ? 2 * tidal_smset_count(c.besms) : 0;
            RunResult r = R.run(c.bes, be_blocks, be, sls, c.lsd, (unsigned)rep * NLS, 0);
            fprintf(csv, "%s,%s,%s,%d,%u,%u,%u,%.1f\n", c.ls, c.be, c.sms, rep, r.median, r.p90, r.p99, r.gbs);
            printf("| %s | %s | %s | %u | %u | %u | %.1f |\n", c.ls, c.be, c.sms, r.median, r.p90, r.p99, r.gbs);
            fflush(stdout);
        }
    fclose(csv);
    TK(tidal_l2mem_destroy(mls));
    TK(tidal_l2mem_destroy(mbe));
    return 0;
}
