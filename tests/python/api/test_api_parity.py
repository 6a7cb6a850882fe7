"""Every public name of onnxruntime 1.31.1's Python API (read from the installed package) exists in
onyx, except the ones python/api_parity_exclusions.txt lists with the reason."""
import os

import onnxruntime
import pytest

import onyx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLASSES = ["InferenceSession", "SessionOptions", "OrtValue", "IOBinding", "RunOptions"]


def exclusions():
    found = {}
    with open(os.path.join(REPO, "python", "api_parity_exclusions.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(" ")
                assert why.strip(), f"exclusion {name} says no reason"
                found[name] = why.strip()
    return found


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_onnxruntime_is_the_reference_version():
    assert onnxruntime.__version__ == "1.31.1"


def test_module_names():
    skip = exclusions()
    missing = sorted(n for n in public(onnxruntime) if not hasattr(onyx, n) and f"onnxruntime.{n}" not in skip)
    assert not missing, f"onyx lacks onnxruntime's {missing}"


@pytest.mark.parametrize("cls", CLASSES)
def test_class_names(cls):
    skip = exclusions()
    ours = getattr(onyx, cls)
    missing = sorted(n for n in public(getattr(onnxruntime, cls)) if not hasattr(ours, n) and f"{cls}.{n}" not in skip)
    assert not missing, f"onyx.{cls} lacks {missing}"


def test_exclusions_are_still_needed():
    # An excluded name onyx has after all (or ORT no longer has) should leave the list.
    for entry in exclusions():
        scope, name = entry.split(".", 1)
        ort_owner = onnxruntime if scope == "onnxruntime" else getattr(onnxruntime, scope)
        ours = onyx if scope == "onnxruntime" else getattr(onyx, scope)
        assert hasattr(ort_owner, name), f"{entry}: onnxruntime has no such name any more"
        assert not hasattr(ours, name), f"{entry}: onyx has it now; drop the exclusion"


def test_exception_classes_where_ort_has_them():
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    from onyx.capi import onnxruntime_pybind11_state as state

    for name in ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
                 "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail"]:
        assert issubclass(getattr(ort_state, name), Exception)
        assert getattr(state, name).__name__ == name
        assert issubclass(getattr(state, name), Exception)
