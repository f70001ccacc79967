"""Issue 17, item 5: simultaneous config edits all land.

On main eight simultaneous `vq vault add` all printed `added` and exited 0, and
two of the eight survived: each read the file, added its vault, and replaced
the file another had just replaced.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from vq.core.settings import load_settings

WRITERS = 8


def _add(config: str, root: str, i: int, barrier) -> None:
    from vq.core.configedit import add_vault

    barrier.wait(timeout=120)  # all eight start their read-modify-write together
    add_vault(Path(config), f"v{i}", root)


def _remove(config: str, i: int, barrier) -> None:
    from vq.core.configedit import remove_vault

    barrier.wait(timeout=120)
    remove_vault(Path(config), f"v{i}")


def _run_all(target, args_for) -> list[int]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=target, args=(*args_for(i), barrier)) for i in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    return [p.exitcode for p in procs]


def test_eight_simultaneous_vault_adds_and_removes_all_land(tmp_path):
    config = tmp_path / "vq.yaml"
    config.write_text("# my vaults\nindex_dir: idx\nvaults: {}\n")
    roots = []
    for i in range(WRITERS):
        (tmp_path / f"r{i}").mkdir()
        roots.append(str(tmp_path / f"r{i}"))
    codes = _run_all(_add, lambda i: (str(config), roots[i], i))
    assert codes == [0] * WRITERS
    settings = load_settings(str(config))
    assert sorted(v.id for v in settings.vaults) == sorted(f"v{i}" for i in range(WRITERS))
    assert config.read_text().startswith("# my vaults")
    codes = _run_all(_remove, lambda i: (str(config), i))
    assert codes == [0] * WRITERS and load_settings(str(config)).vaults == ()
