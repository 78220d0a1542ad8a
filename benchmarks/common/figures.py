"""What every figure does before and after drawing: matplotlib on a file backend (or a clear
error without it), and a PNG written atomically.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> plt = pyplot()
    >>> figure, axis = plt.subplots()
    >>> path = Path(tempfile.mkdtemp()) / "figures" / "line.png"
    >>> save_png(figure, path, dpi=40)
    >>> path.read_bytes()[:4] == b"\\x89PNG"
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mara_env.atomic_files import replace_atomically


class PlotsUnavailable(ImportError):
    """matplotlib is not installed (the message says how to install it)."""


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend.

    Raises:
        PlotsUnavailable: Without matplotlib.
    """
    try:
        import matplotlib
    except ImportError as error:
        raise PlotsUnavailable(
            "Figures need matplotlib, which is not installed: pip install 'mara-env[plot]' "
            "(the tables were written anyway)."
        ) from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(figure: Any, path: Path, dpi: int) -> None:
    """Write ``figure`` to ``path`` as a PNG (its folder made if needed; the file replaced
    atomically, so an interruption leaves the old one) and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(path, lambda handle: figure.savefig(handle, format="png", dpi=dpi))
    pyplot().close(figure)
