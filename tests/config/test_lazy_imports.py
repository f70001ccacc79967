"""The deferred REST client package: skipped at import, complete the moment it is used."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from vq.core import store
db = store.connect(sys.argv[1])
print('API', 'lance_namespace_urllib3_client.api' in sys.modules)
print('TABLES', list(db.list_tables().tables))
from lance_namespace_urllib3_client import ApiClient, TableApi
import lance_namespace_urllib3_client as pkg
print('LOADED', ApiClient.__name__, TableApi.__name__, pkg.__version__,
      'lance_namespace_urllib3_client.api' in sys.modules)
"""


def test_rest_client_is_deferred_and_loads_on_first_use(tmp_path):
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "db")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-800:]
    lines = out.stdout.splitlines()
    assert lines[0] == "API False"  # lancedb imported and connected without the REST APIs
    assert lines[1] == "TABLES []"
    assert lines[2].startswith("LOADED ApiClient TableApi ") and lines[2].endswith(" True")


def test_an_already_imported_package_is_left_alone(tmp_path):
    from vq.core import lazy_rest, store

    store.connect(str(tmp_path / "db"))  # lancedb, and with it the package, is imported
    before = sys.modules[lazy_rest.PACKAGE]
    assert lazy_rest.defer_rest_client() is False
    assert sys.modules[lazy_rest.PACKAGE] is before
