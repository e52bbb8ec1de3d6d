"""The package version, from its one source: project(tidal VERSION x.y.z) in the top-level
CMakeLists.txt (private).

A checkout reads it from there; an installed copy has it in tidal/_config.py, written by
`cmake --install` (cmake/TidalPython.cmake) or by `pip install` from a checkout
(python/setup.py). Standard library only: python/setup.py loads this file by path.
"""
import os
import re

_PROJECT_RE = re.compile(r"^\s*project\s*\(\s*tidal\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)\b", re.M | re.I)


def cmake_project_version(cmakelists):
    """The VERSION of project(tidal ...) in the CMakeLists.txt at that path, or None when the
    file is absent or declares no such project."""
    try:
        with open(cmakelists, encoding="utf-8") as f:
            m = _PROJECT_RE.search(f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def checkout_root(pkg_dir):
    """The tidal checkout whose python/tidal is pkg_dir (symlinks resolved), or None."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(pkg_dir)))
    if cmake_project_version(os.path.join(root, "CMakeLists.txt")) is None:
        return None
    return root
