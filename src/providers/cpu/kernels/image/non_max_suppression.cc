// NonMaxSuppression (opsets 10, 11): per batch and class, greedily keeps the highest-scoring
// boxes whose IoU with every box kept so far is at most iou_threshold, up to
// max_output_boxes_per_class, ignoring boxes scoring at or below score_threshold (when given).
// Boxes are [y1, x1, y2, x2] with the corners in either order (center_point_box 0) or
// [x_center, y_center, width, height] (1). Output: int64 [selected, 3] rows of
// (batch, class, box), batch-major, then class, then descending score (ties: lower box first).
// IoU is computed in float, as ONNX Runtime does, so threshold boundaries behave alike.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

struct Box {
  float y1, x1, y2, x2, area;
};

class NonMaxSuppression final : public OpKernel {
 public:
  explicit NonMaxSuppression(const KernelInfo& info) : center_point_box_(info.GetIntOr("center_point_box", 0)) {
    if (center_point_box_ != 0 && center_point_box_ != 1) info.Fail("center_point_box must be 0 or 1");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& boxes = ctx.required_input(0);
    const Tensor& scores = ctx.required_input(1);
    if (boxes.rank() != 3 || boxes.dim(2) != 4) ctx.Fail("boxes must be [num_batches, spatial_dimension, 4]");
    if (scores.rank() != 3) ctx.Fail("scores must be [num_batches, num_classes, spatial_dimension]");
    const int64_t batches = boxes.dim(0), num_boxes = boxes.dim(1), classes = scores.dim(1);
    if (scores.dim(0) != batches || scores.dim(2) != num_boxes) ctx.Fail("boxes and scores disagree on their dims");
    if (boxes.dtype() != DataType::kFloat || scores.dtype() != DataType::kFloat)
      ctx.Fail("boxes and scores must be float");
    int64_t max_per_class = 0;
    if (const Tensor* t = ctx.input(2); t && t->size() > 0) {
      if (t->dtype() != DataType::kInt64) ctx.Fail("max_output_boxes_per_class must be int64");
      max_per_class = std::max<int64_t>(t->data<int64_t>()[0], 0);
    }
    float iou_threshold = 0.0f;
    if (const Tensor* t = ctx.input(3); t && t->size() > 0) {
      if (t->dtype() != DataType::kFloat) ctx.Fail("iou_threshold must be float");
      iou_threshold = t->data<float>()[0];
      if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) ctx.Fail("iou_threshold must be within [0, 1]");
    }
    bool has_score_threshold = false;
    float score_threshold = 0.0f;
    if (const Tensor* t = ctx.input(4); t && t->size() > 0) {
      if (t->dtype() != DataType::kFloat) ctx.Fail("score_threshold must be float");
      has_score_threshold = true;
      score_threshold = t->data<float>()[0];
    }
    std::vector<int64_t> selected;  // flattened (batch, class, box) triples
    if (max_per_class > 0 && num_boxes > 0) {
      const float* pb = boxes.data<float>();
      const float* ps = scores.data<float>();
      std::vector<Box> norm(static_cast<size_t>(num_boxes));
      std::vector<int64_t> order, kept;
      for (int64_t b = 0; b < batches; ++b) {
        for (int64_t i = 0; i < num_boxes; ++i) norm[i] = Normalize(pb + (b * num_boxes + i) * 4);
        for (int64_t c = 0; c < classes; ++c) {
          const float* s = ps + (b * classes + c) * num_boxes;
          order.clear();
          for (int64_t i = 0; i < num_boxes; ++i)
            if (!std::isnan(s[i]) && (!has_score_threshold || s[i] > score_threshold)) order.push_back(i);
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t z) { return s[a] > s[z]; });
          kept.clear();
          for (int64_t i : order) {
            if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
            bool suppressed = false;
            for (int64_t k : kept)
              if (IouExceeds(norm[i], norm[k], iou_threshold)) {
                suppressed = true;
                break;
              }
            if (suppressed) continue;
            kept.push_back(i);
            selected.insert(selected.end(), {b, c, i});
          }
        }
      }
    }
    const int64_t count = static_cast<int64_t>(selected.size() / 3);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {count, 3});
    std::copy(selected.begin(), selected.end(), y.data<int64_t>());
  }

 private:
  Box Normalize(const float* p) const {
    Box b;
    if (center_point_box_ == 1) {
      const float xc = p[0], yc = p[1], w = p[2], h = p[3];
      b.x1 = xc - w / 2.0f, b.x2 = xc + w / 2.0f, b.y1 = yc - h / 2.0f, b.y2 = yc + h / 2.0f;
    } else {
      b.y1 = std::min(p[0], p[2]), b.y2 = std::max(p[0], p[2]);
      b.x1 = std::min(p[1], p[3]), b.x2 = std::max(p[1], p[3]);
    }
    b.area = (b.x2 - b.x1) * (b.y2 - b.y1);
    return b;
  }

  static bool IouExceeds(const Box& a, const Box& b, float threshold) {
    const float ix = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
    const float iy = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
    if (ix <= 0.0f || iy <= 0.0f) return false;
    const float inter = ix * iy;
    const float uni = a.area + b.area - inter;
    if (a.area <= 0.0f || b.area <= 0.0f || uni <= 0.0f) return false;
    return inter / uni > threshold;
  }

  int64_t center_point_box_;
};

ONYX_CPU_KERNEL("NonMaxSuppression", 10, 10, NonMaxSuppression);
ONYX_CPU_KERNEL("NonMaxSuppression", 11, kOpsetMax, NonMaxSuppression);

}  // namespace
}  // namespace onyx
