"""TreeEnsembleRegressor, TreeEnsembleClassifier (opsets 1 and 3) and TreeEnsemble (opset 5)
against ONNX Runtime, on random trees with every branch mode, missing-value tracking,
aggregate function, post-transform and base-value form."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_util import compare_with_ort, ml_model

MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def random_forest(rng, n_trees, depth, n_features, n_targets, modes=MODES, weights_per_leaf=1, positive=False,
                  missing=True, only_targets=None):
    """Complete trees in the opset 1-3 layout: a dict of node and leaf attribute lists."""
    f = {k: [] for k in ["nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
                         "w_ids", "w_nodeids", "w_treeids", "w_weights"]}
    inner = 2 ** depth - 1
    for t in range(n_trees):
        for nid in range(2 ** (depth + 1) - 1):
            f["nodes_treeids"].append(t)
            f["nodes_nodeids"].append(nid)
            if nid < inner:
                f["nodes_featureids"].append(int(rng.integers(n_features)))
                f["nodes_modes"].append(str(rng.choice(modes)))
                f["nodes_values"].append(float(np.round(rng.standard_normal(), 1)))
                f["nodes_truenodeids"].append(2 * nid + 1)
                f["nodes_falsenodeids"].append(2 * nid + 2)
                f["nodes_missing_value_tracks_true"].append(int(rng.integers(2)) if missing else 0)
            else:
                f["nodes_featureids"].append(0)
                f["nodes_modes"].append("LEAF")
                f["nodes_values"].append(0.0)
                f["nodes_truenodeids"].append(0)
                f["nodes_falsenodeids"].append(0)
                f["nodes_missing_value_tracks_true"].append(0)
                targets = only_targets if only_targets is not None else range(n_targets)
                chosen = rng.choice(list(targets), size=min(weights_per_leaf, len(targets)), replace=False)
                for target in chosen:
                    w = float(rng.standard_normal())
                    f["w_ids"].append(int(target))
                    f["w_nodeids"].append(nid)
                    f["w_treeids"].append(t)
                    f["w_weights"].append(abs(w) * 0.3 if positive else w)
    return f


def inputs(rng, n, n_features, dtype=np.float32, nans=True):
    # Values on the thresholds' 0.1 grid so EQ / NEQ branches are taken both ways.
    x = np.round(rng.standard_normal((n, n_features)), 1)
    if nans and dtype in (np.float32, np.float64):
        x[rng.random(x.shape) < 0.15] = np.nan
    if dtype in (np.int64, np.int32):
        x = np.round(x * 2)
    return x.astype(dtype)


def regressor_attrs(f, prefix="target", as_tensor=False):
    attrs = {k: v for k, v in f.items() if not k.startswith("w_")}
    attrs[f"{prefix}_ids"] = f["w_ids"]
    attrs[f"{prefix}_nodeids"] = f["w_nodeids"]
    attrs[f"{prefix}_treeids"] = f["w_treeids"]
    if as_tensor:
        del attrs["nodes_values"]
        attrs["nodes_values_as_tensor"] = helper.make_tensor("v", TensorProto.DOUBLE, [len(f["nodes_values"])],
                                                             f["nodes_values"])
        attrs[f"{prefix}_weights_as_tensor"] = helper.make_tensor("w", TensorProto.DOUBLE, [len(f["w_weights"])],
                                                                  f["w_weights"])
    else:
        attrs[f"{prefix}_weights"] = f["w_weights"]
    return attrs


@pytest.mark.parametrize("agg", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("n_targets", [1, 3])
def test_regressor_aggregates(agg, n_targets):
    rng = np.random.default_rng(100 + n_targets)
    f = random_forest(rng, 5, 3, 4, n_targets, weights_per_leaf=2)
    x = inputs(rng, 40, 4)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     n_targets=n_targets, aggregate_function=agg, **regressor_attrs(f))
    compare_with_ort(model, {"X": x}, "ter")


@pytest.mark.parametrize("post,n_targets", [("NONE", 3), ("SOFTMAX", 3), ("LOGISTIC", 3), ("SOFTMAX_ZERO", 3),
                                             ("PROBIT", 1), ("NONE", 1), ("LOGISTIC", 1)])
@pytest.mark.parametrize("base", ["none", "per_target"])
def test_regressor_post_and_base(post, n_targets, base):
    rng = np.random.default_rng(7)
    f = random_forest(rng, 4, 2, 3, n_targets, weights_per_leaf=1)
    if post == "PROBIT":
        f["w_weights"] = [0.05 + 0.1 * abs(w) for w in f["w_weights"]]
    attrs = regressor_attrs(f)
    if base == "per_target":
        attrs["base_values"] = [0.1 * (i + 1) for i in range(n_targets)]
    x = inputs(rng, 30, 3)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     n_targets=n_targets, post_transform=post, **attrs)
    compare_with_ort(model, {"X": x}, "ter")


def test_regressor_double_input():
    rng = np.random.default_rng(3)
    f = random_forest(rng, 3, 3, 4, 2, missing=False)
    x = inputs(rng, 25, 4, np.float64)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=2,
                     **regressor_attrs(f))
    compare_with_ort(model, {"X": x}, "ter")


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_regressor_integer_input(dtype):
    # ONNX Runtime has no integer kernel; the reference is ORT on the same values as float.
    from ml_util import save
    from onyx_harness import run_onyx, run_ort
    rng = np.random.default_rng(4)
    f = random_forest(rng, 3, 3, 4, 2, missing=False)
    x = inputs(rng, 25, 4, dtype)
    xf = x.astype(np.float32)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=2,
                     **regressor_attrs(f))
    float_model = ml_model("TreeEnsembleRegressor", {"X": xf}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                           n_targets=2, **regressor_attrs(f))
    expected = run_ort(save(float_model, "ter"), {"X": xf})[0]
    got = run_onyx(save(model, "ter"), {"X": x})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_regressor_rejects_partial_base_values():
    from ml_util import save
    from onyx_harness import run_onyx
    rng = np.random.default_rng(6)
    f = random_forest(rng, 2, 2, 3, 3)
    x = inputs(rng, 4, 3)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=3,
                     base_values=[0.5], **regressor_attrs(f))
    with pytest.raises(RuntimeError, match="base_values"):
        run_onyx(save(model, "ter"), {"X": x})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_regressor_double_tensor_attributes(dtype):
    rng = np.random.default_rng(5)
    f = random_forest(rng, 3, 3, 3, 2)
    # Thresholds and inputs on a 0.5 grid, exact in float and double alike.
    f["nodes_values"] = [round(v * 2) / 2 for v in f["nodes_values"]]
    x = (np.round(inputs(rng, 20, 3, np.float64) * 2) / 2).astype(dtype)
    attrs = regressor_attrs(f, as_tensor=True)
    attrs["base_values_as_tensor"] = helper.make_tensor("b", TensorProto.DOUBLE, [2], [0.5, -0.5])
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=3, n_targets=2,
                     **attrs)
    if dtype == np.float32:
        # ONNX Runtime wants double attributes with double input only; the float case is checked
        # against the same model with float attributes.
        float_model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                               n_targets=2, base_values=[0.5, -0.5], **regressor_attrs(f))
        from ml_util import save
        from onyx_harness import run_onyx, run_ort
        expected = run_ort(save(float_model, "ter"), {"X": x})[0]
        got = run_onyx(save(model, "ter"), {"X": x})[0]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    else:
        compare_with_ort(model, {"X": x}, "ter")


def test_regressor_1d_input_is_one_row():
    # ONNX Runtime reads a 1-D X as one feature; Onyx as one row of C features, checked
    # against ORT on the [1, C] form.
    from ml_util import save
    from onyx_harness import run_onyx, run_ort
    rng = np.random.default_rng(9)
    f = random_forest(rng, 2, 2, 3, 1)
    x2 = inputs(rng, 1, 3)
    model2 = ml_model("TreeEnsembleRegressor", {"X": x2}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=1,
                      **regressor_attrs(f))
    compare_with_ort(model2, {"X": x2}, "ter")
    model1 = ml_model("TreeEnsembleRegressor", {"X": x2[0]}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=1,
                      **regressor_attrs(f))
    expected = run_ort(save(model2, "ter"), {"X": x2})[0]
    got = run_onyx(save(model1, "ter"), {"X": x2[0]})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def classifier_attrs(f, n_classes, strings):
    attrs = regressor_attrs(f, prefix="class")
    if strings:
        attrs["classlabels_strings"] = [f"k{i}" for i in range(n_classes)]
    else:
        attrs["classlabels_int64s"] = [10 + 5 * i for i in range(n_classes)]
    return attrs


def classifier_outputs(strings):
    return [("Y", TensorProto.STRING if strings else TensorProto.INT64), ("Z", TensorProto.FLOAT)]


@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("strings", [False, True])
@pytest.mark.parametrize("base", [False, True])
def test_classifier_multiclass(post, strings, base):
    rng = np.random.default_rng(21)
    f = random_forest(rng, 6, 3, 4, 4, weights_per_leaf=2)
    attrs = classifier_attrs(f, 4, strings)
    if base:
        attrs["base_values"] = [0.1, -0.2, 0.3, 0.0]
    x = inputs(rng, 30, 4)
    model = ml_model("TreeEnsembleClassifier", {"X": x}, classifier_outputs(strings), ml_opset=1,
                     post_transform=post, **attrs)
    compare_with_ort(model, {"X": x}, "tec")


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
@pytest.mark.parametrize("base", [None, [0.4], [0.1, 0.4]])
@pytest.mark.parametrize("voting", ["class1", "both"])
def test_classifier_binary(positive, post, base, voting):
    rng = np.random.default_rng(33)
    f = random_forest(rng, 4, 2, 3, 2, positive=positive, only_targets=[1] if voting == "class1" else None)
    attrs = classifier_attrs(f, 2, False)
    if base is not None:
        attrs["base_values"] = base
    x = inputs(rng, 30, 3)
    model = ml_model("TreeEnsembleClassifier", {"X": x}, classifier_outputs(False), ml_opset=1,
                     post_transform=post, **attrs)
    compare_with_ort(model, {"X": x}, "tec")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_classifier_input_types(dtype):
    rng = np.random.default_rng(44)
    f = random_forest(rng, 3, 3, 3, 3, missing=False)
    x = inputs(rng, 20, 3, dtype)
    model = ml_model("TreeEnsembleClassifier", {"X": x}, classifier_outputs(True), ml_opset=1,
                     **classifier_attrs(f, 3, True))
    compare_with_ort(model, {"X": x}, "tec")


def test_classifier_double_tensor_attributes():
    rng = np.random.default_rng(45)
    f = random_forest(rng, 3, 3, 3, 3)
    x = inputs(rng, 20, 3, np.float64)
    attrs = classifier_attrs(f, 3, False)
    attrs.pop("class_weights")
    attrs.pop("nodes_values")
    attrs["nodes_values_as_tensor"] = helper.make_tensor("v", TensorProto.DOUBLE, [len(f["nodes_values"])],
                                                         f["nodes_values"])
    attrs["class_weights_as_tensor"] = helper.make_tensor("w", TensorProto.DOUBLE, [len(f["w_weights"])],
                                                          f["w_weights"])
    model = ml_model("TreeEnsembleClassifier", {"X": x}, classifier_outputs(False), ml_opset=3, **attrs)
    compare_with_ort(model, {"X": x}, "tec")


# ---- TreeEnsemble (ai.onnx.ml opset 5) ----

V5_MODES = [0, 1, 2, 3, 4, 5, 6]


def random_v5(rng, n_trees, depth, n_features, n_targets, use_member=True):
    """Complete trees in the opset 5 layout (node and leaf index spaces, set membership)."""
    a = {k: [] for k in ["nodes_featureids", "nodes_modes", "nodes_splits", "nodes_truenodeids", "nodes_falsenodeids",
                         "nodes_trueleafs", "nodes_falseleafs", "nodes_missing_value_tracks_true", "leaf_targetids",
                         "leaf_weights", "tree_roots", "membership_values"]}
    for _ in range(n_trees):
        base, inner = len(a["nodes_featureids"]), 2 ** depth - 1
        a["tree_roots"].append(base)
        for k in range(inner):
            mode = int(rng.choice(V5_MODES if use_member else V5_MODES[:6]))
            a["nodes_featureids"].append(int(rng.integers(n_features)))
            a["nodes_modes"].append(mode)
            a["nodes_splits"].append(float(np.round(rng.standard_normal(), 1)) if mode != 6 else 0.0)
            a["nodes_missing_value_tracks_true"].append(int(rng.integers(2)))
            if mode == 6:
                # ONNX Runtime takes integral set members only.
                a["membership_values"] += [float(v) for v in rng.integers(-2, 3, size=3)] + [float("nan")]
            for side, child in (("true", 2 * k + 1), ("false", 2 * k + 2)):
                if child < inner:
                    a[f"nodes_{side}nodeids"].append(base + child)
                    a[f"nodes_{side}leafs"].append(0)
                else:
                    a[f"nodes_{side}nodeids"].append(len(a["leaf_weights"]))
                    a[f"nodes_{side}leafs"].append(1)
                    a["leaf_targetids"].append(int(rng.integers(n_targets)))
                    a["leaf_weights"].append(float(rng.standard_normal()))
    return a


def v5_inputs(rng, n, n_features, dtype=np.float32):
    # Whole numbers (and NaN): ONNX Runtime tests set membership on values cast to integers,
    # which agrees with the spec's exact membership only for whole numbers.
    x = rng.integers(-2, 3, size=(n, n_features)).astype(np.float64)
    x[rng.random(x.shape) < 0.15] = np.nan
    return x.astype(dtype)


def v5_model(a, x, n_targets, aggregate=1, post=0):
    dt = TensorProto.DOUBLE if x.dtype == np.float64 else TensorProto.FLOAT
    if x.dtype == np.float16:
        dt = TensorProto.FLOAT16
    attrs = dict(n_targets=n_targets, aggregate_function=aggregate, post_transform=post,
                 nodes_featureids=a["nodes_featureids"], nodes_truenodeids=a["nodes_truenodeids"],
                 nodes_falsenodeids=a["nodes_falsenodeids"], nodes_trueleafs=a["nodes_trueleafs"],
                 nodes_falseleafs=a["nodes_falseleafs"], leaf_targetids=a["leaf_targetids"],
                 tree_roots=a["tree_roots"],
                 nodes_missing_value_tracks_true=a["nodes_missing_value_tracks_true"],
                 nodes_modes=helper.make_tensor("nodes_modes", TensorProto.UINT8, [len(a["nodes_modes"])],
                                                a["nodes_modes"]),
                 nodes_splits=helper.make_tensor("nodes_splits", dt, [len(a["nodes_splits"])], a["nodes_splits"]),
                 leaf_weights=helper.make_tensor("leaf_weights", dt, [len(a["leaf_weights"])], a["leaf_weights"]))
    if a["membership_values"]:
        attrs["membership_values"] = helper.make_tensor("membership_values", dt, [len(a["membership_values"])],
                                                        a["membership_values"])
    return ml_model("TreeEnsemble", {"X": x}, [("Y", dt)], ml_opset=5, onnx_opset=21, **attrs)


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("n_targets", [1, 3])
def test_tree_ensemble_v5_aggregates(aggregate, n_targets):
    rng = np.random.default_rng(50 + aggregate)
    a = random_v5(rng, 4, 3, 4, n_targets)
    x = v5_inputs(rng, 40, 4)
    compare_with_ort(v5_model(a, x, n_targets, aggregate=aggregate), {"X": x}, "te5")


@pytest.mark.parametrize("post", [0, 1, 2, 3])
def test_tree_ensemble_v5_post_transforms(post):
    # The spec numbers post_transform 1 = SOFTMAX, 2 = LOGISTIC; ONNX Runtime 1.30 reads them
    # the other way round, so its model gets the swapped code.
    from ml_util import save
    from onyx_harness import run_onyx, run_ort
    rng = np.random.default_rng(60 + post)
    a = random_v5(rng, 3, 2, 3, 3)
    x = v5_inputs(rng, 30, 3)
    ort_post = {1: 2, 2: 1}.get(post, post)
    expected = run_ort(save(v5_model(a, x, 3, post=ort_post), "te5"), {"X": x})[0]
    got = run_onyx(save(v5_model(a, x, 3, post=post), "te5"), {"X": x})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_tree_ensemble_v5_double():
    rng = np.random.default_rng(70)
    a = random_v5(rng, 3, 3, 3, 2)
    x = v5_inputs(rng, 30, 3, np.float64)
    compare_with_ort(v5_model(a, x, 2), {"X": x}, "te5")


def test_tree_ensemble_v5_float_inputs_no_sets():
    rng = np.random.default_rng(72)
    a = random_v5(rng, 4, 3, 3, 2, use_member=False)
    x = inputs(rng, 30, 3)
    compare_with_ort(v5_model(a, x, 2), {"X": x}, "te5")


def v5_reference(a, x, n_targets):
    """The spec's TreeEnsemble (SUM, no transform) in plain Python: exact set membership."""
    members, pos = {}, 0
    for i, mode in enumerate(a["nodes_modes"]):
        if mode == 6:
            s = []
            while not np.isnan(a["membership_values"][pos]):
                s.append(a["membership_values"][pos])
                pos += 1
            pos += 1
            members[i] = s
    ops = [lambda v, t: v <= t, lambda v, t: v < t, lambda v, t: v >= t, lambda v, t: v > t,
           lambda v, t: v == t, lambda v, t: v != t]
    out = np.zeros((len(x), n_targets))
    for r, row in enumerate(x):
        for root in a["tree_roots"]:
            node, leaf = root, False
            while not leaf:
                v = float(row[a["nodes_featureids"][node]])
                mode = a["nodes_modes"][node]
                t = np.float32(a["nodes_splits"][node])
                go = (bool(a["nodes_missing_value_tracks_true"][node]) and np.isnan(v)) or (
                    v in [float(np.float32(m)) for m in members[node]] if mode == 6 else ops[mode](np.float32(v), t))
                side = "true" if go else "false"
                node, leaf = a[f"nodes_{side}nodeids"][node], a[f"nodes_{side}leafs"][node]
            out[r, a["leaf_targetids"][node]] += a["leaf_weights"][node]
    return out.astype(np.float32)


def test_tree_ensemble_v5_fractional_sets_reference():
    # ONNX Runtime rejects non-integral set members; the spec allows them (as the conformance
    # test set_membership does), so a plain reference checks them.
    from ml_util import save
    from onyx_harness import run_onyx
    rng = np.random.default_rng(73)
    a = random_v5(rng, 3, 3, 3, 2)
    a["membership_values"] = [v if np.isnan(v) else v + 0.5 for v in a["membership_values"]]
    x = (np.round(rng.standard_normal((30, 3)) * 2) / 2).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    got = run_onyx(save(v5_model(a, x, 2), "te5"), {"X": x})[0]
    np.testing.assert_allclose(got, v5_reference(a, x, 2), rtol=1e-5, atol=1e-5)


def test_tree_ensemble_v5_float16_reference():
    # float16 in and out; the plain reference runs on the same float16 values.
    from ml_util import save
    from onyx_harness import run_onyx
    rng = np.random.default_rng(74)
    a = random_v5(rng, 3, 3, 3, 2, use_member=False)
    a["nodes_splits"] = [float(np.float16(v)) for v in a["nodes_splits"]]
    a["leaf_weights"] = [float(np.float16(v)) for v in a["leaf_weights"]]
    x = v5_inputs(rng, 20, 3, np.float16)
    got = run_onyx(save(v5_model(a, x, 2), "te5"), {"X": x})[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), v5_reference(a, x.astype(np.float32), 2), rtol=2e-3, atol=2e-3)


def test_regressor_opset1_rejects_tensor_attributes():
    from ml_util import save
    from onyx_harness import run_onyx
    rng = np.random.default_rng(8)
    f = random_forest(rng, 2, 2, 3, 1)
    x = inputs(rng, 3, 3)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=1,
                     **regressor_attrs(f, as_tensor=True))
    with pytest.raises(RuntimeError, match="opset 3"):
        run_onyx(save(model, "ter"), {"X": x})


def test_rejects_cycles_and_missing_children():
    from ml_util import save
    from onyx_harness import run_onyx
    x = np.zeros((2, 2), dtype=np.float32)
    base = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 1, 0],
                nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"], nodes_values=[0.5, 0.5, 0.0],
                nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 2, 0],
                target_ids=[0], target_nodeids=[2], target_treeids=[0], target_weights=[1.0])
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=1, **base)
    with pytest.raises(RuntimeError, match="cycle"):
        run_onyx(save(model, "ter"), {"X": x})
    base["nodes_truenodeids"] = [1, 7, 0]
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=1, **base)
    with pytest.raises(RuntimeError, match="does not exist"):
        run_onyx(save(model, "ter"), {"X": x})
    # A feature past the input's width.
    base["nodes_truenodeids"] = [1, 2, 0]
    base["nodes_featureids"] = [0, 5, 0]
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=1, **base)
    with pytest.raises(RuntimeError, match="feature 5"):
        run_onyx(save(model, "ter"), {"X": x})


@pytest.mark.parametrize("case", ["class0_votes", "class0_votes_base", "sparse_leaves_base2", "sparse_leaves_base1",
                                  "partial_multiclass"])
def test_classifier_partial_votes(case):
    # Leaves that vote for some classes only: ORT's has-score rules for labels and base values.
    rng = np.random.default_rng(90)
    x = inputs(rng, 20, 3)
    extra = {}
    if case.startswith("class0"):
        f, n = random_forest(rng, 3, 2, 3, 2, only_targets=[0]), 2
        if case.endswith("base"):
            extra["base_values"] = [0.3, 0.6]
    elif case.startswith("sparse"):
        f, n = random_forest(rng, 2, 2, 3, 2, weights_per_leaf=1), 2
        extra["base_values"] = [0.3, 0.6] if case.endswith("2") else [0.3]
        extra["post_transform"] = "LOGISTIC"
    else:
        f, n = random_forest(rng, 3, 2, 3, 4, only_targets=[0, 2]), 4
        extra["base_values"] = [0.1, 0.2, 0.3, 0.4]
    model = ml_model("TreeEnsembleClassifier", {"X": x}, classifier_outputs(True), ml_opset=1,
                     **classifier_attrs(f, n, True), **extra)
    # One base value for two classes: ORT's in-process result depends on the sessions before it
    # (run_ort_in_fresh_process), so this case's reference comes from a fresh process.
    compare_with_ort(model, {"X": x}, "tec", fresh_ort=case == "sparse_leaves_base1")


def test_many_rows_threaded():
    from ml_util import save
    from onyx_harness import run_onyx, run_ort
    rng = np.random.default_rng(91)
    f = random_forest(rng, 20, 4, 6, 3, weights_per_leaf=2)
    x = inputs(rng, 3000, 6)
    model = ml_model("TreeEnsembleRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, n_targets=3,
                     **regressor_attrs(f))
    path = save(model, "ter")
    expected = run_ort(path, {"X": x})[0]
    np.testing.assert_allclose(run_onyx(path, {"X": x}, threads=4)[0], expected, rtol=1e-5, atol=1e-5)
