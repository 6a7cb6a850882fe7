"""ZipMap, CastMap and DictVectorizer: a plain Python reference of the spec (and ONNX Runtime's
documented choices: key order, pad text, float formatting) is the oracle, and ONNX Runtime's own
outputs where its Python package takes the map (ZipMap, DictVectorizer). Map inputs go in as
MapProto files."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ml_util import save
from onyx_harness import run_onyx_values, run_ort


def map_model(op_type, in_type, out_type, **attrs):
    node = helper.make_node(op_type, ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], f"{op_type}_graph", [helper.make_value_info("X", in_type)],
                              [helper.make_value_info("Y", out_type)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    return model


def map_type(key, value):
    t = onnx.TypeProto()
    t.map_type.key_type = key
    t.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(value, None))
    return t


def tensor_type(elem):
    return helper.make_tensor_type_proto(elem, None)


def _map_proto(keys, values):
    from onnx import MapProto, SequenceProto
    m = MapProto()
    m.name = "X"
    if keys.dtype.kind in "OU":
        m.key_type = TensorProto.STRING
        m.string_keys.extend([k.encode() for k in keys])
    else:
        m.key_type = TensorProto.INT64
        m.keys.extend(keys.tolist())
    m.values.elem_type = SequenceProto.TENSOR
    # One scalar tensor per key, as ONNX test data stores map values.
    for v in values:
        if values.dtype.kind in "OU":
            m.values.tensor_values.append(helper.make_tensor("", TensorProto.STRING, [], [str(v).encode()]))
        else:
            m.values.tensor_values.append(numpy_helper.from_array(np.array(v, dtype=values.dtype)))
    return m


@pytest.mark.parametrize("labels", [["a", "b", "c"], [10, 20, 30]])
@pytest.mark.parametrize("shape", [(4, 3), (3,)])
def test_zipmap(labels, shape):
    strings = isinstance(labels[0], str)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    key_type = TensorProto.STRING if strings else TensorProto.INT64
    attrs = {"classlabels_strings": labels} if strings else {"classlabels_int64s": labels}
    out_type = helper.make_sequence_type_proto(map_type(key_type, TensorProto.FLOAT))
    node = helper.make_node("ZipMap", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "zipmap", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                              [helper.make_value_info("Y", out_type)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    path = save(model, "zipmap")
    got = run_onyx_values(path, {"X": x})[0]
    rows = x.reshape(-1, len(labels))
    expected = [dict(zip(labels, row.tolist())) for row in rows]
    from_ort = run_ort(path, {"X": x})[0]
    assert len(got) == len(expected) == len(from_ort)
    for g, e, o in zip(got, expected, from_ort):
        assert list(g.keys()) == list(e.keys()) == list(o.keys())
        np.testing.assert_allclose(list(g.values()), list(e.values()), rtol=1e-6)
        np.testing.assert_allclose(list(g.values()), list(o.values()), rtol=1e-6)


def test_zipmap_rejects_wrong_width():
    x = np.zeros((2, 4), dtype=np.float32)
    out_type = helper.make_sequence_type_proto(map_type(TensorProto.INT64, TensorProto.FLOAT))
    node = helper.make_node("ZipMap", ["X"], ["Y"], domain="ai.onnx.ml", classlabels_int64s=[1, 2, 3])
    graph = helper.make_graph([node], "zipmap", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])],
                              [helper.make_value_info("Y", out_type)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    with pytest.raises(RuntimeError, match="class labels"):
        run_onyx_values(save(model, "zipmap"), {"X": x})


@pytest.mark.parametrize("cast_to", ["TO_FLOAT", "TO_INT64", "TO_STRING"])
@pytest.mark.parametrize("form", ["DENSE", "SPARSE"])
def test_cast_map_from_float(cast_to, form):
    d = {5: 2.5, 0: -1.25, 2: 7.0}
    out_elem = {"TO_FLOAT": TensorProto.FLOAT, "TO_INT64": TensorProto.INT64, "TO_STRING": TensorProto.STRING}[cast_to]
    model = map_model("CastMap", map_type(TensorProto.INT64, TensorProto.FLOAT), tensor_type(out_elem),
                      cast_to=cast_to, map_form=form, max_map=4)
    got = run_onyx_values(save(model, "castmap"), {"X": _map_proto(np.array(list(d), np.int64),
                                                                   np.array(list(d.values()), np.float32))})[0]
    conv = {"TO_FLOAT": float, "TO_INT64": lambda v: int(v), "TO_STRING": lambda v: "%f" % v}[cast_to]
    pad = {"TO_FLOAT": 0.0, "TO_INT64": 0, "TO_STRING": "0.f"}[cast_to]
    if form == "DENSE":
        expected = [conv(d[k]) for k in sorted(d)]
    else:
        expected = [conv(d[k]) if k in d else pad for k in range(4)]
    assert got.shape == (1, len(expected))
    assert got.reshape(-1).tolist() == expected


@pytest.mark.parametrize("cast_to", ["TO_FLOAT", "TO_INT64", "TO_STRING"])
def test_cast_map_from_string(cast_to):
    d = {3: "12", 1: "-4", 2: "8"}
    out_elem = {"TO_FLOAT": TensorProto.FLOAT, "TO_INT64": TensorProto.INT64, "TO_STRING": TensorProto.STRING}[cast_to]
    model = map_model("CastMap", map_type(TensorProto.INT64, TensorProto.STRING), tensor_type(out_elem),
                      cast_to=cast_to)
    got = run_onyx_values(save(model, "castmap"), {"X": _map_proto(np.array(list(d), np.int64),
                                                                   np.array(list(d.values()), dtype=object))})[0]
    conv = {"TO_FLOAT": float, "TO_INT64": int, "TO_STRING": str}[cast_to]
    assert got.reshape(-1).tolist() == [conv(d[k]) for k in sorted(d)]


def test_cast_map_rejects_bad_number_text():
    model = map_model("CastMap", map_type(TensorProto.INT64, TensorProto.STRING), tensor_type(TensorProto.FLOAT),
                      cast_to="TO_FLOAT")
    with pytest.raises(RuntimeError, match="cannot read"):
        run_onyx_values(save(model, "castmap"), {"X": _map_proto(np.array([1], np.int64),
                                                                 np.array(["abc"], dtype=object))})


@pytest.mark.parametrize("value_np,value_type", [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE),
                                                 (np.int64, TensorProto.INT64), (object, TensorProto.STRING)])
def test_dict_vectorizer_string_keys(value_np, value_type):
    vocab = ["a", "c", "b", "z"]
    d = {"b": 3, "a": 1, "q": 9}
    values = np.array([str(v) if value_np is object else v for v in d.values()], dtype=value_np)
    model = map_model("DictVectorizer", map_type(TensorProto.STRING, value_type), tensor_type(value_type),
                      string_vocabulary=vocab)
    got = run_onyx_values(save(model, "dictvec"), {"X": _map_proto(np.array(list(d), dtype=object), values)})[0]
    zero = "" if value_np is object else 0
    expected = [values[list(d).index(k)] if k in d else zero for k in vocab]
    assert got.shape == (1, len(vocab))
    assert got.reshape(-1).tolist() == [e.item() if hasattr(e, "item") else e for e in expected]


def test_dict_vectorizer_int_keys():
    vocab = [7, 3, 5]
    d = {3: 1.5, 5: -2.0, 11: 4.0}
    model = map_model("DictVectorizer", map_type(TensorProto.INT64, TensorProto.FLOAT), tensor_type(TensorProto.FLOAT),
                      int64_vocabulary=vocab)
    feeds = {"X": _map_proto(np.array(list(d), np.int64), np.array(list(d.values()), np.float32))}
    path = save(model, "dictvec")
    got = run_onyx_values(path, feeds)[0]
    assert got.reshape(-1).tolist() == [0.0, 1.5, -2.0]
    np.testing.assert_array_equal(got, run_ort(path, feeds)[0])
