"""Every public function and method with parameters documents them in a numpydoc Parameters section."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest

import budget_extras

SUBPACKAGES = sorted(
    m.name
    for m in pkgutil.iter_modules(budget_extras.__path__, "budget_extras.")
    if not m.name.rsplit(".", 1)[-1].startswith("_")
)


def _public_callables() -> list[tuple[str, Any]]:
    out: dict[str, Any] = {}
    for mod_name in ["budget_extras", *SUBPACKAGES]:
        mod = importlib.import_module(mod_name)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                out[f"{obj.__module__}.{obj.__qualname__}"] = obj
            elif inspect.isclass(obj):
                own = [c for c in obj.__mro__ if c.__module__.startswith("budget_extras")]
                for attr, member in {k: v for c in reversed(own) for k, v in vars(c).items()}.items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    fn = member.fget if isinstance(member, property) else member
                    if isinstance(fn, (staticmethod, classmethod)):
                        fn = fn.__func__
                    if inspect.isfunction(fn) and attr != "__init__":
                        out[f"{obj.__module__}.{obj.__qualname__}.{attr}"] = fn
    return sorted(out.items())


def _has_parameters(fn: Any) -> bool:
    params = [p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    return bool(params)


@pytest.mark.parametrize(("qualname", "fn"), _public_callables(), ids=lambda v: v if isinstance(v, str) else "")
def test_parameters_section(qualname: str, fn: Any) -> None:
    if not _has_parameters(fn):
        return
    doc = inspect.getdoc(fn) or ""
    assert "Parameters\n----------" in doc, f"{qualname} takes arguments but its docstring has no Parameters section"
