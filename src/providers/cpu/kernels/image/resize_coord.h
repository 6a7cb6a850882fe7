// Resize's coordinate_transformation_mode values, shared by the generic kernel (resize.cc) and
// the 8-bit linear paths that follow ONNX Runtime's arithmetic (resize_linear_8bit.cc).
#pragma once

namespace onyx {

enum class ResizeCoord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};

}  // namespace onyx
