#include "model/qwen3_model.h"

#include <algorithm>
#include <cmath>

namespace duet {

// Where each chunk's tokens sit in the flattened batch.
struct Qwen3Model::BatchLayout {
  std::span<const ForwardChunk> chunks;
  std::vector<int64_t> first;      // index of chunk c's first token in the batch
  std::vector<int32_t> positions;  // per batch token
  int64_t n_tokens = 0;
};

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
  // Where the backend keeps its own copy of a matrix, the file's pages of it leave our
  // resident memory (tied embeddings still read rows from them, paged back in on demand).
  auto prepare = [&](const WeightMatrix& w) {
    if (m->backend_->prepare_weights(w))
      m->file_->release(w.data, static_cast<size_t>(w.rows) * w.row_bytes);
  };
  auto cancelled = [&] { return options.cancel && options.cancel->load(); };
  for (const Qwen3Layer& l : m->weights_.layers) {
    for (const WeightMatrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      if (cancelled()) return Status::error(std::string(kLoadCancelled));
      prepare(*w);
    }
  }
  prepare(m->weights_.output);
  const WeightMatrix& table = m->weights_.token_embd;
  if (m->backend_->prepare_table(table))
    m->file_->release(table.data, static_cast<size_t>(table.rows) * table.row_bytes);
  DUET_TRY(m->backend_->status().with_context(m->backend_->name()));
  m->rope_ = compute_rope_tables(m->config_);
  return m;
}

// x ← x + Wo · Attention(RoPE(QKNorm(Wq·h)), RoPE(QKNorm(Wk·h)), Wv·h),  h = RMSNorm(x)
void Qwen3Model::attention_block(const Qwen3Layer& L, int64_t il, const BatchLayout& b,
                                 KvStorage& kv, std::vector<float>& x) {
  const Qwen3Config& c = config_;
  Backend& be = *backend_;
  const int64_t n = b.n_tokens;
  std::vector<float>& h = ws_.h;
  h.resize(x.size());
  be.rmsnorm(x.data(), L.attn_norm.data(), n, c.n_embd, c.rms_eps, h.data());

  std::vector<float>& q = ws_.q;
  std::vector<float>& k = ws_.k;
  std::vector<float>& v = ws_.v;
  q.resize(static_cast<size_t>(n * c.q_width()));
  k.resize(static_cast<size_t>(n * c.kv_width()));
  v.resize(static_cast<size_t>(n * c.kv_width()));
  const WeightMatrix* qkv_w[] = {&L.wq, &L.wk, &L.wv};
  float* const qkv_y[] = {q.data(), k.data(), v.data()};
  be.matmul_same_input(qkv_w, h.data(), n, qkv_y);

  // Qwen3's QK-norm: RMSNorm over each head's vector before the rotation.
  be.qk_norm_rope(q.data(), k.data(), L.q_norm.data(), L.k_norm.data(), n, c.n_head, c.n_head_kv,
                  c.head_dim, c.rms_eps, b.positions.data(), rope_.inv_freq.data(), rope_.mscale);

  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim,
                             static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)))};
  const int64_t bs = kv.block_size();
  // Every chunk's keys/values go into the cache before any attention reads it: chunks of
  // different sequences never share blocks that are being written.
  std::vector<KvRowWrite>& writes = ws_.kv_writes;
  writes.clear();
  for (size_t ci = 0; ci < b.chunks.size(); ++ci) {
    const ForwardChunk& ch = b.chunks[ci];
    for (size_t t = 0; t < ch.tokens.size(); ++t) {
      const int64_t row = b.first[ci] + static_cast<int64_t>(t);
      const int64_t pos = b.positions[row];
      const int64_t slot = static_cast<int64_t>(ch.block_table[pos / bs]) * bs + pos % bs;
      for (int64_t hd = 0; hd < c.n_head_kv; ++hd) {
        const int64_t at = row * c.kv_width() + hd * c.head_dim;
        writes.push_back({k.data() + at, kv.head(il, 0, slot, hd)});
        writes.push_back({v.data() + at, kv.head(il, 1, slot, hd)});
      }
    }
  }
  be.encode_rows(kv.dtype(), writes, c.head_dim);
  std::vector<float>& att = ws_.att;
  att.resize(q.size());
  std::vector<PagedAttentionCall>& calls = ws_.calls;
  calls.clear();
  for (size_t ci = 0; ci < b.chunks.size(); ++ci) {
    const ForwardChunk& ch = b.chunks[ci];
    const int64_t row = b.first[ci];
    calls.push_back({q.data() + row * c.q_width(), kv.view(il, ch.block_table.data()),
                     b.positions.data() + row, static_cast<int64_t>(ch.tokens.size()),
                     att.data() + row * c.q_width()});
  }
  be.attention_paged(calls, shape);
  be.matmul(L.wo, att.data(), n, h.data());
  be.add_inplace(x.data(), h.data(), n * c.n_embd);
}

// x ← x + Wdown · (silu(Wgate·h) ⊙ Wup·h),  h = RMSNorm(x)
void Qwen3Model::ffn_block(const Qwen3Layer& L, int64_t n, std::vector<float>& x) {
  const Qwen3Config& c = config_;
  Backend& be = *backend_;
  std::vector<float>& h = ws_.h;
  h.resize(x.size());
  be.rmsnorm(x.data(), L.ffn_norm.data(), n, c.n_embd, c.rms_eps, h.data());
  std::vector<float>& gate = ws_.gate;
  std::vector<float>& up = ws_.up;
  gate.resize(static_cast<size_t>(n * c.n_ff));
  up.resize(gate.size());
  be.feed_forward(L.w_gate, L.w_up, L.w_down, h.data(), n, h.data(), gate.data(), up.data());
  be.add_inplace(x.data(), h.data(), n * c.n_embd);
}

Status Qwen3Model::forward_batch(std::span<const ForwardChunk> chunks, KvStorage& kv,
                                 std::vector<float>& logits) {
  const Qwen3Config& c = config_;
  BatchLayout b;
  b.chunks = chunks;
  std::vector<int32_t> ids;
  for (const ForwardChunk& ch : chunks) {
    const int64_t n = static_cast<int64_t>(ch.tokens.size());
    if (n == 0) return Status::error("a chunk has no tokens");
    if (ch.start_pos < 0 || ch.start_pos + n > c.max_context())
      return Status::error(std::to_string(ch.start_pos + n) + " positions exceed the context of " +
                           std::to_string(c.max_context()) + " tokens");
    const int64_t last_block = (ch.start_pos + n - 1) / kv.block_size();
    if (last_block >= static_cast<int64_t>(ch.block_table.size()))
      return Status::error("block table does not cover the chunk's positions");
    for (int64_t i = 0; i <= last_block; ++i)
      if (ch.block_table[i] < 0 || ch.block_table[i] >= kv.n_blocks())
        return Status::error("block table names a block outside the KV cache");
    for (int32_t t : ch.tokens)
      if (t < 0 || t >= c.n_vocab)
        return Status::error("token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                             std::to_string(c.n_vocab) + ")");
    b.first.push_back(b.n_tokens);
    for (int64_t t = 0; t < n; ++t) b.positions.push_back(static_cast<int32_t>(ch.start_pos + t));
    ids.insert(ids.end(), ch.tokens.begin(), ch.tokens.end());
    b.n_tokens += n;
  }
  if (b.n_tokens == 0) return Status::error("no tokens to evaluate");

  std::vector<float> x(static_cast<size_t>(b.n_tokens * c.n_embd));
  backend_->get_rows(weights_.token_embd, ids.data(), b.n_tokens, x.data());
  for (int64_t il = 0; il < c.n_layer; ++il) {
    attention_block(weights_.layers[il], il, b, kv, x);
    ffn_block(weights_.layers[il], b.n_tokens, x);
  }

  // Only the rows whose logits are wanted go through the final norm and the vocabulary.
  std::vector<int64_t> rows;
  for (size_t ci = 0; ci < chunks.size(); ++ci) {
    const int64_t n = static_cast<int64_t>(chunks[ci].tokens.size());
    if (chunks[ci].logits == LogitsFor::kAll)
      for (int64_t t = 0; t < n; ++t) rows.push_back(b.first[ci] + t);
    else if (chunks[ci].logits == LogitsFor::kLast)
      rows.push_back(b.first[ci] + n - 1);
  }
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  logits.resize(static_cast<size_t>(n_rows * c.n_vocab));
  if (n_rows == 0) return Status::ok();
  std::vector<float> picked(static_cast<size_t>(n_rows * c.n_embd)), h(picked.size());
  for (int64_t r = 0; r < n_rows; ++r)
    std::copy_n(x.data() + rows[r] * c.n_embd, c.n_embd, picked.data() + r * c.n_embd);
  backend_->rmsnorm(picked.data(), weights_.output_norm.data(), n_rows, c.n_embd, c.rms_eps,
                    h.data());
  backend_->matmul(weights_.output, h.data(), n_rows, logits.data());
  return Status::ok();
}

size_t Qwen3Model::weight_bytes_read_per_token() const {
  auto bytes = [](const WeightMatrix& w) { return w.row_bytes * static_cast<size_t>(w.rows); };
  size_t total = bytes(weights_.output) + weights_.token_embd.row_bytes;
  for (const Qwen3Layer& l : weights_.layers)
    total += bytes(l.wq) + bytes(l.wk) + bytes(l.wv) + bytes(l.wo) + bytes(l.w_gate) +
             bytes(l.w_up) + bytes(l.w_down);
  return total;
}

Status Qwen3Model::forward(std::span<const int32_t> tokens, SequenceKv& seq, bool all_logits,
                           std::vector<float>& logits) {
  constexpr int64_t kBlock = 256;
  if (!seq.storage_) {
    const int64_t n_blocks = (config_.max_context() + kBlock - 1) / kBlock;
    auto storage = KvStorage::create(config_.kv_shape(), n_blocks, kBlock, GgmlType::F32);
    if (!storage) return storage.status();
    seq.storage_ = std::move(storage.value());
    seq.block_table_.resize(static_cast<size_t>(n_blocks));
    for (int64_t i = 0; i < n_blocks; ++i) seq.block_table_[i] = static_cast<int32_t>(i);
  }
  ForwardChunk chunk{tokens, seq.length_, seq.block_table_,
                     all_logits ? LogitsFor::kAll : LogitsFor::kLast};
  DUET_TRY(forward_batch(std::span<const ForwardChunk>(&chunk, 1), *seq.storage_, logits));
  seq.length_ += static_cast<int64_t>(tokens.size());
  return Status::ok();
}

}  // namespace duet
