"""The operating system's functions as they were when genstamp's recorder started: what it asks
of files with, and writes its log with.

A test may replace them while its code loads: pyfakefs's ``fs`` fixture swaps every module's
``os``, ``os.path`` and ``io`` for fakes over a file system in memory (the import system still
reads the real files), and ``mock.patch("os.write")`` stands for a full disk. The recorder must
see the real files and write the real log all the same, or the loads of the modules imported
meanwhile are lost (a module of another clone then passes unseen). These are copies of the
modules, under names no patcher looks for, holding the functions themselves.
"""

import sys

TYPE_CHECKING = False  # not typing's: every Python process a run starts imports this module
if TYPE_CHECKING:
    import io
    import os
    from types import ModuleType
else:
    import io as _io
    import os as _os

    ModuleType = type(sys)  # (not from types: a module more to import in every process)

    def _copy(module: ModuleType, name: str) -> ModuleType:
        copy = ModuleType(name, module.__doc__)
        copy.__dict__.update(
            {k: v for k, v in vars(module).items() if k not in ("__name__", "__spec__")}
        )
        return copy

    os = _copy(_os, f"{__name__}.os")
    os.path = _copy(_os.path, f"{__name__}.path")
    io = _copy(_io, f"{__name__}.io")

__all__ = ["io", "os"]
