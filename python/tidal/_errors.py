"""TidalError, the one exception python/tidal raises (private module; import it from tidal)."""


class TidalError(RuntimeError):
    """A libtidal call failed, or tidal cannot run here; the text says why."""


TidalError.__module__ = "tidal"   # tracebacks say tidal.TidalError, where users import it from
