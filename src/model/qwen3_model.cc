#include "model/qwen3_model.h"

#include <algorithm>
#include <cmath>

namespace duet {

// Where each chunk's tokens sit in the flattened batch, and in the KV cache.
struct Qwen3Model::BatchLayout {
  std::vector<int32_t> ids;        // per batch token
  std::vector<int32_t> positions;  // per batch token
  std::vector<int32_t> slots;      // per batch token: its row of the KV cache
  std::vector<int32_t> tables;     // the chunks' block tables, concatenated
  std::vector<StepChunk> chunks;
  std::vector<int64_t> logit_rows;  // batch tokens whose logits are wanted, in chunk order
  int64_t n_tokens = 0;
  StepLayout step() const { return {positions, slots, tables, chunks}; }
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
    const size_t bytes = static_cast<size_t>(w.rows) * w.row_bytes;
    if (m->backend_->prepare_weights(w))
      m->file_->release(w.data, bytes);
    else
      m->mapped_weight_bytes_ += bytes;
  };
  auto cancelled = [&] { return options.cancel && options.cancel->load(); };
  const auto total = static_cast<int64_t>(m->weights_.layers.size()) * 7 + 2;
  int64_t done = 0;
  auto step = [&] {
    if (options.progress) options.progress(++done, total);
  };
  for (const Qwen3Layer& l : m->weights_.layers) {
    for (const WeightMatrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      if (cancelled()) return Status::error(std::string(kLoadCancelled));
      prepare(*w);
      step();
    }
  }
  prepare(m->weights_.output);
  step();
  for (const Qwen3Layer& l : m->weights_.layers)
    for (const std::vector<float>* v : {&l.attn_norm, &l.ffn_norm, &l.q_norm, &l.k_norm})
      m->backend_->prepare_vector(*v);
  m->backend_->prepare_vector(m->weights_.output_norm);
  const WeightMatrix& table = m->weights_.token_embd;
  if (m->backend_->prepare_table(table))
    m->file_->release(table.data, static_cast<size_t>(table.rows) * table.row_bytes);
  else
    m->mapped_weight_bytes_ += static_cast<size_t>(table.rows) * table.row_bytes;
  step();
  DUET_TRY(m->backend_->status().with_context(m->backend_->name()));
  m->rope_ = compute_rope_tables(m->config_);
  return m;
}

Status Qwen3Model::ActivationBuffer::reserve(Backend& backend, size_t bytes) {
  if (buffer && buffer->bytes() >= bytes) return Status::ok();
  buffer.reset();  // before the new one: a device's memory may not hold both
  auto b = backend.allocate(bytes);
  if (!b) return b.status().with_context("a step's activations");
  buffer = std::move(b.value());
  return Status::ok();
}

Result<std::unique_ptr<KvStorage>> Qwen3Model::new_kv_storage(int64_t n_blocks, int64_t block_size,
                                                              GgmlType dtype) {
  return KvStorage::create(*backend_, config_.kv_shape(), n_blocks, block_size, dtype);
}

Status Qwen3Model::size_workspace(int64_t n, int64_t n_rows) {
  const Qwen3Config& c = config_;
  const auto floats = [](int64_t count) { return sizeof(float) * static_cast<size_t>(count); };
  Backend& be = *backend_;
  Workspace& w = ws_;
  DUET_TRY(w.x.reserve(be, floats(n * c.n_embd)));
  DUET_TRY(w.h.reserve(be, floats(n * c.n_embd)));
  DUET_TRY(w.q.reserve(be, floats(n * c.q_width())));
  DUET_TRY(w.k.reserve(be, floats(n * c.kv_width())));
  DUET_TRY(w.v.reserve(be, floats(n * c.kv_width())));
  DUET_TRY(w.att.reserve(be, floats(n * c.q_width())));
  DUET_TRY(w.gate.reserve(be, floats(n * c.n_ff)));
  DUET_TRY(w.up.reserve(be, floats(n * c.n_ff)));
  DUET_TRY(w.picked.reserve(be, floats(std::max<int64_t>(n_rows, 1) * c.n_embd)));
  DUET_TRY(w.normed.reserve(be, floats(std::max<int64_t>(n_rows, 1) * c.n_embd)));
  return Status::ok();
}

// x ← x + Wo · Attention(RoPE(QKNorm(Wq·h)), RoPE(QKNorm(Wk·h)), Wv·h),  h = RMSNorm(x)
void Qwen3Model::attention_block(const Qwen3Layer& L, const KvLayer& kv, const BatchLayout& b) {
  const Qwen3Config& c = config_;
  Backend& be = *backend_;
  const Workspace& w = ws_;
  const int64_t n = b.n_tokens;
  be.rmsnorm(*w.x, L.attn_norm.data(), n, c.n_embd, c.rms_eps, *w.h);
  const WeightMatrix* qkv_w[] = {&L.wq, &L.wk, &L.wv};
  const Floats qkv_y[] = {*w.q, *w.k, *w.v};
  be.matmul_same_input(qkv_w, *w.h, n, qkv_y);
  // Qwen3's QK-norm: RMSNorm over each head's vector before the rotation.
  QkNormRope prep;
  prep.q = *w.q;
  prep.k = *w.k;
  prep.q_norm = L.q_norm.data();
  prep.k_norm = L.k_norm.data();
  prep.n_tokens = n;
  prep.n_head = c.n_head;
  prep.n_head_kv = c.n_head_kv;
  prep.head_dim = c.head_dim;
  prep.eps = c.rms_eps;
  prep.rope = {b.positions.data(), rope_.inv_freq.data(), rope_.mscale};
  be.qk_norm_rope(prep);
  // Every chunk's keys/values go into the cache before any attention reads it: chunks of
  // different sequences never share blocks that are being written.
  const StepLayout step = b.step();
  be.store_kv(kv, step, *w.k, *w.v);
  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim,
                             static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)))};
  be.attention(kv, step, *w.q, *w.att, shape);
  be.matmul(L.wo, *w.att, n, *w.h);
  be.add_inplace(*w.x, *w.h, n * c.n_embd);
}

// x ← x + Wdown · (silu(Wgate·h) ⊙ Wup·h),  h = RMSNorm(x)
void Qwen3Model::ffn_block(const Qwen3Layer& L, int64_t n) {
  const Qwen3Config& c = config_;
  Backend& be = *backend_;
  const Workspace& w = ws_;
  be.rmsnorm(*w.x, L.ffn_norm.data(), n, c.n_embd, c.rms_eps, *w.h);
  be.feed_forward(L.w_gate, L.w_up, L.w_down, *w.h, n, *w.h, *w.gate, *w.up);
  be.add_inplace(*w.x, *w.h, n * c.n_embd);
}

Status Qwen3Model::lay_out(std::span<const ForwardChunk> chunks, const KvStorage& kv,
                           BatchLayout& b) {
  const Qwen3Config& c = config_;
  const int64_t bs = kv.block_size();
  for (const ForwardChunk& ch : chunks) {
    const int64_t n = static_cast<int64_t>(ch.tokens.size());
    if (n == 0) return Status::error("a chunk has no tokens");
    if (ch.start_pos < 0 || ch.start_pos + n > c.max_context())
      return Status::error(std::to_string(ch.start_pos + n) + " positions exceed the context of " +
                           std::to_string(c.max_context()) + " tokens");
    const int64_t n_table = (ch.start_pos + n - 1) / bs + 1;
    if (n_table > static_cast<int64_t>(ch.block_table.size()))
      return Status::error("block table does not cover the chunk's positions");
    for (int64_t i = 0; i < n_table; ++i)
      if (ch.block_table[i] < 0 || ch.block_table[i] >= kv.n_blocks())
        return Status::error("block table names a block outside the KV cache");
    for (int32_t t : ch.tokens)
      if (t < 0 || t >= c.n_vocab)
        return Status::error("token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                             std::to_string(c.n_vocab) + ")");
    b.chunks.push_back({b.n_tokens, n, static_cast<int64_t>(b.tables.size()), n_table});
    b.tables.insert(b.tables.end(), ch.block_table.begin(), ch.block_table.begin() + n_table);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t pos = ch.start_pos + t;
      b.positions.push_back(static_cast<int32_t>(pos));
      b.slots.push_back(static_cast<int32_t>(ch.block_table[pos / bs] * bs + pos % bs));
    }
    if (ch.logits == LogitsFor::kAll)
      for (int64_t t = 0; t < n; ++t) b.logit_rows.push_back(b.n_tokens + t);
    else if (ch.logits == LogitsFor::kLast)
      b.logit_rows.push_back(b.n_tokens + n - 1);
    b.ids.insert(b.ids.end(), ch.tokens.begin(), ch.tokens.end());
    b.n_tokens += n;
  }
  if (b.n_tokens == 0) return Status::error("no tokens to evaluate");
  return Status::ok();
}

Status Qwen3Model::forward_batch(std::span<const ForwardChunk> chunks, KvStorage& kv,
                                 std::vector<float>& logits) {
  const Qwen3Config& c = config_;
  if (&kv.backend() != backend_.get())
    return Status::error("the KV cache was allocated by another backend than the model's");
  BatchLayout b;
  DUET_TRY(lay_out(chunks, kv, b));
  const int64_t n_rows = static_cast<int64_t>(b.logit_rows.size());
  DUET_TRY(size_workspace(b.n_tokens, n_rows));

  Backend& be = *backend_;
  const Workspace& w = ws_;
  be.get_rows(weights_.token_embd, b.ids.data(), b.n_tokens, *w.x);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    attention_block(weights_.layers[il], kv.layer(il), b);
    ffn_block(weights_.layers[il], b.n_tokens);
  }

  // Only the rows whose logits are wanted go through the final norm and the vocabulary;
  // the logits are the one thing that comes back to the host.
  logits.resize(static_cast<size_t>(n_rows * c.n_vocab));
  if (n_rows > 0) {
    be.gather_rows(*w.x, b.logit_rows, c.n_embd, *w.picked);
    be.rmsnorm(*w.picked, weights_.output_norm.data(), n_rows, c.n_embd, c.rms_eps, *w.normed);
    be.matmul(weights_.output, *w.normed, n_rows, logits.data());
  }
  be.finish();
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
    // The whole context, as far as the backend's buffers go (a device backend holds each
    // layer's K and V in one buffer, allocated now rather than as it is written).
    const int64_t n_blocks =
        std::min((config_.max_context() + kBlock - 1) / kBlock,
                 KvStorage::max_blocks(*backend_, config_.kv_shape(), kBlock, GgmlType::F32));
    auto storage = new_kv_storage(n_blocks, kBlock, GgmlType::F32);
    if (!storage) return storage.status();
    seq.storage_ = std::move(storage.value());
    seq.block_table_.resize(static_cast<size_t>(n_blocks));
    for (int64_t i = 0; i < n_blocks; ++i) seq.block_table_[i] = static_cast<int32_t>(i);
  }
  const int64_t capacity = static_cast<int64_t>(seq.block_table_.size()) * kBlock;
  if (seq.length_ + static_cast<int64_t>(tokens.size()) > capacity &&
      capacity < config_.max_context())
    return Status::error(std::to_string(seq.length_ + static_cast<int64_t>(tokens.size())) +
                         " positions exceed the " + std::to_string(capacity) +
                         " that one sequence's F32 KV cache holds on " + backend_->name());
  ForwardChunk chunk{tokens, seq.length_, seq.block_table_,
                     all_logits ? LogitsFor::kAll : LogitsFor::kLast};
  DUET_TRY(forward_batch(std::span<const ForwardChunk>(&chunk, 1), *seq.storage_, logits));
  seq.length_ += static_cast<int64_t>(tokens.size());
  return Status::ok();
}

}  // namespace duet
