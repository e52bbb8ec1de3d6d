"""Where tidal's native pieces are: libtidal.so, libtidal-preload.so, tidal-ptxas (private).

Each piece is searched for in this order; the first step that names a path decides:

  1. the argument given for it (tidal.triton.enable(libtidal=, ptxas=)), then its
     environment variable (TIDAL_LIB, TIDAL_PRELOAD, TIDAL_PTXAS). A path given there that is
     not a usable file raises; nothing else is tried.
  2. next to a piece the process already uses (tidal-ptxas in ../bin next to the preloaded
     libtidal; libtidal.so in ../lib next to the tidal-ptxas given), when it is there;
  3. TIDAL_BUILD=DIR: DIR/lib and DIR/bin, and nothing after it;
  4. where this copy of the package came from, recorded in tidal/_config.py: the install
     prefix (`cmake --install`, cmake/TidalPython.cmake) or the build tree (`pip install`
     from a checkout, python/setup.py);
  5. run from a checkout (this file is <checkout>/python/tidal/_locate.py, no _config.py): the
     build tree it was imported through (<build>/share/tidal/python, the link to python/
     that tidal-run puts on PYTHONPATH), else <checkout>/build.

PATH is not searched: a tidal-ptxas found there may belong to another tidal. Failures raise
TidalError listing every place searched.
"""
import os

from ._errors import TidalError
from . import _version

__all__ = ["PIECES", "config", "origins", "locate", "paths", "version"]

PKG_DIR = os.path.dirname(os.path.abspath(__file__))   # as imported: symlinks kept

# piece: (environment variable, "lib" or "bin", file name, must be executable)
PIECES = {
    "libtidal": ("TIDAL_LIB", "lib", "libtidal.so", False),
    "preload": ("TIDAL_PRELOAD", "lib", "libtidal-preload.so", False),
    "ptxas": ("TIDAL_PTXAS", "bin", "tidal-ptxas", True),
}

CONFIG_FIELDS = ("ORIGIN", "VERSION", "ROOT", "LIBDIR", "BINDIR")


class Origin:
    """A place the pieces may be: libdir holds the libraries, bindir tidal-ptxas."""

    def __init__(self, label, libdir, bindir, hint):
        self.label, self.libdir, self.bindir, self.hint = label, libdir, bindir, hint

    def dir_for(self, sub):
        return self.libdir if sub == "lib" else self.bindir


_config_cache = []


def config():
    """The tidal/_config.py of this copy as a dict, or None (a checkout has none). A
    _config.py that does not load, or lacks a field, raises TidalError."""
    if _config_cache:
        return _config_cache[0]
    path = os.path.join(PKG_DIR, "_config.py")
    if not os.path.exists(path):
        _config_cache.append(None)
        return None
    ns = {}
    try:
        with open(path, encoding="utf-8") as f:
            exec(compile(f.read(), path, "exec"), ns)
    except (OSError, SyntaxError) as e:
        raise TidalError("%s does not load (%s): reinstall tidal" % (path, e)) from None
    missing = [k for k in CONFIG_FIELDS if not isinstance(ns.get(k), str)]
    if missing or ns["ORIGIN"] not in ("install", "build"):
        raise TidalError("%s is malformed (%s): reinstall tidal"
                         % (path, "missing " + ", ".join(missing) if missing else "ORIGIN=%r" % ns["ORIGIN"]))
    cfg = {k: ns[k] for k in CONFIG_FIELDS}
    # cmake --install writes the prefix's directories relative to this file (a moved prefix
    # keeps working); pip makes them absolute in the copy it installs
    here = os.path.dirname(path)
    for k in ("ROOT", "LIBDIR", "BINDIR"):
        if not os.path.isabs(cfg[k]):
            cfg[k] = os.path.normpath(os.path.join(here, cfg[k]))
    cfg["SOURCE"] = ns.get("SOURCE")
    cfg["path"] = path
    _config_cache.append(cfg)
    return cfg


def _build_tree_imported_through():
    """<build> when this package was imported as <build>/share/tidal/python/tidal (the build
    tree's link to the checkout's python/), else None."""
    parts = PKG_DIR.split(os.sep)
    if parts[-4:-1] != ["share", "tidal", "python"]:
        return None
    build = os.sep.join(parts[:-4]) or os.sep
    return build if os.path.exists(os.path.join(build, "CMakeCache.txt")) else None


def origins():
    """The places searched after the explicit ones (steps 3-5 of the module doc), in order."""
    b = os.environ.get("TIDAL_BUILD")
    if b:
        b = os.path.abspath(b)
        return [Origin("TIDAL_BUILD=%s" % b, os.path.join(b, "lib"), os.path.join(b, "bin"),
                       "build it there, or point TIDAL_BUILD at the build tree that has it")]
    cfg = config()
    if cfg is not None:
        if cfg["ORIGIN"] == "install":
            label = "the install prefix %s, recorded by cmake --install in %s" % (cfg["ROOT"], cfg["path"])
            hint = "reinstall tidal there (cmake --install), or set TIDAL_BUILD to a build tree"
        else:
            label = ("the build tree %s, recorded by pip install from the checkout %s in %s"
                     % (cfg["ROOT"], cfg["SOURCE"], cfg["path"]))
            hint = ("build it (ninja -C %s), set TIDAL_BUILD to another build tree, or reinstall the "
                    "package with TIDAL_BUILD=DIR pip install ..." % cfg["ROOT"])
        return [Origin(label, cfg["LIBDIR"], cfg["BINDIR"], hint)]
    root = _version.checkout_root(PKG_DIR)
    if root is None:
        return []
    via = _build_tree_imported_through()
    if via is not None:   # that tree only: pieces from two build trees do not mix
        return [Origin("the build tree %s, this package was imported through its share/tidal/python" % via,
                       os.path.join(via, "lib"), os.path.join(via, "bin"), "build it (ninja -C %s)" % via)]
    std = os.path.join(root, "build")
    return [Origin("the checkout's build tree %s" % std, os.path.join(std, "lib"), os.path.join(std, "bin"),
                   "build it (make build), or set TIDAL_BUILD to the build tree that has it")]


def _why_unusable(path, exe):
    """None when path is a file (executable when exe), else why not."""
    if not os.path.exists(path):
        return "no such file"
    if not os.path.isfile(path):
        return "not a file"
    if exe and not os.access(path, os.X_OK):
        return "not executable"
    return None


def locate(piece, explicit=None, explicit_name=None, near=()):
    """The absolute path of piece ("libtidal", "preload", "ptxas"), searched as the module doc
    says. explicit: a path given by the caller (explicit_name names it in errors, e.g.
    "ptxas="); near: [(label, directory)] of step 2. Raises TidalError naming what was
    searched."""
    env, sub, name, exe = PIECES[piece]
    kind = "an executable file" if exe else "a file"
    for given, what in ((explicit, explicit_name or "the path given"), (os.environ.get(env), env + "=")):
        if given:
            why = _why_unusable(given, exe)
            if why is not None:
                raise TidalError("%s%s is not %s (%s)" % (what, given, kind, why))
            return os.path.abspath(given)
    searched, seen = [], set()
    origs = origins()
    steps = [(label, d, None) for label, d in near if d]
    steps += [(o.label, o.dir_for(sub), o.hint) for o in origs]
    hints = []
    for label, d, hint in steps:
        p = os.path.normpath(os.path.join(os.path.abspath(d), name))
        if p in seen:
            continue
        seen.add(p)
        why = _why_unusable(p, exe)
        if why is None:
            return p
        searched.append("%s: %s (%s)" % (p, why, label))
        if hint:
            hints.append(hint)
    if not origs:
        hints.append("this copy of tidal records no install prefix or build tree (no tidal/_config.py) and "
                     "is not in a checkout: install it with pip from PREFIX/share/tidal/python or from a "
                     "checkout's python/, or set TIDAL_BUILD=DIR")
    raise TidalError("%s not found: searched %s. Set %s=PATH%s" % (
        name, "; ".join(searched) if searched else "nowhere", env,
        "; or " + "; or ".join(hints) if hints else ""))


def paths():
    """{piece: path or None, "errors": {piece: message}, "origins": [labels], "config": ...}
    (never raises)."""
    out = {"errors": {}}
    for piece in PIECES:
        try:
            out[piece] = locate(piece)
        except TidalError as e:
            out[piece] = None
            out["errors"][piece] = str(e)
    try:
        out["origins"] = [o.label for o in origins()]
        out["config"] = config()
    except TidalError as e:
        out["origins"], out["config"] = [], None
        out["errors"]["config"] = str(e)
    return out


def version():
    """The package version: tidal/_config.py's, else the checkout's CMakeLists.txt's."""
    cfg = config()
    if cfg is not None:
        return cfg["VERSION"]
    root = _version.checkout_root(PKG_DIR)
    if root is not None:
        return _version.cmake_project_version(os.path.join(root, "CMakeLists.txt"))
    raise TidalError("the tidal version is unknown: %s has no _config.py (written when the package is "
                     "installed) and is not a checkout's python/tidal" % PKG_DIR)
