// repro.cu -- runs the hand-written repros of repro_kernels.cu (tidal's clone structure
// without tidal) for test/gpu/sanitize.sh. Driver API, host code only, like harness.cu.
//
//   repro KERNELS.ptx [--tool] NAME...     NAME: rc_counted_orig, ..., or "all"
//
// Each repro runs once on fixed inputs and its output is compared with a host reference.
// One line per repro: "PASS NAME: ...", "FAIL NAME: ..." for repros whose output is defined
// (race-free), "INFO NAME: ..." for the ones that are not (rc_race_persist, the
// rc_unbalanced pair), and with --tool (under compute-sanitizer, where the tool's verdict is
// what counts) always INFO. Last line "N passed, N failed"; exit 1 if anything failed.
// Persistent repros: one worker per SM, chunks of 2, 4 logical blocks per worker (the first
// chunk static, the rest from tickets); *_orig: one CTA per logical block, the same count.
#include <cuda.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum Body { COUNTED, WARPSPEC, CONTROL, UNBALANCED };
struct Repro {
    const char *name;
    Body body;
    bool persist;
    bool defined;      // race-free: the output must equal the reference
    const char *what;
};
const Repro REPROS[] = {
    {"rc_counted_orig", COUNTED, false, true, "shape (i), one CTA per logical block"},
    {"rc_counted_persist", COUNTED, true, true, "shape (i) in the clone's loop, tidal's barrier 0"},
    {"rc_warpspec_orig", WARPSPEC, false, true, "shape (ii), one CTA per logical block"},
    {"rc_warpspec_persist", WARPSPEC, true, true, "shape (ii) in the clone's loop, tidal's barrier 0"},
    {"rc_control_persist", CONTROL, true, true, "__syncthreads body in the clone's loop, tidal's barrier 1"},
    {"rc_race_persist", CONTROL, true, false, "the control without the barrier between logical blocks (a real race)"},
    {"rc_unbalanced_orig", UNBALANCED, false, false, "barrier 3 left half arrived at the CTA's end"},
    {"rc_unbalanced_persist", UNBALANCED, true, false, "the same in a persistent loop: arrivals carried over"},
};
const uint32_t POISON = 0xA5C3E17Bu;

std::string err_name(CUresult r)
{
    const char *n = nullptr;
    cuGetErrorName(r, &n);
    return n ? n : "?";
}

#define CK(call)                                                                                                   \
    do {                                                                                                           \
        CUresult r_ = (call);                                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                                  \
            fprintf(stderr, "%s: %s\n", #call, err_name(r_).c_str());                                              \
            return false;                                                                                          \
        }                                                                                                          \
    } while (0)

// Host references (uint32 arithmetic: the device's int wraps the same way).
void reference(Body body, unsigned total, const std::vector<int32_t> &in, std::vector<uint32_t> *out, size_t *words)
{
    auto I = [&](size_t i) { return (uint32_t)in[i]; };
    switch (body) {
    case COUNTED:
        *words = (size_t)total * 129;
        out->assign(*words, 0);
        for (unsigned b = 0; b < total; b++) {
            uint32_t s[128], acc = 0;
            for (int j = 0; j < 128; j++) s[j] = I(b * 128 + j) * 3 + b;
            for (int t = 0; t < 128; t++) (*out)[b * 129 + 1 + t] = s[127 - t] ^ (uint32_t)t;
            for (int j = 0; j < 128; j++) acc = acc * 31 + s[j];
            (*out)[b * 129] = acc;
        }
        break;
    case WARPSPEC:
        *words = (size_t)total * 256;
        out->assign(*words, 0);
        for (unsigned b = 0; b < total; b++) {
            uint32_t buf[128], reply[128];
            for (int t = 0; t < 128; t++) buf[t] = I(b * 128 + t) * 7 + b;
            for (int c = 0; c < 128; c++) {
                reply[c] = buf[(c * 3) & 127] ^ buf[127 - c];
                (*out)[b * 256 + 128 + c] = reply[c] + buf[(c + 1) & 127];
            }
            for (int t = 0; t < 128; t++) (*out)[b * 256 + t] = reply[(t + 5) & 127] - buf[t];
        }
        break;
    case CONTROL:
        *words = (size_t)total * 257;
        out->assign(*words, 0);
        for (unsigned b = 0; b < total; b++) {
            uint32_t s[256], acc = 0;
            for (int t = 0; t < 256; t++) s[t] = I(b * 256 + t) * 5 + b;
            for (int t = 0; t < 256; t++) (*out)[b * 257 + 1 + t] = s[255 - t] + (uint32_t)t;
            for (int j = 0; j < 256; j++) acc = acc * 31 + s[j];
            (*out)[b * 257] = acc;
        }
        break;
    case UNBALANCED:
        *words = (size_t)total * 128;
        out->assign(*words, 0);
        for (unsigned b = 0; b < total; b++)
            for (int t = 0; t < 128; t++)
                (*out)[b * 128 + t] = b % 3 == 0 ? 0xFFFFFFFFu : (I(b * 128 + 127 - t) + b) * 2 + 1;
        break;
    }
}

struct Dev {
    CUstream st = nullptr;
    CUmodule mod = nullptr;
    int nsm = 0;
};

bool run_one(Dev &d, const Repro &r, bool tool, int *pass, int *fail)
{
    CUfunction f;
    CUresult gr = cuModuleGetFunction(&f, d.mod, r.name);
    if (gr != CUDA_SUCCESS) {
        printf("FAIL %s: no such kernel in the module (%s)\n", r.name, err_name(gr).c_str());
        ++*fail;
        return true;
    }
    const unsigned workers = (unsigned)d.nsm, chunk = 2, total = 4 * workers, base = workers * chunk;
    std::vector<int32_t> in((size_t)total * 256);
    uint64_t s = 20261130;
    for (auto &v : in) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = (int32_t)((s >> 33) % 2001) - 1000;
    }
    std::vector<uint32_t> want;
    size_t words = 0;
    reference(r.body, total, in, &want, &words);
    const size_t out_words = (size_t)total * 257;
    CUdeviceptr din = 0, dout = 0, dticket = 0;
    CK(cuMemAlloc(&din, in.size() * 4));
    CK(cuMemAlloc(&dout, out_words * 4));
    CK(cuMemAlloc(&dticket, 4));
    CK(cuMemcpyHtoD(din, in.data(), in.size() * 4));
    CK(cuMemsetD32Async(dout, POISON, out_words, d.st));
    CK(cuMemsetD32Async(dticket, 0, 1, d.st));
    unsigned p_total = total, p_chunk = chunk, p_base = base;
    void *persist_args[] = {&din, &dout, &p_total, &p_chunk, &p_base, &dticket};
    void *orig_args[] = {&din, &dout};
    CK(cuLaunchKernel(f, r.persist ? workers : total, 1, 1, 256, 1, 1, 0, d.st, r.persist ? persist_args : orig_args,
                      nullptr));
    CK(cuStreamSynchronize(d.st));
    std::vector<uint32_t> got(words);
    CK(cuMemcpyDtoH(got.data(), dout, words * 4));
    cuMemFree(din);
    cuMemFree(dout);
    cuMemFree(dticket);
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < words; i++)
        if (got[i] != want[i] && diff++ == 0) first = i;
    std::string grid = r.persist ? "workers " + std::to_string(workers) + ", " + std::to_string(total) + " logical blocks"
                                 : std::to_string(total) + " CTAs";
    std::string res = diff ? "output wrong: " + std::to_string(diff) + " of " + std::to_string(words) +
                                 " words differ, first at word " + std::to_string(first)
                           : "output correct";
    const char *tag = tool || !r.defined ? "INFO" : diff ? "FAIL" : "PASS";
    printf("%s %s: %s (%s; %s)\n", tag, r.name, res.c_str(), grid.c_str(), r.what);
    fflush(stdout);
    if (!strcmp(tag, "PASS")) ++*pass;
    if (!strcmp(tag, "FAIL")) ++*fail;
    return true;
}

}   // namespace

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: repro KERNELS.ptx [--tool] NAME... | all\n");
        return 2;
    }
    bool tool = false;
    std::vector<const Repro *> todo;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--tool")) { tool = true; continue; }
        bool found = false;
        for (const Repro &r : REPROS)
            if (!strcmp(argv[i], "all") || !strcmp(argv[i], r.name)) { todo.push_back(&r); found = true; }
        if (!found) { fprintf(stderr, "repro: no repro named %s\n", argv[i]); return 2; }
    }
    FILE *fp = fopen(argv[1], "rb");
    if (!fp) { fprintf(stderr, "repro: cannot read %s\n", argv[1]); return 2; }
    std::string ptx;
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) ptx.append(buf, n);
    fclose(fp);

    int pass = 0, fail = 0;
    auto setup = [&](Dev &d) -> bool {
        CUdevice dev;
        CUcontext ctx;
        CK(cuInit(0));
        CK(cuDeviceGet(&dev, 0));
        CK(cuDevicePrimaryCtxRetain(&ctx, dev));
        CK(cuCtxSetCurrent(ctx));
        CK(cuDeviceGetAttribute(&d.nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
        CK(cuStreamCreate(&d.st, CU_STREAM_NON_BLOCKING));
        CK(cuModuleLoadDataEx(&d.mod, ptx.c_str(), 0, nullptr, nullptr));
        return true;
    };
    Dev d;
    if (!setup(d)) {
        printf("FAIL repro: CUDA setup failed\n0 passed, 1 failed\n");
        return 1;
    }
    for (const Repro *r : todo)
        if (!run_one(d, *r, tool, &pass, &fail)) {
            printf("FAIL %s: a CUDA call failed (see above)\n", r->name);
            fail++;
            break;   // the context may be gone
        }
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
