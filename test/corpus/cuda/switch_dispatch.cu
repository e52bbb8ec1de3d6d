// Dense switch statements (candidates for brx.idx jump tables), a sparse
// switch, and a small interpreter loop.

extern "C" __global__ void dense_switch(const int *ops, const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], r;
    switch (ops[i]) {
    case 0: r = x + y; break;
    case 1: r = x - y; break;
    case 2: r = x * y; break;
    case 3: r = x / y; break;
    case 4: r = fminf(x, y); break;
    case 5: r = fmaxf(x, y); break;
    case 6: r = sqrtf(fabsf(x)); break;
    case 7: r = __expf(x); break;
    case 8: r = __logf(fabsf(y) + 1.0f); break;
    case 9: r = sinf(x); break;
    case 10: r = cosf(y); break;
    case 11: r = x * x + y * y; break;
    case 12: r = floorf(x); break;
    case 13: r = ceilf(y); break;
    case 14: r = rsqrtf(fabsf(x) + 1.0f); break;
    case 15: r = -x; break;
    default: r = 0.0f; break;
    }
    out[i] = r;
}

// Switch used to pick a store target: each case has side effects, which
// discourages lowering to a select chain / lookup table.
extern "C" __global__ void switch_side_effects(const int *sel, int *a, int *b, int *c, int *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    switch (sel[i] & 7) {
    case 0: atomicAdd(a, i); break;
    case 1: atomicAdd(b, i); break;
    case 2: atomicExch(c, i); break;
    case 3: atomicMax(d, i); break;
    case 4: a[1 + (i & 15)] = i; break;
    case 5: b[1 + (i & 15)] = -i; break;
    case 6: __threadfence(); c[1] = i; break;
    case 7: d[1] = i * 3; break;
    }
}

// Bytecode interpreter: switch in a loop.
extern "C" __global__ void tiny_vm(const unsigned char *code, int len, float *stack_out)
{
    float stack[8];
    int sp = 0;
    float acc = (float)threadIdx.x;
    for (int pc = 0; pc < len; ++pc) {
        switch (code[pc]) {
        case 0: stack[sp++ & 7] = acc; break;
        case 1: acc = stack[--sp & 7]; break;
        case 2: acc += 1.0f; break;
        case 3: acc *= 2.0f; break;
        case 4: acc -= stack[(sp - 1) & 7]; break;
        case 5: acc = acc * acc; break;
        case 6: if (acc > 100.0f) pc = len; break;
        case 7: acc = -acc; break;
        case 8: acc = acc * 0.5f + 3.0f; break;
        case 9: stack[0] += acc; break;
        default: break;
        }
    }
    stack_out[blockIdx.x * blockDim.x + threadIdx.x] = acc + stack[0];
}

// Sparse switch (binary search / compare chain).
extern "C" __global__ void sparse_switch(const int *k, int *out)
{
    int v = k[threadIdx.x], r;
    switch (v) {
    case 3: r = 30; break;
    case 17: r = 170; break;
    case 256: r = 2; break;
    case 1000: r = 7; break;
    case -5: r = 55; break;
    case 99999: r = 1; break;
    default: r = -1;
    }
    out[threadIdx.x] = r;
}
