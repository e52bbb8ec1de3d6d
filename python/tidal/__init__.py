"""tidal: Python glue for libtidal (see docs/runtime.md).

  tidal.torch    PyTorch streams on tidal partitions (green contexts, live masks, CUDA
                 graphs); run the process under scripts/tidal-run
  tidal.triton   Triton / torch.compile kernels attached to one partition (launch case b,
                 no preload needed)

Importing `tidal` itself loads nothing.
"""
