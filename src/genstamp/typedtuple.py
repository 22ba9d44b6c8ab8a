"""``NamedTuple`` for the modules of the pytest process and the CLI: typing's class syntax,
without typing's cost.

``typing.NamedTuple`` checks each field's annotation as a type; under ``from __future__ import
annotations`` every annotation is a string, which it compiles into a ``ForwardRef``: about
120 us a class, against 45 us for the ``collections.namedtuple`` it then builds, and a pytest
process with the plugin creates some forty such records at start-up and at the session's end.
Here the class is the same ``collections.namedtuple`` (fields, defaults, methods and docstring
of the class body), its annotations kept as written. mypy sees typing's.
"""

TYPE_CHECKING = False  # not typing's: a module that imports this one may not need typing
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:

    class _NamedTupleMeta(type):
        def __new__(cls, typename, bases, namespace):
            import collections

            annotations = namespace.get("__annotations__", {})
            defaults = [namespace[n] for n in annotations if n in namespace]
            if defaults and any(n not in namespace for n in list(annotations)[-len(defaults) :]):
                raise TypeError(f"{typename}: a field without a default follows one with it")
            made = collections.namedtuple(
                typename, annotations, defaults=defaults, module=namespace["__module__"]
            )
            made.__annotations__ = made.__new__.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key not in _SPECIAL and key not in annotations:
                    setattr(made, key, value)
            return made

    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
    _Base = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})

    def NamedTuple(*args, **kwargs):
        raise TypeError("genstamp's NamedTuple takes the class syntax only")

    NamedTuple.__mro_entries__ = lambda bases: (_Base,)
