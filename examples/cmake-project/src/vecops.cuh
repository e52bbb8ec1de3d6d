// vecops: __device__ building blocks (relocatable device code) and a host API.
#pragma once

__device__ float axpy(float a, float x, float y);
__device__ int warp_inclusive_sum(int v);

// Fills p[0..n) with v (a kernel inside the library).
void vecops_fill(float *p, float v, int n);
