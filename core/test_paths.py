"""Where a project keeps what is not its implementation: tests, fixtures, examples,
vendored code.

One list for both sides, so they cannot disagree: ``vq init`` does not propose a
folder of Markdown there as docs (a test's fixtures are not a manual), and search
ranks a hit there below the implementation unless the query asks for it
(``vq.query.code_rank``). The folder names are the conventions of the ecosystems
vq indexes: pytest and Go (``tests/``, ``testdata/``), Jest (``__tests__/``,
``__mocks__/``, ``__snapshots__/``), Playwright and Starlight (``e2e/``,
``__e2e__/``), RSpec (``spec/``).
"""

from __future__ import annotations

import re

# Other people's code kept in a repository: C and C++ projects write third-party three ways
# (nlohmann/json's tests/thirdparty/ holds doctest, 108 files, 1,751 chunks), Python
# packages keep theirs in _vendor/ (pip's src/pip/_vendor/: rich, urllib3, packaging...).
# A code vault's walk skips these (``vq.core.walk``).
VENDORED_DIRS = frozenset({"vendor", "third_party", "thirdparty", "third-party", "3rdparty",
                           "_vendor", "_vendored", "vendored"})
SECONDARY_DIRS = VENDORED_DIRS | frozenset({
    "test", "tests", "testing", "testdata", "spec", "specs", "__tests__", "__mocks__",
    "e2e", "__e2e__", "fixture", "fixtures", "__fixtures__", "__snapshots__", "snapshots",
    "example", "examples", "sample", "samples", "demo", "demos"})
# A test file by its name: pytest's test_*.py and conftest.py, Go's *_test.go, Jest's
# *.test.ts and *.spec.ts
_TEST_FILE = re.compile(r"^(?:test_.*|.*_test\.[a-z]+|.*\.(?:test|spec)\.[a-z]+|conftest\.py)$")


def secondary_folder(folder: str) -> bool:
    """``folder`` (``/``-separated, relative) is or lies below one of ``SECONDARY_DIRS``."""
    return any(part.lower() in SECONDARY_DIRS for part in folder.split("/"))


def is_secondary(path: str) -> bool:
    """A file (relative path) of tests, fixtures, examples or vendored code."""
    folder, _, name = path.rpartition("/")
    return secondary_folder(folder) or bool(_TEST_FILE.match(name))
