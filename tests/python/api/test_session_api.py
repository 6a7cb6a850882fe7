"""InferenceSession's metadata, providers, fallback and errors, against ONNX Runtime's behaviour."""
import os
import warnings

import numpy as np
import onnxruntime
import pytest

import onyx
import onyx_harness
from api_models import conv_relu_model, optional_model, relu_model, two_output_model
from onyx.capi import onnxruntime_pybind11_state as state


def sessions(model, **kwargs):
    return onnxruntime.InferenceSession(model, **kwargs), onyx.InferenceSession(model, **kwargs)


def test_node_args_match_onnxruntime():
    for model in (relu_model(), two_output_model(), optional_model()):
        ort, ours = sessions(model)
        for get in ("get_inputs", "get_overridable_initializers"):
            assert [(a.name, a.type, a.shape) for a in getattr(ours, get)()] == \
                   [(a.name, a.type, a.shape) for a in getattr(ort, get)()], get
        assert [(a.name, a.type) for a in ours.get_outputs()] == [(a.name, a.type) for a in ort.get_outputs()]
    arg = onyx.InferenceSession(relu_model()).get_inputs()[0]
    assert str(arg) == "NodeArg(name='x', type='tensor(float)', shape=['N', 3])"


def test_modelmeta_matches_onnxruntime():
    model = relu_model(producer_name="maker", doc_string="what it does", model_version=7, domain="ex.dom")
    import onnx

    proto = onnx.load_from_string(model)
    onnx.helper.set_model_props(proto, {"author": "me", "license": "MIT"})
    model = proto.SerializeToString()
    ort, ours = (s.get_modelmeta() for s in sessions(model))
    for field in ("producer_name", "graph_name", "domain", "description", "version", "custom_metadata_map"):
        assert getattr(ours, field) == getattr(ort, field), field


def test_path_bytes_and_pathlike():
    import pathlib

    path = onyx_harness.save_model(__import__("onnx").load_from_string(relu_model()), "relu.onnx")
    x = np.array([[-1, 0.5, 2]], np.float32)
    for source in (path, pathlib.Path(path), relu_model()):
        np.testing.assert_array_equal(onyx.InferenceSession(source).run(None, {"x": x})[0], [[0, 0.5, 2]])
    with pytest.raises(TypeError, match="Unable to load from type"):
        onyx.InferenceSession(12)


def test_run_with_and_without_output_names():
    a, b = np.ones((2, 3), np.float32), np.full((2, 3), 2, np.float32)
    ort, ours = sessions(two_output_model())
    for names in (None, [], ["prod"], ["prod", "sum"]):
        expected = ort.run(names, {"a": a, "b": b})
        got = ours.run(names, {"a": a, "b": b})
        onyx_harness.assert_outputs_close(expected, got)


def test_overridable_initializer_can_be_fed():
    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    w = np.array([1, 2, 3], np.float32)
    ort, ours = sessions(two_output_model())
    onyx_harness.assert_outputs_close(ort.run(["sum"], {"a": a, "b": b, "w": w}), ours.run(["sum"], {"a": a, "b": b, "w": w}))


ERRORS = [
    # (what, call, ORT's class)
    ("missing input", lambda m, s: s.run(None, {}), ValueError),
    ("wrong dtype", lambda m, s: s.run(None, {"x": np.zeros((1, 3), np.float64)}), "InvalidArgument"),
    ("wrong dim", lambda m, s: s.run(None, {"x": np.zeros((1, 4), np.float32)}), "InvalidArgument"),
    ("unknown input", lambda m, s: s.run(None, {"x": np.zeros((1, 3), np.float32), "q": np.zeros(1)}), "InvalidArgument"),
    ("unknown output", lambda m, s: s.run(["nope"], {"x": np.zeros((1, 3), np.float32)}), "InvalidArgument"),
    ("missing file", lambda m, s: m.InferenceSession(os.path.join(onyx_harness._work_dir(), "absent.onnx")), "NoSuchFile"),
    ("not a model", lambda m, s: m.InferenceSession(b"\x08\x07garbage that is no protobuf"), "InvalidProtobuf"),
]


@pytest.mark.parametrize("what,call,cls", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_have_onnxruntimes_classes(what, call, cls):
    def raised(module):
        session = module.InferenceSession(relu_model())
        with pytest.raises(Exception) as info:
            call(module, session)
        return info.value

    ort_error, our_error = raised(onnxruntime), raised(onyx)
    assert type(our_error).__name__ == type(ort_error).__name__, (what, ort_error, our_error)
    if isinstance(cls, str):
        assert isinstance(our_error, getattr(state, cls))
        assert str(our_error).startswith(str(ort_error).split(" : ", 3)[0])  # "[ONNXRuntimeError] : 2 ..."


def test_error_messages_name_what_they_are_about():
    session = onyx.InferenceSession(relu_model())
    with pytest.raises(state.InvalidArgument, match="'q'.*its inputs: x"):
        session.run(None, {"x": np.zeros((1, 3), np.float32), "q": np.zeros(1)})
    with pytest.raises(state.InvalidArgument, match="input 'x'.*dimension 1 is 4 instead of 3"):
        session.run(None, {"x": np.zeros((1, 4), np.float32)})


def test_unavailable_provider_falls_back_with_onnxruntimes_warning():
    providers = [("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"]
    messages = {}
    # A build with the CUDA provider has it available (no warning): test_cuda_fallback.py covers that.
    onyx_lacks_cuda = "CUDAExecutionProvider" not in onyx.get_available_providers()
    for module in (onnxruntime, onyx) if onyx_lacks_cuda else (onnxruntime,):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            session = module.InferenceSession(relu_model(), providers=providers)
        messages[module.__name__] = [str(w.message) for w in caught if w.category is UserWarning]
        assert session.get_providers() == ["CPUExecutionProvider"]
        assert session.get_provider_options() == {"CPUExecutionProvider": {}}
    want = "Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: '{}'"
    assert messages["onnxruntime"] == [want.format(", ".join(onnxruntime.get_available_providers()))]
    if onyx_lacks_cuda:
        assert messages["onyx"] == [want.format(", ".join(onyx.get_available_providers()))]


def test_disabled_fallback_makes_an_unavailable_provider_an_error():
    with pytest.warns(UserWarning), pytest.raises(state.EPFail, match="TensorrtExecutionProvider is not available"):
        onyx.InferenceSession(relu_model(), providers=["TensorrtExecutionProvider"], enable_fallback=0)
    session = onyx.InferenceSession(relu_model())
    session.disable_fallback()
    with pytest.warns(UserWarning), pytest.raises(state.EPFail, match="TensorrtExecutionProvider"):
        session.set_providers(["TensorrtExecutionProvider"])
    session.enable_fallback()
    with pytest.warns(UserWarning):
        session.set_providers(["TensorrtExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_unknown_provider_falls_back_like_onnxruntime(capsys):
    for module in (onnxruntime, onyx):
        with pytest.warns(UserWarning, match="FooExecutionProvider"):
            session = module.InferenceSession(relu_model(), providers=["FooExecutionProvider"])
        assert session.get_providers() == ["CPUExecutionProvider"]
        assert "Falling back to ['CPUExecutionProvider'] and retrying." in capsys.readouterr().out
        with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="Unknown Provider Type: FooExecutionProvider"):
            module.InferenceSession(relu_model(), providers=["FooExecutionProvider"], enable_fallback=0)


def test_provider_argument_checks_match_onnxruntime():
    for module in (onnxruntime, onyx):
        with pytest.raises(ValueError, match="same length"):
            module.InferenceSession(relu_model(), providers=["CPUExecutionProvider"], provider_options=[{}, {}],
                                    enable_fallback=0)
        with pytest.raises(ValueError, match="either strings or"):
            module.InferenceSession(relu_model(), providers=[("CPUExecutionProvider",)], enable_fallback=0)


def test_cpu_provider_options_are_not_ignored():
    with pytest.raises(state.InvalidArgument, match="arena_extend_strategy"):
        onyx.InferenceSession(relu_model(), providers=[("CPUExecutionProvider", {"arena_extend_strategy": "1"})])


def test_module_functions():
    assert onyx.get_available_providers()[-1] == "CPUExecutionProvider"
    assert set(onyx.get_available_providers()) <= set(onyx.get_all_providers())
    assert onyx.get_all_providers() == onnxruntime.get_all_providers()
    assert onyx.get_device() == ("GPU" if "CUDAExecutionProvider" in onyx.get_available_providers() else "CPU")
    assert onyx.__version__ == onyx.get_version_string() == onyx.version == "0.1.0"
    from importlib.metadata import version

    assert version("onyx") == onyx.__version__  # the wheel's version is CMake's project version


def test_run_async_calls_back():
    import threading

    done = threading.Event()
    seen = {}

    def callback(results, user_data, error):
        seen.update(results=results, user_data=user_data, error=error)
        done.set()

    session = onyx.InferenceSession(relu_model())
    session.run_async(None, {"x": np.array([[-1, 2, 3]], np.float32)}, callback, "data")
    assert done.wait(30)
    assert seen["error"] == "" and seen["user_data"] == "data"
    np.testing.assert_array_equal(seen["results"][0], [[0, 2, 3]])


def test_add_provider_is_used_when_no_providers_are_given():
    so = onyx.SessionOptions()
    assert not so.has_providers()
    so.add_provider("TensorrtExecutionProvider", {"device_id": "0"})
    assert so.has_providers()
    with pytest.warns(UserWarning, match="TensorrtExecutionProvider"):  # it was asked for, and is not here
        session = onyx.InferenceSession(relu_model(), so)
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_fused_operator_statistics():
    stats = onyx.InferenceSession(conv_relu_model()).get_fused_operator_statistics()
    assert stats.get("FusedConv", 0) >= 1 or any("Conv" in op for op in stats), stats
