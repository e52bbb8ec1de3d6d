// Function pointers and indirect calls: produces .callprototype labels and
// `call (...), %rdN, (...), prototype_label;`. Also a device-side function
// table in __device__ memory and virtual dispatch.

typedef float (*unary_fn)(float);
typedef int (*binop_fn)(int, int);

__device__ __noinline__ float f_square(float x) { return x * x; }
__device__ __noinline__ float f_negate(float x) { return -x; }
__device__ __noinline__ float f_half(float x) { return 0.5f * x; }
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_max(int a, int b) { return a > b ? a : b; }

__device__ unary_fn g_unary_table[3] = {f_square, f_negate, f_half};
__device__ binop_fn g_binop_table[3] = {op_add, op_mul, op_max};

extern "C" __global__ void apply_table(float *x, const int *which, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = g_unary_table[which[i] % 3](x[i]);
}

extern "C" __global__ void fold_with_op(const int *v, int n, int op, int *out)
{
    binop_fn f = g_binop_table[op % 3];
    int acc = v[0];
    for (int i = 1; i < n; ++i)
        acc = f(acc, v[i]);
    out[blockIdx.x] = acc;
}

// Function pointer passed in from a kernel parameter (obtained on the host
// via cudaMemcpyFromSymbol) -> call through a pointer held in a register.
extern "C" __global__ void call_param_fnptr(unary_fn fn, float *x)
{
    x[threadIdx.x] = fn(x[threadIdx.x]);
}

// Virtual dispatch (objects created on the device).
struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual ~Shape() {}
};
struct Circle : Shape {
    float r;
    __device__ explicit Circle(float r_) : r(r_) {}
    __device__ float area() const override { return 3.14159265f * r * r; }
};
struct Rect : Shape {
    float w, h;
    __device__ Rect(float w_, float h_) : w(w_), h(h_) {}
    __device__ float area() const override { return w * h; }
};

__device__ __noinline__ float total_area(Shape *const *shapes, int n)
{
    float a = 0.0f;
    for (int i = 0; i < n; ++i)
        a += shapes[i]->area();
    return a;
}

extern "C" __global__ void virtual_dispatch(const float *params, float *out)
{
    Circle c(params[0]);
    Rect r(params[1], params[2]);
    Shape *shapes[2] = {&c, &r};
    if (threadIdx.x & 1) {
        Shape *t = shapes[0]; shapes[0] = shapes[1]; shapes[1] = t;
    }
    out[threadIdx.x] = total_area(shapes, 2);
}
