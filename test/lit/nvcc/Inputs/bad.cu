// Does not compile: nvcc's diagnostic and exit status come through.
__global__ void broken(int *p) { p[0] = undeclared_name; }
