"""Control flow and sequence kernels checked against ONNX Runtime 1.30 on cases the ONNX
conformance data does not cover: Scan axes/directions, Scan-8 sequence_lens, while-style
Loops, zero-trip Loops, nested subgraphs reading outer scopes, sequence positions."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, opset, name, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onyx-tests")
    m.ir_version = 8
    return save_model(m, name + ".onnx")


def check(path, feeds):
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds))


@pytest.mark.parametrize("opset", [11, 16])
def test_scan_axes_and_directions(opset):
    # state: [2]; x1: [2, T] scanned along axis 1 in reverse; x2: [T, 2] forward.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["t"]),
         helper.make_node("Mul", ["t", "b"], ["s_out"]),
         helper.make_node("Identity", ["t"], ["y1"]),
         helper.make_node("Sub", ["a", "b"], ["y2"])],
        "body",
        [vi("s_in", F, [2]), vi("a", F, [2]), vi("b", F, [2])],
        [vi("s_out", F, [2]), vi("y1", F, [2]), vi("y2", F, [2])])
    node = helper.make_node("Scan", ["s0", "x1", "x2"], ["s", "z1", "z2"], body=body, num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[1, 0],
                            scan_output_axes=[1, -2], scan_output_directions=[0, 1])
    path = model([node], [vi("s0", F, [2]), vi("x1", F, [2, 4]), vi("x2", F, [4, 2])],
                 [vi("s", F, None), vi("z1", F, None), vi("z2", F, None)], opset, f"scan_axes_{opset}")
    rng = np.random.default_rng(0)
    check(path, {"s0": rng.standard_normal(2).astype(np.float32),
                 "x1": rng.standard_normal((2, 4)).astype(np.float32),
                 "x2": rng.uniform(0.5, 1.5, (4, 2)).astype(np.float32)})


def test_scan8_batch_with_directions():
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y"])],
        "body", [vi("s_in", F, [2]), vi("x", F, [2])], [vi("s_out", F, [2]), vi("y", F, [2])])
    node = helper.make_node("Scan", ["", "s0", "x"], ["s", "z"], body=body, num_scan_inputs=1, directions=[1])
    path = model([node], [vi("s0", F, [3, 2]), vi("x", F, [3, 4, 2])], [vi("s", F, None), vi("z", F, None)], 8,
                 "scan8_batch")
    rng = np.random.default_rng(1)
    check(path, {"s0": rng.standard_normal((3, 2)).astype(np.float32),
                 "x": rng.standard_normal((3, 4, 2)).astype(np.float32)})


def test_loop_while_condition_and_scan_output():
    # while (cond): sum += steps[i]; cond = flags[i]. No trip count. (Element i of a sequence
    # made from the inputs stands in for comparison ops, so only this family's kernels run.)
    body = helper.make_graph(
        [helper.make_node("SequenceAt", ["steps", "i"], ["step"]),
         helper.make_node("SequenceAt", ["flags", "i"], ["c_out"]),
         helper.make_node("Add", ["s_in", "step"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["scan"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [1])],
        [vi("c_out", B, []), vi("s_out", F, [1]), vi("scan", F, [1])])
    nodes = [helper.make_node("SplitToSequence", ["step_values"], ["steps"], axis=0),
             helper.make_node("SplitToSequence", ["flag_values"], ["flags"], axis=0, keepdims=0),
             helper.make_node("Loop", ["", "cond", "s0"], ["s", "scans"], body=body)]
    path = model(nodes, [vi("cond", B, []), vi("s0", F, [1]), vi("step_values", F, [6]), vi("flag_values", B, [6])],
                 [vi("s", F, None), vi("scans", F, None)], 13, "loop_while")
    check(path, {"cond": np.array(True), "s0": np.array([0.5], np.float32),
                 "step_values": np.array([1, 2, 3, 4, 5, 6], np.float32),
                 "flag_values": np.array([True, True, True, False, True, True])})


def test_loop_zero_trips_keeps_initial_values():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["s_in", "s_in"], ["s_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [3])], [vi("c_out", B, []), vi("s_out", F, [3])])
    node = helper.make_node("Loop", ["m", "cond", "s0"], ["s"], body=body)
    path = model([node], [vi("m", I64, []), vi("cond", B, []), vi("s0", F, [3])], [vi("s", F, None)], 16,
                 "loop_zero")
    for m, c in [(0, True), (4, False), (3, True)]:
        check(path, {"m": np.array(m, np.int64), "cond": np.array(c), "s0": np.array([1, 2, 3], np.float32)})


def test_if_inside_loop_reads_outer_scope():
    # The If branches read `bias` (main graph) and `s_in` (the Loop body).
    then_g = helper.make_graph([helper.make_node("Add", ["s_in", "bias"], ["r"])], "then", [], [vi("r", F, [2])])
    else_g = helper.make_graph([helper.make_node("Sub", ["s_in", "bias"], ["r2"])], "else", [], [vi("r2", F, [2])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("SequenceAt", ["flags", "i"], ["first_half"]),
         helper.make_node("If", ["first_half"], ["s_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["s_out"], ["trace"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [2])],
        [vi("c_out", B, []), vi("s_out", F, [2]), vi("trace", F, [2])])
    nodes = [helper.make_node("SplitToSequence", ["flag_values"], ["flags"], axis=0, keepdims=0),
             helper.make_node("Loop", ["m", "", "s0"], ["s", "trace_all"], body=body)]
    path = model(nodes, [vi("m", I64, []), vi("s0", F, [2]), vi("bias", F, [2]), vi("flag_values", B, [6])],
                 [vi("s", F, None), vi("trace_all", F, None)], 13, "loop_if_outer")
    check(path, {"m": np.array(6, np.int64), "s0": np.array([1, -1], np.float32),
                 "bias": np.array([0.5, 2.0], np.float32),
                 "flag_values": np.array([True, True, False, True, False, False])})


def test_sequence_positions_and_concat():
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s1"]),
        helper.make_node("SequenceInsert", ["s1", "b", "neg1"], ["s2"]),  # a b b c
        helper.make_node("SequenceErase", ["s2", "zero"], ["s3"]),  # b b c
        helper.make_node("SequenceAt", ["s3", "neg1"], ["last"]),  # c
        helper.make_node("SequenceLength", ["s3"], ["len"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["stacked"], axis=-1, new_axis=1),
        helper.make_node("ConcatFromSequence", ["s3"], ["joined"], axis=1),
        helper.make_node("SplitToSequence", ["x", "two"], ["parts"], axis=1),
        helper.make_node("ConcatFromSequence", ["parts"], ["parts_stacked"], axis=0, new_axis=1),
        helper.make_node("SplitToSequence", ["x"], ["cols"], axis=-1, keepdims=0),
        helper.make_node("SequenceAt", ["cols", "one"], ["col1"]),
    ]
    consts = [helper.make_tensor("neg1", I64, [], [-1]), helper.make_tensor("zero", I64, [], [0]),
              helper.make_tensor("one", I64, [], [1]), helper.make_tensor("two", I64, [], [2])]
    path = model(nodes, [vi(n, F, [2, 3]) for n in "abc"] + [vi("x", F, [3, 6])],
                 [vi("last", F, None), vi("len", I64, None), vi("stacked", F, None), vi("joined", F, None),
                  vi("col1", F, None)], 13, "sequence_positions", consts)
    rng = np.random.default_rng(2)
    feeds = {n: rng.standard_normal((2, 3)).astype(np.float32) for n in "abc"}
    feeds["x"] = rng.standard_normal((3, 6)).astype(np.float32)
    check(path, feeds)


def test_sequence_map_with_tensor_input():
    body = helper.make_graph([helper.make_node("Mul", ["e", "w"], ["o"]), helper.make_node("Add", ["e", "e"], ["sh"])],
                             "body", [vi("e", F, None), vi("w", F, [1])], [vi("o", F, None), vi("sh", F, None)])
    nodes = [helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], axis=0),
             helper.make_node("SequenceMap", ["seq", "w"], ["out_seq", "shapes"], body=body),
             helper.make_node("ConcatFromSequence", ["out_seq"], ["y"], axis=0),
             helper.make_node("ConcatFromSequence", ["shapes"], ["z"], axis=0)]
    path = model(nodes, [vi("x", F, [6, 2]), vi("w", F, [1])], [vi("y", F, None), vi("z", F, None)], 17,
                 "sequence_map_tensor", [helper.make_tensor("sizes", I64, [3], [1, 2, 3])])
    check(path, {"x": np.arange(12, dtype=np.float32).reshape(6, 2), "w": np.array([3.0], np.float32)})


def test_loop_without_bound_or_condition_fails_cleanly():
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Identity", ["s_in"], ["s_out"])],
                             "body", [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [1])],
                             [vi("c_out", B, []), vi("s_out", F, [1])])
    node = helper.make_node("Loop", ["", "", "s0"], ["s"], body=body)
    path = model([node], [vi("s0", F, [1])], [vi("s", F, None)], 13, "loop_endless")
    with pytest.raises(RuntimeError, match="never end"):
        run_onyx(path, {"s0": np.array([1.0], np.float32)})


def test_sequence_at_out_of_range_fails_cleanly():
    nodes = [helper.make_node("SequenceConstruct", ["a"], ["s"]), helper.make_node("SequenceAt", ["s", "p"], ["y"])]
    path = model(nodes, [vi("a", F, [2]), vi("p", I64, [])], [vi("y", F, None)], 13, "sequence_at_range")
    with pytest.raises(RuntimeError, match="outside"):
        run_onyx(path, {"a": np.zeros(2, np.float32), "p": np.array(3, np.int64)})
