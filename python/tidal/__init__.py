"""tidal: Python glue for libtidal (see docs/runtime.md). Only tidal.triton lives here."""
