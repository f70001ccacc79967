"""Issue 17, item 9: a full or read-only disk is named, with its errno, not "run vq build
again" (which fails the same way); doctor says when index_dir is not writable.

The real cases run in a private mount namespace (``unshare -rm``): a 64 KiB
tmpfs that fills, and a read-only bind mount over an index. Where unprivileged
namespaces are not allowed they skip; the mapping itself is checked on a real
ENOSPC from /dev/full everywhere.
"""

from __future__ import annotations

import errno
import functools
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import write_config
from vq.core.error_mapping import classify
from vq.core.errors import WriteFailed
from vq.core.mounts import mount_of


@functools.cache
def namespaces_work() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs none /mnt"],
                           capture_output=True)
    return probe.returncode == 0


needs_namespaces = pytest.mark.skipif("not namespaces_work()",
                                      reason="no unprivileged mount namespaces here")


def in_namespace(setup: str, *vq_args: object) -> subprocess.CompletedProcess:
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, "-m", "vq", *vq_args))
    return subprocess.run(["unshare", "-rm", "sh", "-c", f"{setup} && {command}"],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_a_real_enospc_names_errno_and_filesystem():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(OSError) as info, open("/dev/full", "wb", buffering=0) as fh:
        fh.write(b"x")
    error = classify(info.value, "/dev/full")
    assert isinstance(error, WriteFailed) and error.errno == errno.ENOSPC
    assert "errno 28 ENOSPC" in error.message and f"filesystem {mount_of('/dev')[0]}" in \
        error.message and "free space" in error.fix


def test_lances_os_error_text_is_read_for_its_errno(tmp_path):
    lance = RuntimeError("lance error: LanceError(IO): Generic LocalFileSystem error: "
                         "Unable to write: Read-only file system (os error 30), "
                         "/root/.cargo/registry/src/lance-io/src/local.rs:27:40")
    error = classify(lance, str(tmp_path))
    assert isinstance(error, WriteFailed) and "errno 30 EROFS" in error.message
    assert "read-only" in error.fix


@needs_namespaces
def test_build_on_a_full_disk_names_the_filesystem(tmp_path, vault, test_models):
    """A storage failure, so the test encoder: same vector width, no torch to load."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(mnt / "index"),
                                             "model": test_models,
                                             "vaults": {"notes": {"path": str(vault)}}})
    proc = in_namespace(f"mount -t tmpfs -o size=64k none {shlex.quote(str(mnt))}",
                        "--config", cfg, "build")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"(errno 28 ENOSPC) on filesystem {mnt} (tmpfs)" in proc.stderr, proc.stderr
    assert f"next: free space on {mnt}" in proc.stderr and "again: it repairs" not in proc.stderr


@pytest.mark.model
@needs_namespaces
def test_a_read_only_index_dir_is_named_by_build_and_doctor(built, config_file, vault):
    (vault / "new.md").write_text("# New\n\nA note the build would add.\n")
    index = shlex.quote(built.index_dir)
    read_only = f"mount --bind {index} {index} && mount -o remount,bind,ro {index}"
    proc = in_namespace(read_only, "--config", config_file, "build")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "(errno 30 EROFS)" in proc.stderr and f"filesystem {built.index_dir}" in proc.stderr
    assert "is mounted read-only" in proc.stderr
    doctor = in_namespace(read_only, "--config", config_file, "doctor", "--no-model")
    assert "✗ index_dir writable" in doctor.stdout and "read-only filesystem" in doctor.stdout
    status = in_namespace(read_only, "--config", config_file, "status")
    assert status.returncode == 0, status.stderr  # reading still works
