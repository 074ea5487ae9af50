// libFuzzer target: arbitrary bytes through everything that reads a GGUF file before a
// model runs — the parser, every metadata accessor, the vocabulary, the Qwen3
// hyper-parameters and the weight binding. Beyond "no crash, no sanitizer report", it
// traps when a parsed file breaks an invariant the rest of duet relies on: each tensor's
// byte size matches its shape and type, and its bytes (and every bound matrix's rows) lie
// inside the input.
//
//   build-fuzz/fuzz_gguf -max_total_time=120 -rss_limit_mb=2048 <corpus copy>
//   (run with UBSAN_OPTIONS=halt_on_error=1 so that undefined behaviour stops the run)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_file.h"
#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"
#include "text/tokenizer/vocab.h"

namespace {

using u128 = unsigned __int128;

volatile uint8_t g_sink;  // keeps the touched bytes from being optimised away

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Input {
  const uint8_t* begin;
  const uint8_t* end;
  // [p, p + n) lies inside the input (n may be 0).
  bool holds(const uint8_t* p, u128 n) const {
    if (p == nullptr) return n == 0;
    const auto b = reinterpret_cast<uintptr_t>(begin), e = reinterpret_cast<uintptr_t>(end),
               q = reinterpret_cast<uintptr_t>(p);
    return q >= b && q <= e && n <= static_cast<u128>(e - q);
  }
  void touch(const uint8_t* p, u128 n) const {
    check(holds(p, n));
    if (n == 0) return;
    g_sink = static_cast<uint8_t>(g_sink + p[0] + p[static_cast<size_t>(n - 1)]);
  }
};

void exercise_value(const duet::GgufValue& v) {
  (void)v.as_int();
  (void)v.as_float();
  (void)v.as_bool();
  if (auto s = v.as_string()) g_sink = static_cast<uint8_t>(g_sink + s->size());
  const std::string shown = v.to_display_string();
  g_sink = static_cast<uint8_t>(g_sink + shown.size());
  if (v.type != duet::GgufValueType::ARRAY) return;
  if (auto s = v.arr.strings(); s.is_ok()) {
    check(s->size() == v.arr.count);
    for (std::string_view t : *s)
      if (!t.empty()) g_sink = static_cast<uint8_t>(g_sink + t.front() + t.back());
  }
  if (auto n = v.arr.ints(); n.is_ok()) check(n->size() == v.arr.count);
  if (auto x = v.arr.floats(); x.is_ok()) check(x->size() == v.arr.count);
}

void check_tensor(const Input& in, const duet::GgufFile& f, const duet::GgufTensorInfo& t) {
  check(!t.name.empty());
  check(t.n_dims >= 1 && t.n_dims <= 4);
  u128 n = 1;
  for (int d = 0; d < 4; ++d) {
    check(t.ne[d] >= 1);
    check(d < t.n_dims || t.ne[d] == 1);
    n *= static_cast<u128>(t.ne[d]);
  }
  check(n == t.n_elements);
  const duet::GgmlTypeTraits& tr = duet::ggml_traits(t.type);
  check(t.ne[0] % tr.block_elems == 0);
  check(static_cast<u128>(t.n_bytes) ==
        n / static_cast<u128>(tr.block_elems) * static_cast<u128>(tr.block_bytes));
  check(t.offset % f.alignment() == 0);
  (void)t.shape_string();
  in.touch(t.data, t.n_bytes);
}

void touch_matrix(const Input& in, const duet::WeightMatrix& w) {
  check(w.rows >= 1 && w.cols >= 1);
  check(w.row_bytes == duet::ggml_row_bytes(w.type, w.cols));
  in.touch(w.data, static_cast<u128>(w.rows) * w.row_bytes);
}

void check_vector(const std::vector<float>& v, int64_t n) {
  check(static_cast<int64_t>(v.size()) == n);
  for (float x : v) g_sink = static_cast<uint8_t>(g_sink + (std::isnan(x) ? 1 : 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace duet;
  const Input in{data, data + size};
  auto parsed = GgufFile::parse(std::span<const uint8_t>(data, size));
  if (!parsed.is_ok()) {
    check(!parsed.message().empty());
    return 0;
  }
  const GgufFile& f = *parsed;
  check(f.version() == 2 || f.version() == 3);
  check(f.alignment() >= 1 && (f.alignment() & (f.alignment() - 1)) == 0);
  check(f.data_offset() % f.alignment() == 0);

  for (const GgufKeyValue& kv : f.metadata()) {
    check(!kv.key.empty());
    check(f.find(kv.key) == &kv.value);  // keys are unique
    exercise_value(kv.value);
  }
  for (const GgufTensorInfo& t : f.tensors()) {
    check(f.find_tensor(t.name) == &t);  // names are unique
    check_tensor(in, f, t);
  }

  if (auto v = read_vocab(f); v.is_ok()) {
    check(!v->tokens.empty());
    check(v->types.size() == v->tokens.size());
    const int64_t n = static_cast<int64_t>(v->tokens.size());
    for (int32_t id : {v->bos_id, v->eos_id, v->pad_id}) check(id >= -1 && id < n);
    for (std::string_view t : v->tokens)
      in.touch(reinterpret_cast<const uint8_t*>(t.data()), t.size());
    for (std::string_view m : v->merges)
      in.touch(reinterpret_cast<const uint8_t*>(m.data()), m.size());
    (void)v->count_of_type(6);
  }

  auto cfg = read_qwen3_config(f);
  if (!cfg.is_ok()) return 0;
  (void)cfg->summary();
  (void)cfg->max_context();
  const RopeTables rope = compute_rope_tables(*cfg);
  check(static_cast<int64_t>(rope.inv_freq.size()) == cfg->head_dim / 2);

  auto w = bind_qwen3_weights(f, *cfg);
  if (!w.is_ok()) return 0;
  touch_matrix(in, w->token_embd);
  touch_matrix(in, w->output);
  check_vector(w->output_norm, cfg->n_embd);
  check(static_cast<int64_t>(w->layers.size()) == cfg->n_layer);
  for (const Qwen3Layer& l : w->layers) {
    for (const WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
      touch_matrix(in, *m);
    check_vector(l.attn_norm, cfg->n_embd);
    check_vector(l.ffn_norm, cfg->n_embd);
    check_vector(l.q_norm, cfg->head_dim);
    check_vector(l.k_norm, cfg->head_dim);
  }
  return 0;
}
