#include "model/qwen3_model.h"

#include <algorithm>
#include <cmath>

namespace duet {

void SequenceKv::reserve_positions(int64_t n) {
  const size_t need = static_cast<size_t>(n * width_);
  for (size_t l = 0; l < k_.size(); ++l) {
    if (k_[l].size() < need) {
      // Grow geometrically so a long generation does not reallocate per token.
      const size_t cap = std::max(need, k_[l].size() * 2);
      k_[l].resize(cap);
      v_[l].resize(cap);
    }
  }
}

Result<std::unique_ptr<Qwen3Model>> Qwen3Model::load(const std::string& path,
                                                     std::unique_ptr<Backend> backend,
                                                     const ModelLoadOptions& options) {
  auto file = GgufModelFile::open(path);
  if (!file) return file.status();
  auto cfg = read_qwen3_config((*file)->gguf());
  if (!cfg) return cfg.status();
  if (options.yarn_factor > 0)
    DUET_TRY(apply_yarn_override(*cfg, options.yarn_factor, options.yarn_original_ctx));
  auto weights = bind_qwen3_weights((*file)->gguf(), *cfg);
  if (!weights) return weights.status();
  std::unique_ptr<Qwen3Model> m(new Qwen3Model());
  m->file_ = std::move(file.value());
  m->backend_ = std::move(backend);
  m->config_ = *cfg;
  m->weights_ = std::move(weights.value());
  m->rope_ = compute_rope_tables(m->config_);
  return m;
}

// x ← x + Wo · Attention(RoPE(QKNorm(Wq·h)), RoPE(QKNorm(Wk·h)), Wv·h),  h = RMSNorm(x)
void Qwen3Model::attention_block(const Qwen3Layer& L, int64_t il, const std::vector<int32_t>& pos,
                                 SequenceKv& kv, std::vector<float>& x) {
  const Qwen3Config& c = config_;
  Backend& be = *backend_;
  const int64_t n = static_cast<int64_t>(pos.size());
  std::vector<float> h(x.size());
  be.rmsnorm(x.data(), L.attn_norm.data(), n, c.n_embd, c.rms_eps, h.data());

  std::vector<float> q(static_cast<size_t>(n * c.q_width()));
  std::vector<float> k(static_cast<size_t>(n * c.kv_width()));
  std::vector<float> v(static_cast<size_t>(n * c.kv_width()));
  be.matmul(L.wq, h.data(), n, q.data());
  be.matmul(L.wk, h.data(), n, k.data());
  be.matmul(L.wv, h.data(), n, v.data());

  // Qwen3's QK-norm: RMSNorm over each head's vector before the rotation.
  be.rmsnorm(q.data(), L.q_norm.data(), n * c.n_head, c.head_dim, c.rms_eps, q.data());
  be.rmsnorm(k.data(), L.k_norm.data(), n * c.n_head_kv, c.head_dim, c.rms_eps, k.data());
  be.rope_neox(q.data(), n, c.n_head, c.head_dim, pos.data(), rope_.inv_freq.data(), rope_.mscale);
  be.rope_neox(k.data(), n, c.n_head_kv, c.head_dim, pos.data(), rope_.inv_freq.data(), rope_.mscale);

  for (int64_t t = 0; t < n; ++t) {
    std::copy_n(k.data() + t * c.kv_width(), c.kv_width(), kv.k(il, pos[t]));
    std::copy_n(v.data() + t * c.kv_width(), c.kv_width(), kv.v(il, pos[t]));
  }
  AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim,
                       static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)))};
  std::vector<float> att(q.size());
  be.attention(q.data(), kv.k(il, 0), kv.v(il, 0), c.kv_width(), pos.data(), n, shape, att.data());
  be.matmul(L.wo, att.data(), n, h.data());
  be.add_inplace(x.data(), h.data(), n * c.n_embd);
}

// x ← x + Wdown · (silu(Wgate·h) ⊙ Wup·h),  h = RMSNorm(x)
void Qwen3Model::ffn_block(const Qwen3Layer& L, int64_t n, std::vector<float>& x) {
  const Qwen3Config& c = config_;
  Backend& be = *backend_;
  std::vector<float> h(x.size());
  be.rmsnorm(x.data(), L.ffn_norm.data(), n, c.n_embd, c.rms_eps, h.data());
  std::vector<float> gate(static_cast<size_t>(n * c.n_ff)), up(gate.size());
  be.matmul(L.w_gate, h.data(), n, gate.data());
  be.matmul(L.w_up, h.data(), n, up.data());
  be.swiglu(gate.data(), up.data(), n * c.n_ff, gate.data());
  be.matmul(L.w_down, gate.data(), n, h.data());
  be.add_inplace(x.data(), h.data(), n * c.n_embd);
}

Status Qwen3Model::forward(std::span<const int32_t> tokens, SequenceKv& kv, bool all_logits,
                           std::vector<float>& logits) {
  const Qwen3Config& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return Status::error("no tokens to evaluate");
  for (int64_t t = 0; t < n; ++t)
    if (tokens[t] < 0 || tokens[t] >= c.n_vocab)
      return Status::error("token id " + std::to_string(tokens[t]) + " is outside the vocabulary [0, " +
                           std::to_string(c.n_vocab) + ")");
  const int64_t start = kv.length();
  if (start + n > c.max_context())
    return Status::error(std::to_string(start + n) + " positions exceed the context of " +
                         std::to_string(c.max_context()) + " tokens");

  std::vector<int32_t> pos(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) pos[t] = static_cast<int32_t>(start + t);
  kv.reserve_positions(start + n);

  std::vector<float> x(static_cast<size_t>(n * c.n_embd));
  backend_->get_rows(weights_.token_embd, tokens.data(), n, x.data());
  for (int64_t il = 0; il < c.n_layer; ++il) {
    attention_block(weights_.layers[il], il, pos, kv, x);
    ffn_block(weights_.layers[il], n, x);
  }
  kv.set_length(start + n);

  // Only the rows whose logits are wanted go through the final norm and the vocabulary.
  const int64_t first = all_logits ? 0 : n - 1;
  const int64_t rows = n - first;
  std::vector<float> h(static_cast<size_t>(rows * c.n_embd));
  backend_->rmsnorm(x.data() + first * c.n_embd, weights_.output_norm.data(), rows, c.n_embd,
                    c.rms_eps, h.data());
  logits.resize(static_cast<size_t>(rows * c.n_vocab));
  backend_->matmul(weights_.output, h.data(), rows, logits.data());
  return Status::ok();
}

}  // namespace duet
