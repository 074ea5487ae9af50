#include "model/qwen3_weights.h"

#include "kernels/ref/dequantize.h"

namespace duet {
namespace {

std::string shape_str(int64_t cols, int64_t rows) {
  return rows == 0 ? "[" + std::to_string(cols) + "]"
                   : "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]";
}

// Checks that tensor `name` exists with ne = [cols, rows] (rows 0: a vector) and a type
// duet computes with.
Result<const GgufTensorInfo*> find_checked(const GgufFile& f, const std::string& name, int64_t cols,
                                           int64_t rows) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (t == nullptr) return Status::error("missing tensor " + name);
  const int want_dims = rows == 0 ? 1 : 2;
  const bool shape_ok =
      t->n_dims == want_dims && t->ne[0] == cols && (rows == 0 || t->ne[1] == rows);
  if (!shape_ok)
    return Status::error("tensor " + name + " has shape " + t->shape_string() + ", expected " +
                         shape_str(cols, rows));
  if (!ggml_traits(t->type).can_compute)
    return Status::error(
        "tensor " + name + " has type " + ggml_type_name(t->type) +
        ", which duet cannot compute with (supported: " + ggml_computable_type_names() + ")");
  return t;
}

Status bind_matrix(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows,
                   WeightMatrix* out) {
  auto t = find_checked(f, name, cols, rows);
  if (!t) return t.status();
  out->name = name;
  out->type = (*t)->type;
  out->cols = cols;
  out->rows = rows;
  out->row_bytes = ggml_row_bytes(out->type, cols);
  out->data = (*t)->data;
  return Status::ok();
}

Status bind_vector(const GgufFile& f, const std::string& name, int64_t n, std::vector<float>* out) {
  auto t = find_checked(f, name, n, 0);
  if (!t) return t.status();
  if (n % ggml_traits((*t)->type).block_elems != 0)
    return Status::error("tensor " + name + " length is not a whole number of blocks");
  out->resize(static_cast<size_t>(n));
  ref::dequantize_row((*t)->type, (*t)->data, out->data(), n);
  return Status::ok();
}

}  // namespace

Result<Qwen3Weights> bind_qwen3_weights(const GgufFile& f, const Qwen3Config& c) {
  Qwen3Weights w;
  DUET_TRY(bind_matrix(f, "token_embd.weight", c.n_embd, c.n_vocab, &w.token_embd));
  DUET_TRY(bind_vector(f, "output_norm.weight", c.n_embd, &w.output_norm));
  if (f.find_tensor("output.weight") != nullptr) {
    DUET_TRY(bind_matrix(f, "output.weight", c.n_embd, c.n_vocab, &w.output));
  } else {
    w.output = w.token_embd;
    w.tied_output = true;
  }
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    Qwen3Layer& l = w.layers[i];
    DUET_TRY(bind_vector(f, p + "attn_norm.weight", c.n_embd, &l.attn_norm));
    DUET_TRY(bind_matrix(f, p + "attn_q.weight", c.n_embd, c.q_width(), &l.wq));
    DUET_TRY(bind_matrix(f, p + "attn_k.weight", c.n_embd, c.kv_width(), &l.wk));
    DUET_TRY(bind_matrix(f, p + "attn_v.weight", c.n_embd, c.kv_width(), &l.wv));
    DUET_TRY(bind_vector(f, p + "attn_q_norm.weight", c.head_dim, &l.q_norm));
    DUET_TRY(bind_vector(f, p + "attn_k_norm.weight", c.head_dim, &l.k_norm));
    DUET_TRY(bind_matrix(f, p + "attn_output.weight", c.q_width(), c.n_embd, &l.wo));
    DUET_TRY(bind_vector(f, p + "ffn_norm.weight", c.n_embd, &l.ffn_norm));
    DUET_TRY(bind_matrix(f, p + "ffn_gate.weight", c.n_embd, c.n_ff, &l.w_gate));
    DUET_TRY(bind_matrix(f, p + "ffn_up.weight", c.n_embd, c.n_ff, &l.w_up));
    DUET_TRY(bind_matrix(f, p + "ffn_down.weight", c.n_ff, c.n_embd, &l.w_down));
  }
  return w;
}

}  // namespace duet
