"""The creation cache's default key ("content") remembers a model file's hash by the file's
identity (src/runtime/creation_cache_hash_memo.h): a settled file gets a record and hits through
it, a weight rewritten in place with its modification time put back still misses (its change
time moved) and the new session computes with the new weights, as ONNX Runtime does; the
"content_always" key writes no record."""
import glob
import os
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

import onyx

KEY_DIR = "session.onyx_creation_cache_dir"
KEY_MODE = "session.onyx_creation_cache_key"


def model_bytes(scale):
    w = (np.arange(64, dtype=np.float32).reshape(8, 8) / 64.0) * scale
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Relu", ["m"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [numpy_helper.from_array(w, "W")])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def create(path, cache, mode=None):
    options = onyx.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 1
    options.add_session_config_entry(KEY_DIR, str(cache))
    if mode is not None:
        options.add_session_config_entry(KEY_MODE, mode)
    return onyx.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def records(cache):
    return glob.glob(os.path.join(str(cache), "onyx-file-*.hash"))


def test_record_hits_and_a_weight_rewritten_in_place_misses(tmp_path, capfd):
    path = str(tmp_path / "m.onnx")
    with open(path, "wb") as f:
        f.write(model_bytes(1.0))
    time.sleep(3.2)  # older than the 3 s a file must be unchanged to be remembered
    cache = tmp_path / "cache"
    # content_always reads every byte every time and keeps no record.
    create(path, cache, "content_always")
    create(path, cache, "content_always")
    assert "creation cache hit" in capfd.readouterr().err
    assert records(cache) == []
    # The default remembers the settled file's hash, and hits.
    create(path, cache)
    assert "creation cache written" in capfd.readouterr().err
    assert len(records(cache)) == 1
    create(path, cache)
    assert "creation cache hit" in capfd.readouterr().err

    before = os.stat(path)
    new = model_bytes(2.0)
    assert len(new) == before.st_size
    with open(path, "r+b") as f:  # in place: same inode, same size
        f.write(new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns

    session = create(path, cache)
    assert "creation cache written" in capfd.readouterr().err
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    want = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(session.run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(want, np.maximum(x @ (np.arange(64, dtype=np.float32).reshape(8, 8) / 64.0), 0))


def test_unknown_key_mode_is_an_error(tmp_path):
    path = str(tmp_path / "m.onnx")
    with open(path, "wb") as f:
        f.write(model_bytes(1.0))
    try:
        create(path, tmp_path / "cache", "content_sometimes")
    except Exception as e:  # noqa: BLE001 - the binding's error type
        assert "'content', 'content_always' or 'file_stat'" in str(e) and "content_sometimes" in str(e), str(e)
    else:
        raise AssertionError("expected an error")
