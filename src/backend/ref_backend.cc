#include "backend/ref_backend.h"

#include "backend/backend.h"
#include "kernels/ref/ops.h"

namespace duet {
namespace {

class RefBackend final : public Backend {
 public:
  std::string name() const override { return "ref"; }
  // Every buffer is host memory (the default allocate), so each view has host().
  void matmul(const WeightMatrix& w, ConstFloats x, int64_t n_tokens, Floats y) override {
    ref::matmul(w.type, w.data, w.rows, w.cols, w.row_bytes, x.host(), n_tokens, y.host());
  }
  void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, Floats out) override {
    ref::get_rows(table.type, table.data, table.cols, table.row_bytes, ids, n, out.host());
  }
  void rmsnorm(ConstFloats x, const float* w, int64_t rows, int64_t dim, float eps,
               Floats y) override {
    ref::rmsnorm(x.host(), w, rows, dim, eps, y.host());
  }
  void rope_neox(Floats x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                 const RopeAngles& rope) override {
    ref::rope_neox(x.host(), n_tokens, n_heads, head_dim, rope.positions, rope.inv_freq,
                   rope.mscale);
  }
  void swiglu(ConstFloats gate, ConstFloats up, int64_t n, Floats out) override {
    ref::swiglu(gate.host(), up.host(), n, out.host());
  }
  void add_inplace(Floats x, ConstFloats y, int64_t n) override {
    ref::add_inplace(x.host(), y.host(), n);
  }
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace duet
