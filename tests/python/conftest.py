"""Every test gets its own scratch folder under the work root, removed when the test ends: the
optimized bench models alone are hundreds of megabytes each, and a full run must fit on a small
CI disk."""
import shutil
import tempfile

import pytest

import onyx_harness


@pytest.fixture(autouse=True)
def scratch_folder_per_test():
    root = onyx_harness._work_dir()
    folder = tempfile.mkdtemp(dir=root, prefix="test-")
    onyx_harness.SCRATCH = folder
    try:
        yield folder
    finally:
        onyx_harness.SCRATCH = None
        shutil.rmtree(folder, ignore_errors=True)
