#include "backend/ref_backend.h"

#include "backend/backend.h"
#include "kernels/ref/ops.h"

namespace duet {
namespace {

class RefBackend final : public Backend {
 public:
  std::string name() const override { return "ref"; }
  void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) override {
    ref::matmul(w.type, w.data, w.rows, w.cols, w.row_bytes, x, n_tokens, y);
  }
  void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, float* out) override {
    ref::get_rows(table.type, table.data, table.cols, table.row_bytes, ids, n, out);
  }
  void rmsnorm(const float* x, const float* w, int64_t rows, int64_t dim, float eps,
               float* y) override {
    ref::rmsnorm(x, w, rows, dim, eps, y);
  }
  void rope_neox(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                 const int32_t* positions, const double* inv_freq, double mscale) override {
    ref::rope_neox(x, n_tokens, n_heads, head_dim, positions, inv_freq, mscale);
  }
  void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
    ref::swiglu(gate, up, n, out);
  }
  void add_inplace(float* x, const float* y, int64_t n) override { ref::add_inplace(x, y, n); }
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace duet
