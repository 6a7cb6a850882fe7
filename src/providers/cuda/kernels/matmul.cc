// MatMul (numpy batching and broadcasting) and Gemm (transA/transB, alpha, beta, C broadcast to
// [M, N]) through cuBLASLt, in float (TF32 tensor cores when use_tf32), float16 and bfloat16
// with float accumulation. Row-major C = A B is computed as column-major C^T = B^T A^T.
#include "providers/cuda/kernels/kernel_util.h"

namespace onyx::cuda {
namespace {

const std::vector<DataType> kGemmTypes = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

cudaDataType_t LtType(DataType t) {
  return t == DataType::kFloat ? CUDA_R_32F : t == DataType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
}

// Owns cuBLASLt descriptors for one call.
struct LtCall {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  ~LtCall() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

void SetBatch(cublasLtMatrixLayout_t layout, int32_t count, int64_t stride) {
  ONYX_CUBLAS_CALL(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  ONYX_CUBLAS_CALL(
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
}

// Row-major D[batch][M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * D (D read when beta != 0).
// A is stored [M,K] ([K,M] when trans_a), B [K,N] ([N,K] when trans_b).
void RowMajorGemm(const CudaContext& cuda, DataType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const void* a, int64_t stride_a, const void* b, int64_t stride_b, float beta, void* d,
                  int64_t stride_d, int32_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  LtCall call;
  const cublasComputeType_t compute =
      dtype == DataType::kFloat && cuda.use_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  ONYX_CUBLAS_CALL(cublasLtMatmulDescCreate(&call.desc, compute, CUDA_R_32F));
  // cuBLASLt's first operand is our B, its second our A (column-major views of row-major data).
  const cublasOperation_t op_first = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_second = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  ONYX_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
  ONYX_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
  const cudaDataType_t type = LtType(dtype);
  // Stored B: row-major [K,N] -> column-major N x K (ld N); transposed: [N,K] -> K x N (ld K).
  ONYX_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&call.b, type, trans_b ? k : n, trans_b ? n : k, trans_b ? k : n));
  ONYX_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&call.a, type, trans_a ? m : k, trans_a ? k : m, trans_a ? m : k));
  ONYX_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&call.c, type, n, m, n));
  if (batch > 1) {
    SetBatch(call.b, batch, stride_b);
    SetBatch(call.a, batch, stride_a);
    SetBatch(call.c, batch, stride_d);
  }
  ONYX_CUBLAS_CALL(cublasLtMatmul(cuda.cublas_lt, call.desc, &alpha, b, call.b, a, call.a, &beta, d, call.c, d, call.c,
                                  nullptr, nullptr, 0, cuda.stream));
}

class MatMul final : public CudaKernel {
 public:
  explicit MatMul(const KernelInfo& info) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("inputs of different dtypes");
    if (a.rank() == 0 || b.rank() == 0) ctx.Fail("MatMul of a scalar");
    Shape sa = a.shape(), sb = b.shape();
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    if (sb[sb.size() - 2] != k) ctx.Fail(StrCat("inner dimensions differ: ", k, " and ", sb[sb.size() - 2]));
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    Shape batch;
    const Strided s = Broadcast(batch_a, batch_b, batch);
    Shape out = batch;
    if (a.rank() > 1) out.push_back(m);
    if (b.rank() > 1) out.push_back(n);
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), out);
    const int64_t count = ShapeSize(batch), bytes = DataTypeBits(a.dtype()) / 8;
    const int64_t batch_a_size = ShapeSize(batch_a), batch_b_size = ShapeSize(batch_b);
    if (batch_b_size == 1) {  // one B: A's batches are rows of one GEMM
      RowMajorGemm(cuda(), a.dtype(), false, false, count * m, n, k, 1.0f, a.raw_data(), 0, b.raw_data(), 0, 0.0f,
                   y.raw_data(), 0, 1);
    } else if (batch_a == batch_b || batch_a_size == 1) {
      RowMajorGemm(cuda(), a.dtype(), false, false, m, n, k, 1.0f, a.raw_data(), batch_a_size == 1 ? 0 : m * k,
                   b.raw_data(), k * n, 0.0f, y.raw_data(), m * n, static_cast<int32_t>(count));
    } else {  // general broadcasting: one GEMM per output batch
      for (int64_t i = 0; i < count; ++i) {
        int64_t rest = i, ia = 0, ib = 0;
        for (int d = s.rank - 1; d >= 0; --d) {
          ia += (rest % s.dims[d]) * s.a[d];
          ib += (rest % s.dims[d]) * s.b[d];
          rest /= s.dims[d];
        }
        RowMajorGemm(cuda(), a.dtype(), false, false, m, n, k, 1.0f,
                     static_cast<const char*>(a.raw_data()) + ia * m * k * bytes, 0,
                     static_cast<const char*>(b.raw_data()) + ib * k * n * bytes, 0, 0.0f,
                     static_cast<char*>(y.raw_data()) + i * m * n * bytes, 0, 1);
      }
    }
    CheckLaunch(ctx);
  }
};

class Gemm final : public CudaKernel {
 public:
  explicit Gemm(const KernelInfo& info)
      : trans_a_(info.GetIntOr("transA", 0) != 0),
        trans_b_(info.GetIntOr("transB", 0) != 0),
        alpha_(info.GetFloatOr("alpha", 1.0f)),
        beta_(info.GetFloatOr("beta", 1.0f)) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    if (a.rank() != 2 || b.rank() != 2) ctx.Fail("Gemm needs 2-D A and B");
    if (a.dtype() != b.dtype() || (c != nullptr && c->dtype() != a.dtype())) ctx.Fail("inputs of different dtypes");
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0), k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t n = trans_b_ ? b.dim(0) : b.dim(1), kb = trans_b_ ? b.dim(1) : b.dim(0);
    if (k != kb) ctx.Fail(StrCat("inner dimensions differ: ", k, " and ", kb));
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), {m, n});
    float beta = 0.0f;
    if (c != nullptr && beta_ != 0.0f) {
      Shape shape;
      const Strided s = Broadcast(c->shape(), {m, n}, shape);
      if (shape != Shape{m, n}) ctx.Fail(StrCat("C ", ShapeToString(c->shape()), " does not broadcast to [", m, ",", n, "]"));
      LaunchGather(static_cast<size_t>(DataTypeBits(a.dtype()) / 8), c->raw_data(), y.raw_data(), y.size(), s, stream());
      beta = beta_;
    }
    RowMajorGemm(cuda(), a.dtype(), trans_a_, trans_b_, m, n, k, alpha_, a.raw_data(), 0, b.raw_data(), 0, beta,
                 y.raw_data(), 0, 1);
    CheckLaunch(ctx);
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
};

ONYX_CUDA_KERNEL("MatMul", 1, kOpsetMax, MatMul, KernelTypes{kGemmTypes, 0, {}, nullptr});
ONYX_CUDA_KERNEL("Gemm", 7, kOpsetMax, Gemm, KernelTypes{kGemmTypes, 0, {}, nullptr});

}  // namespace
}  // namespace onyx::cuda
