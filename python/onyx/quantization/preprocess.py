"""quant_pre_process: gets a float model ready for quantization, as ONNX Runtime's does: graph
optimization (Onyx's basic level: constant folding, BatchNormalization folded into Conv, ...),
then ONNX shape inference so that every tensor has a type and shape."""
import os
import re
import tempfile

from onyx.quantization._onnx import onnx_module


def quant_pre_process(input_model=None, output_model_path=None, skip_optimization=False, skip_onnx_shape=False,
                      skip_symbolic_shape=False, auto_merge=False, int_max=2**31 - 1, guess_output_rank=False,
                      verbose=0, save_as_external_data=False, all_tensors_to_one_file=False,
                      external_data_location=None, external_data_size_threshold=1024, **deprecated_kwargs):
    onnx = onnx_module()
    if deprecated_kwargs:
        raise TypeError(f"quant_pre_process: unknown arguments {sorted(deprecated_kwargs)}")
    if input_model is None or output_model_path is None:
        raise ValueError("quant_pre_process needs input_model and output_model_path")
    for name, value, default in (("auto_merge", auto_merge, False), ("int_max", int_max, 2**31 - 1),
                                 ("guess_output_rank", guess_output_rank, False)):
        if value != default:
            raise ValueError(f"quant_pre_process: {name} belongs to ONNX Runtime's symbolic shape inference, which "
                             "onyx.quantization does not have (it runs ONNX's shape inference with data propagation)")
    if isinstance(input_model, onnx.ModelProto):
        model = input_model
    else:
        model = onnx.load(os.fspath(input_model))
    if not skip_optimization:
        model = _optimize(model)
    if not skip_symbolic_shape:
        # propagates shape values through Shape/Gather/Concat... so that Reshape targets get known dims
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    if not skip_onnx_shape:
        model = onnx.shape_inference.infer_shapes(model)
    if verbose:
        print(f"quant_pre_process: {len(model.graph.node)} nodes written to {os.fspath(output_model_path)}")
    kwargs = {}
    if save_as_external_data:
        kwargs = dict(save_as_external_data=True, all_tensors_to_one_file=all_tensors_to_one_file,
                      location=external_data_location, size_threshold=external_data_size_threshold)
    onnx.save_model(model, os.fspath(output_model_path), **kwargs)


# Onyx's extended-level passes that write ONNX Runtime contrib ops (FusedConv, Gelu, Attention,
# ...) or integer ops: quantization wants standard float ops, so they are left out. What stays:
# the basic level (constant and shape folding, eliminations) and the folds of BatchNormalization,
# Add and Mul into Conv, all ONNX Runtime's basic level runs for quant_pre_process.
_CONTRIB_PASSES = [
    "AttentionFusion", "BiasGeluFusion", "BiasSoftmaxFusion", "ConvActivationFusion", "ConvInputAffineFusion",
    "ConvOnyxActivationFusion", "FastGeluFusion", "GeluFusion", "GptAttentionFusion", "LayerNormFusion",
    "MatMulAddFusion", "MatMulScaleFusion", "QdqConvMatMulFusion", "QdqDropFusion", "QdqDynamicMatMulFusion",
    "QdqOpFusion", "QdqS8ToU8", "SimplifiedLayerNormFusion", "SkipLayerNormFusion"]


def _optimize(model):
    """The model after Onyx's graph optimizations that keep standard ONNX ops, read back."""
    import onyx
    onnx = onnx_module()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "optimized.onnx")
        options = onyx.SessionOptions()
        options.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = path
        disabled = list(_CONTRIB_PASSES)
        data = model.SerializeToString()
        while True:
            try:
                onyx.InferenceSession(data, options, providers=["CPUExecutionProvider"], disabled_optimizers=disabled)
                break
            except Exception as e:  # a build without one of the passes refuses to disable it by name
                match = re.search(r"unknown optimizer pass '([^']+)'", str(e))
                if not match or match.group(1) not in disabled:
                    raise
                disabled.remove(match.group(1))
        optimized = onnx.load(path)
    before = {(n.domain or "", n.op_type) for n in model.graph.node}
    added = sorted({f"{d}.{t}" for d, t in ((n.domain or "", n.op_type) for n in optimized.graph.node)
                    if d not in ("", "ai.onnx") and (d, t) not in before})
    if added:
        raise RuntimeError(f"quant_pre_process: Onyx's optimizer wrote non-standard ops {added}; "
                           "run with skip_optimization=True")
    return optimized
