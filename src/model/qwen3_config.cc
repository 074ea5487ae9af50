#include "model/qwen3_config.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace duet {
namespace {

Result<int64_t> require_int(const GgufFile& f, const std::string& key, int64_t min, int64_t max) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) return Status::error("missing metadata key " + key);
  auto n = v->as_int();
  if (!n)
    return Status::error("metadata key " + key + " is a " + gguf_value_type_name(v->type) +
                         ", expected an integer");
  if (*n < min || *n > max)
    return Status::error("metadata key " + key + " = " + std::to_string(*n) + " is outside [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
  return *n;
}

Result<double> optional_float(const GgufFile& f, const std::string& key, double fallback) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) return fallback;
  auto x = v->as_float();
  if (!x || !std::isfinite(*x))
    return Status::error("metadata key " + key + " is not a finite number");
  return *x;
}

}  // namespace

int64_t Qwen3Config::max_context() const {
  // Files converted with YaRN on usually carry the extended length as context_length
  // already; files that do not get original × factor.
  if (rope_scaling.kind == RopeScaling::Kind::kYarn)
    return std::max(n_ctx_train,
                    static_cast<int64_t>(static_cast<double>(rope_scaling.original_context) *
                                         rope_scaling.factor));
  return n_ctx_train;
}

std::string Qwen3Config::summary() const {
  std::ostringstream os;
  os << "layers " << n_layer << ", hidden " << n_embd << ", heads " << n_head << " x " << head_dim
     << " (kv heads " << n_head_kv << "), ffn " << n_ff << ", vocab " << n_vocab << ", context "
     << n_ctx_train << ", rope base " << rope_base << ", rms eps " << rms_eps;
  if (rope_scaling.kind == RopeScaling::Kind::kYarn)
    os << ", YaRN x" << rope_scaling.factor << " over " << rope_scaling.original_context;
  return os.str();
}

Result<Qwen3Config> read_qwen3_config(const GgufFile& f) {
  const GgufValue* arch = f.find("general.architecture");
  if (arch == nullptr || !arch->as_string())
    return Status::error("missing metadata key general.architecture");
  if (*arch->as_string() != "qwen3")
    return Status::error("architecture is '" + std::string(*arch->as_string()) +
                         "', duet runs qwen3");
  constexpr int64_t kBig = int64_t{1} << 20;
  Qwen3Config c;
  auto get = [&](const char* key, int64_t min, int64_t max, int64_t* out) -> Status {
    auto r = require_int(f, std::string("qwen3.") + key, min, max);
    if (!r) return r.status();
    *out = *r;
    return Status::ok();
  };
  DUET_TRY(get("embedding_length", 1, kBig, &c.n_embd));
  DUET_TRY(get("block_count", 1, 4096, &c.n_layer));
  DUET_TRY(get("feed_forward_length", 1, kBig, &c.n_ff));
  DUET_TRY(get("attention.head_count", 1, 4096, &c.n_head));
  DUET_TRY(get("attention.head_count_kv", 1, 4096, &c.n_head_kv));
  DUET_TRY(get("context_length", 1, int64_t{1} << 24, &c.n_ctx_train));
  if (f.find("qwen3.attention.key_length") != nullptr) {
    DUET_TRY(get("attention.key_length", 2, 4096, &c.head_dim));
  } else {
    c.head_dim = c.n_embd / c.n_head;
  }
  if (f.find("qwen3.attention.value_length") != nullptr) {
    int64_t vlen = 0;
    DUET_TRY(get("attention.value_length", 1, 4096, &vlen));
    if (vlen != c.head_dim)
      return Status::error("attention.value_length " + std::to_string(vlen) +
                           " differs from key_length " + std::to_string(c.head_dim) +
                           "; Qwen3 uses equal lengths");
  }
  if (c.head_dim % 2 != 0) return Status::error("head dimension must be even for RoPE");
  if (c.n_head % c.n_head_kv != 0)
    return Status::error("head_count " + std::to_string(c.n_head) +
                         " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));

  auto eps = optional_float(f, "qwen3.attention.layer_norm_rms_epsilon", 1e-6);
  if (!eps) return eps.status();
  if (*eps <= 0 || *eps > 1) return Status::error("layer_norm_rms_epsilon out of range");
  c.rms_eps = static_cast<float>(*eps);
  auto base = optional_float(f, "qwen3.rope.freq_base", 1000000.0);
  if (!base) return base.status();
  if (*base <= 1.0) return Status::error("rope.freq_base must be greater than 1");
  c.rope_base = *base;

  if (const GgufValue* st = f.find("qwen3.rope.scaling.type")) {
    auto kind = st->as_string();
    if (!kind) return Status::error("qwen3.rope.scaling.type must be a string");
    if (*kind == "yarn") {
      auto factor = optional_float(f, "qwen3.rope.scaling.factor", 1.0);
      if (!factor) return factor.status();
      int64_t orig = c.n_ctx_train;
      if (f.find("qwen3.rope.scaling.original_context_length") != nullptr)
        DUET_TRY(get("rope.scaling.original_context_length", 1, int64_t{1} << 24, &orig));
      DUET_TRY(apply_yarn_override(c, *factor, orig));
    } else if (*kind != "none" && *kind != "linear") {
      return Status::error("unsupported rope scaling type '" + std::string(*kind) + "'");
    } else if (*kind == "linear") {
      return Status::error("linear rope scaling is not supported for qwen3");
    }
  }

  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  if (embd == nullptr) return Status::error("missing tensor token_embd.weight");
  if (embd->n_dims != 2) return Status::error("token_embd.weight must have 2 dimensions");
  c.n_vocab = embd->ne[1];
  return c;
}

Status apply_yarn_override(Qwen3Config& cfg, double factor, int64_t original_context) {
  if (!(factor >= 1.0 && factor <= 64.0))
    return Status::error("YaRN factor must be between 1 and 64");
  cfg.rope_scaling.kind = RopeScaling::Kind::kYarn;
  cfg.rope_scaling.factor = factor;
  if (original_context > 0)
    cfg.rope_scaling.original_context = original_context;
  else if (cfg.rope_scaling.original_context == 0)
    cfg.rope_scaling.original_context = cfg.n_ctx_train;
  return Status::ok();
}

RopeTables compute_rope_tables(const Qwen3Config& cfg) {
  RopeTables t;
  const int64_t dim = cfg.head_dim;
  const int64_t half = dim / 2;
  const double base = cfg.rope_base;
  t.inv_freq.resize(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    t.inv_freq[i] = 1.0 / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(dim));
  if (cfg.rope_scaling.kind != RopeScaling::Kind::kYarn || cfg.rope_scaling.factor <= 1.0) return t;

  // YaRN: keep high-frequency dimensions (many rotations within the original context) as
  // they are, divide low-frequency ones by the factor, and blend linearly in between.
  const double factor = cfg.rope_scaling.factor;
  const double orig = static_cast<double>(cfg.rope_scaling.original_context);
  auto correction_dim = [&](double n_rot) {
    return (static_cast<double>(dim) * std::log(orig / (n_rot * 2.0 * M_PI))) /
           (2.0 * std::log(base));
  };
  double low = std::floor(correction_dim(cfg.rope_scaling.beta_fast));
  double high = std::ceil(correction_dim(cfg.rope_scaling.beta_slow));
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // avoid a zero-width ramp
  for (int64_t i = 0; i < half; ++i) {
    double ramp = (static_cast<double>(i) - low) / (high - low);
    ramp = std::clamp(ramp, 0.0, 1.0);
    const double extrapolation_weight = 1.0 - ramp;
    const double extrapolated = t.inv_freq[i];
    const double interpolated = t.inv_freq[i] / factor;
    t.inv_freq[i] =
        interpolated * (1.0 - extrapolation_weight) + extrapolated * extrapolation_weight;
  }
  t.mscale = 0.1 * std::log(factor) + 1.0;
  return t;
}

}  // namespace duet
