"""Keep LanceDB's unused REST client from costing every cold `vq` half its start-up.

``import lancedb`` imports ``lance_namespace``, which imports the models of the
generated ``lance_namespace_urllib3_client`` package; that package's ``__init__``
eagerly imports every REST API class too (measured: ~0.7 s of a 1.5 s
``import lancedb`` on two cores). vq opens embedded and object-store tables, which
need only the models. So the package is registered without running its
``__init__``: its submodules (``.models``...) import as usual through ``__path__``,
and the first attribute asked of the package itself (``ApiClient``, a REST
namespace) runs the real ``__init__`` then, so nothing that needs it breaks.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

PACKAGE = "lance_namespace_urllib3_client"


def defer_rest_client() -> bool:
    """Register the lazy package unless it is already imported or not installed.

    Returns True when registered. Any surprise in how the package is laid out
    leaves the normal (eager) import in place.
    """
    if PACKAGE in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return False
    module = importlib.util.module_from_spec(spec)

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module-level hook (PEP 562)
        del module.__dict__["__getattr__"]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return getattr(module, name)

    module.__dict__["__getattr__"] = __getattr__
    sys.modules[PACKAGE] = module
    return True
