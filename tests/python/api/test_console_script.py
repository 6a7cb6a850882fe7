"""The `onyx` console script that pip installs runs the C++ command shipped inside the package."""
import os
import subprocess
import sys

import onnx
import pytest

import onyx_harness
from api_models import relu_model


def console_script():
    path = os.path.join(os.path.dirname(sys.executable), "onyx")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: install the package with `pip install .`")
    return path


def test_the_command_is_inside_the_package():
    from onyx import _cli

    assert os.access(_cli.binary_path(), os.X_OK)
    assert os.path.dirname(os.path.dirname(_cli.binary_path())) == os.path.dirname(os.path.abspath(onyx_module()))


def onyx_module():
    import onyx

    return onyx.__file__


def test_info_runs_the_cpp_command():
    model = onyx_harness.save_model(onnx.load_from_string(relu_model(producer_name="script-test")), "relu.onnx")
    proc = subprocess.run([console_script(), "info", model], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "script-test" in proc.stdout and "Relu" in proc.stdout


def test_exit_code_and_stderr_pass_through():
    missing = os.path.join(onyx_harness._work_dir(), "absent.onnx")
    proc = subprocess.run([console_script(), "info", missing], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "absent.onnx" in proc.stderr


def test_package_is_relocatable():
    # The wheel's libraries find each other through $ORIGIN, never through the build tree.
    import glob
    import shutil

    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    from onyx import _cli

    package = os.path.dirname(os.path.abspath(onyx_module()))
    files = {"extension": glob.glob(os.path.join(package, "_C*.so"))[0],
             "library": os.path.join(package, "libonyx.so"), "command": _cli.binary_path()}
    for what, path in files.items():
        dynamic = subprocess.run([readelf, "-d", path], capture_output=True, text=True, check=True).stdout
        paths = [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "RUNPATH" in line or "RPATH" in line]
        assert all(p.startswith("$ORIGIN") for entry in paths for p in entry.split(":")), (what, paths)
