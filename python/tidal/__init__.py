"""tidal: Python glue for libtidal (see docs/runtime.md).

  tidal.torch    PyTorch streams on tidal partitions (green contexts, live masks, CUDA
                 graphs); run the process under scripts/tidal-run
  tidal.triton   Triton / torch.compile kernels attached to one partition (launch case b,
                 no preload needed)

Importing `tidal` itself loads nothing. Here:
  tidal.__version__      the project version (CMakeLists.txt's project(VERSION))
  tidal.locate(piece)    the path of "libtidal", "preload" (libtidal-preload.so) or "ptxas"
                         (tidal-ptxas); TidalError naming every place searched
  tidal.paths()          all three, the places searched and the errors (never raises)
  tidal.TidalError       the exception every part of the package raises
"""
from ._errors import TidalError
from ._locate import paths

__all__ = ["TidalError", "locate", "paths", "__version__"]


def locate(piece):
    """Absolute path of "libtidal" (libtidal.so), "preload" (libtidal-preload.so) or "ptxas"
    (tidal-ptxas): its environment variable (TIDAL_LIB, TIDAL_PRELOAD, TIDAL_PTXAS), else
    TIDAL_BUILD, else the install prefix or build tree this copy was installed from, else (in
    a checkout) its build tree. Raises TidalError naming what was searched."""
    from ._locate import PIECES, locate as _locate
    if piece not in PIECES:
        raise TidalError("tidal.locate(%r): want one of %s" % (piece, ", ".join(sorted(PIECES))))
    return _locate(piece)


def __getattr__(name):
    if name == "__version__":   # computed on use: a copy without a version raises, import does not
        from ._locate import version
        return version()
    raise AttributeError("module 'tidal' has no attribute %r" % name)
