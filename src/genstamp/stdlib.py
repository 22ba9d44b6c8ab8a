"""The standard library's modules, whatever the checkout under test names its own.

``python -m pytest`` puts the folder it runs in first on ``sys.path``, and pytest puts its
rootdir there: a project's own ``shlex.py``, ``hmac.py`` or ``tomllib.py`` is then what
``import shlex`` finds in the test process (pytest's own ``import shlex`` takes it too).
genstamp asks for the standard library's by its folder, and never takes the name from the
tests: a module it loads while the checkout shadows the name stays out of ``sys.modules``.

PYTEST_DONT_REWRITE: it asserts nothing
"""

import os
import sys
from importlib.machinery import PathFinder
from importlib.util import module_from_spec
from types import ModuleType

# The standard library's folders: the one that holds ``os``, and its extension modules'.
_FOLDERS = [os.path.dirname(os.__file__), os.path.join(os.path.dirname(os.__file__), "lib-dynload")]
_OWN: dict[str, ModuleType] = {}  # loaded here while the checkout shadowed the name


def module(name: str) -> ModuleType:
    """The standard library's top-level module ``name``: the one imported already when it is
    the standard library's, else imported as usual when nothing on ``sys.path`` comes before
    it, else loaded from its folder apart from ``sys.modules`` (once)."""
    found = sys.modules.get(name)
    if found is not None and _ours(found):
        return found
    if name in _OWN:
        return _OWN[name]
    spec = PathFinder.find_spec(name, _FOLDERS)
    first = PathFinder.find_spec(name)  # what `import` would take from sys.path
    if (
        spec is None
        or spec.loader is None
        or (found is None and first is not None and first.origin == spec.origin)
    ):
        import importlib

        return importlib.import_module(name)  # a built-in module, or nothing shadows it
    held = {k: v for k, v in sys.modules.items() if k == name or k.startswith(name + ".")}
    recorder = sys.modules.get("genstamp.loads")  # a run's: this load is none of the tests'
    hushed = recorder.hush(True) if recorder is not None else False
    try:  # (an extension module is loaded as it is made: a load of the tests' run otherwise)
        loaded = module_from_spec(spec)
        sys.modules[name] = loaded  # its own submodules' relative imports find it
        spec.loader.exec_module(loaded)
    finally:
        if recorder is not None:
            recorder.hush(hushed)
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        sys.modules.update(held)
    _OWN[name] = loaded
    return loaded


def _ours(found: ModuleType) -> bool:
    spec = getattr(found, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if origin in ("built-in", "frozen"):
        return True
    parts = origin.split(os.sep) if isinstance(origin, str) else ["site-packages"]
    if "site-packages" in parts or "dist-packages" in parts:
        return False  # an installed package is no module of the standard library's
    return os.path.dirname(str(origin)).startswith(tuple(_FOLDERS))
