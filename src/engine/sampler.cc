#include "engine/sampler.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <limits>

namespace duet {

namespace {

using sampler_detail::Candidate;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// vLLM's threshold: below it a temperature counts as 0 (greedy), which keeps 1/T finite.
constexpr float kGreedyTemperature = 1e-5f;
// Top-p over at most this many candidates sorts them; above, a linear radix select.
constexpr size_t kSortLimit = 256;
// Top-k up to this k scans the row once with a rising threshold; a larger k partitions a copy.
constexpr size_t kSmallTopK = 1024;
// The row loops below keep kLanes independent lanes (maxima, flags) so that the compiler can
// vectorise them without reassociating anything: results do not depend on the SIMD width.
constexpr size_t kLanes = 16;
constexpr size_t kSumLanes = 8;  // double accumulators for sums of weights

// ---------------------------------------------------------------------------------------------
// Row kernels: passes over a whole row of n_vocab floats.

// NaN is "impossible" (-inf); +inf is clamped so that (logit - max) stays a number.
inline float sanitize(float v) { return v != v ? kNegInf : std::min(v, FLT_MAX); }

// exp(x) for x <= 0 (or -inf; not NaN), within a few ulp; exactly 0 below about -87.7, where
// float turns subnormal (such a token is e^-87 times less likely than the top one).
// Branch-free so the loops that call it vectorise; std::exp is a scalar library call and would
// dominate a full-row pass.
inline float exp_nonpositive(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // few mantissa bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  const float xc = std::max(x, -88.0f);
  // x = n ln2 + r with n = round(x / ln2) (truncation of a value <= 0 shifted by -0.5),
  // n in [-127, 0], |r| <= ln2 / 2; then exp(x) = 2^n exp(r).
  const int n = static_cast<int>(xc * kLog2e - 0.5f);
  const float nf = static_cast<float>(n);
  const float r = (xc - nf * kLn2Hi) - nf * kLn2Lo;
  // Taylor series to degree 7: the remainder r^8 / 8! is below 6e-9 for |r| <= 0.347.
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n from its bit pattern; n = -127 gives the pattern of +0, so the result is exactly 0.
  const float two_to_n = std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
  return p * two_to_n;
}

// Largest value, NaN ignored; -inf when there is none.
float max_value(std::span<const float> v) {
  std::array<float, kLanes> lane;
  lane.fill(kNegInf);
  size_t i = 0;
  for (; i + kLanes <= v.size(); i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) lane[j] = v[i + j] > lane[j] ? v[i + j] : lane[j];
  }
  float best = kNegInf;
  for (float l : lane) best = l > best ? l : best;
  for (; i < v.size(); ++i) best = v[i] > best ? v[i] : best;
  return best;
}

// Index of the largest value: ties go to the lowest index, NaN never wins, 0 if nothing
// beats -inf. One pass.
size_t argmax(std::span<const float> v) {
  float lane[kLanes];
  int32_t at[kLanes] = {};
  std::fill(lane, lane + kLanes, kNegInf);
  const float* p = v.data();
  size_t i = 0;
  for (; i + kLanes <= v.size(); i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) {
      const float x = p[i + j];
      const bool better = x > lane[j];
      lane[j] = better ? x : lane[j];
      at[j] = better ? static_cast<int32_t>(i + j) : at[j];
    }
  }
  float best = kNegInf;
  size_t best_at = 0;
  for (size_t j = 0; j < kLanes; ++j) {
    if (lane[j] > best || (lane[j] == best && static_cast<size_t>(at[j]) < best_at)) {
      best = lane[j];
      best_at = static_cast<size_t>(at[j]);
    }
  }
  for (; i < v.size(); ++i) {
    if (v[i] > best) {
      best = v[i];
      best_at = i;
    }
  }
  return best_at;
}

// Sum, in double and in a fixed order, of the values >= floor.
double sum_at_least(std::span<const float> v, float floor) {
  std::array<double, kSumLanes> lane{};
  size_t i = 0;
  for (; i + kSumLanes <= v.size(); i += kSumLanes) {
    for (size_t j = 0; j < kSumLanes; ++j) lane[j] += v[i + j] >= floor ? v[i + j] : 0.0f;
  }
  double sum = 0;
  for (double l : lane) sum += l;
  for (; i < v.size(); ++i) sum += v[i] >= floor ? v[i] : 0.0f;
  return sum;
}

// Sum of exp((sanitize(v) - max) * scale), in double.
double sum_exp(std::span<const float> v, float max, float scale) {
  std::array<double, kSumLanes> lane{};
  size_t i = 0;
  for (; i + kSumLanes <= v.size(); i += kSumLanes) {
    for (size_t j = 0; j < kSumLanes; ++j) {
      lane[j] += exp_nonpositive((sanitize(v[i + j]) - max) * scale);
    }
  }
  double sum = 0;
  for (double l : lane) sum += l;
  for (; i < v.size(); ++i) sum += exp_nonpositive((sanitize(v[i]) - max) * scale);
  return sum;
}

// out[i] = exp((sanitize(in[i]) - max) * scale); `in` and `out` may be the same row.
void weights(std::span<const float> in, float max, float scale, std::span<float> out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = exp_nonpositive((sanitize(in[i]) - max) * scale);
}

// Calls take(i) for every i with v[i] > threshold(), in order, skipping blocks of kLanes with
// nothing above it. `take` may raise the threshold; once it is high, nearly every block is
// skipped after one vectorised compare.
template <typename Threshold, typename Take>
void scan_above(std::span<const float> v, Threshold threshold, Take take) {
  size_t i = 0;
  for (; i + kLanes <= v.size(); i += kLanes) {
    const float t = threshold();
    int any = 0;
    for (size_t j = 0; j < kLanes; ++j) any |= v[i + j] > t;
    if (!any) continue;
    for (size_t j = 0; j < kLanes; ++j) {
      if (v[i + j] > threshold()) take(i + j);
    }
  }
  for (; i < v.size(); ++i) {
    if (v[i] > threshold()) take(i);
  }
}

// Index where the running sum of the weights >= floor first exceeds target, or the last such
// index with a positive weight if rounding never lets it. Whole blocks are skipped by their sums.
size_t draw_dense(std::span<const float> w, float floor, double target) {
  constexpr size_t kBlock = 64;
  double sum = 0;
  size_t i = 0;
  for (; i + kBlock <= w.size(); i += kBlock) {
    const double block = sum_at_least(w.subspan(i, kBlock), floor);
    if (sum + block > target) break;
    sum += block;
  }
  for (; i < w.size(); ++i) {
    if (w[i] >= floor) {
      sum += w[i];
      if (sum > target) return i;
    }
  }
  for (size_t j = w.size(); j-- > 0;) {
    if (w[j] >= floor && w[j] > 0) return j;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Candidate selection.

struct ByValueDesc {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.value > b.value || (a.value == b.value && a.id < b.id);
  }
};

// The k (>= 1) largest values of v as candidates, best first (ties: lower id first). NaN and
// -inf are never taken, so fewer than k may come back. Survivors collect in a buffer of 2k;
// when it fills, it is cut back to the best k and the k-th value becomes the bar to beat.
void select_top_k(std::span<const float> v, size_t k, std::vector<Candidate>& out) {
  out.clear();
  const size_t cap = std::max<size_t>(2 * k, 64);
  out.reserve(cap);
  float bar = kNegInf;
  const auto cut = [&] {
    std::nth_element(out.begin(), out.begin() + (k - 1), out.end(), ByValueDesc{});
    out.resize(k);
  };
  scan_above(
      v, [&] { return bar; },
      [&](size_t i) {
        out.push_back({sanitize(v[i]), static_cast<int32_t>(i)});
        if (out.size() == cap) {
          cut();
          bar = out[k - 1].value;  // a later equal value has a higher id: it ranks below
        }
      });
  if (out.size() > k) cut();
  std::sort(out.begin(), out.end(), ByValueDesc{});
}

// Bit fields of a weight's pattern examined by successive levels of the radix select.
struct RadixLevel {
  int shift;
  uint32_t mask;
};
constexpr RadixLevel kRadixLevels[] = {{23, 0xff}, {12, 0x7ff}, {0, 0xfff}};

inline uint32_t radix_digit(float w, const RadixLevel& level) {
  return (std::bit_cast<uint32_t>(w) >> level.shift) & level.mask;
}

// The bucket where the running mass, from the heaviest digit down, reaches `need`; `above`
// gets the mass of the buckets before it. -1 if rounding leaves `need` out of reach.
template <size_t N>
int64_t crossing_digit(const std::array<double, N>& mass, uint32_t mask, double need,
                       double& above) {
  above = 0;
  for (int64_t d = mask; d >= 0; --d) {
    if (above + mass[d] >= need) return d;
    above += mass[d];
  }
  return -1;
}

// Mass of the weights in each band of the first radix level (weights sharing an exponent).
// Four interleaved tables, so that runs of weights in one band do not wait on each other's
// additions; they are added up in a fixed order.
std::array<double, 256> band_masses(std::span<const float> w) {
  const RadixLevel& level = kRadixLevels[0];
  std::array<std::array<double, 256>, 4> part{};
  size_t i = 0;
  for (; i + 4 <= w.size(); i += 4) {
    for (size_t j = 0; j < 4; ++j) part[j][radix_digit(w[i + j], level)] += w[i + j];
  }
  for (; i < w.size(); ++i) part[0][radix_digit(w[i], level)] += w[i];
  std::array<double, 256> mass;
  for (size_t d = 0; d < mass.size(); ++d)
    mass[d] = (part[0][d] + part[1][d]) + (part[2][d] + part[3][d]);
  return mass;
}

// Moves to the front of `items` the smallest set of highest-weight items whose weights sum to
// at least `need` (> 0) and returns its size; equal weights are taken lowest id first.
// An MSD radix select on the weights' bit patterns, which order like the weights since these
// are >= 0: each level histograms one digit, keeps the buckets above the one where the running
// mass crosses `need`, drops those below, and refines inside the crossing bucket. Linear time
// whatever the distribution's shape (a flat one defeats "sort what is above a threshold").
// Levels before `first_level` were already decided by the caller.
size_t select_top_mass(std::span<Candidate> items, double need, size_t first_level) {
  std::array<double, 4096> mass;
  size_t lo = 0, hi = items.size();  // [0, lo) kept; [lo, hi) undecided
  for (size_t l = first_level; l < std::size(kRadixLevels); ++l) {
    const RadixLevel& level = kRadixLevels[l];
    std::fill(mass.begin(), mass.begin() + level.mask + 1, 0.0);
    for (size_t i = lo; i < hi; ++i) mass[radix_digit(items[i].value, level)] += items[i].value;
    double above = 0;
    const int64_t crossing = crossing_digit(mass, level.mask, need, above);
    if (crossing < 0) return hi;  // rounding: keep all that is left
    const auto digit = [&](const Candidate& c) { return int64_t{radix_digit(c.value, level)}; };
    const auto mid = std::partition(items.begin() + lo, items.begin() + hi,
                                    [&](const Candidate& c) { return digit(c) > crossing; });
    const auto end = std::partition(mid, items.begin() + hi,
                                    [&](const Candidate& c) { return digit(c) == crossing; });
    lo = mid - items.begin();
    hi = end - items.begin();
    need -= above;
  }
  // [lo, hi) share one bit pattern: one weight w > 0 (their bucket's mass reached need > 0).
  assert(lo < hi && items[lo].value > 0);
  const double w = items[lo].value;
  const double wanted = std::max(1.0, std::ceil(need / w));
  const size_t take =
      wanted >= static_cast<double>(hi - lo) ? hi - lo : static_cast<size_t>(wanted);
  std::nth_element(items.begin() + lo, items.begin() + lo + (take - 1), items.begin() + hi,
                   [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
  return lo + take;
}

// Top-p over candidates holding weights: how many of the heaviest to keep for a mass of `need`
// (they are moved first). Includes every token heavier than those it drops.
size_t top_p_keep(std::span<Candidate> items, double need) {
  if (items.size() > kSortLimit) return select_top_mass(items, need, 0);
  std::sort(items.begin(), items.end(), ByValueDesc{});
  double sum = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    sum += items[i].value;
    if (sum >= need) return i + 1;
  }
  return items.size();
}

// ---------------------------------------------------------------------------------------------
// Raw log-probabilities.

// log Z of the raw logits, so that logprob(l) = l - log Z; NaN when no logit is finite.
double raw_log_normaliser(std::span<const float> logits) {
  const float max = std::min(max_value(logits), FLT_MAX);
  if (max == kNegInf) return std::numeric_limits<double>::quiet_NaN();
  return max + std::log(sum_exp(logits, max, 1.0f));
}

float raw_logprob(float logit, double log_z) {
  if (std::isnan(logit) || std::isnan(log_z)) return kNegInf;
  return static_cast<float>(static_cast<double>(sanitize(logit)) - log_z);
}

// The n highest logits, highest first; equal logits keep the lower id first.
std::vector<TokenLogprob> top_raw_logprobs(std::span<const float> logits, size_t n, double log_z) {
  std::vector<TokenLogprob> best;  // holds raw logits until the end
  best.reserve(n + 1);
  const auto after = [](float v, const TokenLogprob& e) { return v > e.logprob; };
  scan_above(
      logits, [&] { return best.size() < n ? kNegInf : best.back().logprob; },
      [&](size_t i) {
        const float v = logits[i];
        best.insert(std::upper_bound(best.begin(), best.end(), v, after),
                    TokenLogprob{static_cast<int32_t>(i), v});
        if (best.size() > n) best.pop_back();
      });
  for (TokenLogprob& e : best) e.logprob = raw_logprob(e.logprob, log_z);
  return best;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

Xoshiro256::Xoshiro256(uint64_t seed) {
  for (uint64_t& s : s_) s = splitmix64(seed);
}

uint64_t Xoshiro256::next() {
  const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

void log_softmax(std::span<const float> logits, std::span<float> out) {
  assert(out.size() == logits.size());
  const double log_z = raw_log_normaliser(logits);
  for (size_t i = 0; i < logits.size(); ++i) out[i] = raw_logprob(logits[i], log_z);
}

// ---------------------------------------------------------------------------------------------
// Sampler.

Sampler::Sampler(SamplingParams params, uint64_t seed) : params_(std::move(params)), rng_(seed) {}

bool Sampler::is_greedy() const { return params_.temperature < kGreedyTemperature; }

bool Sampler::has_adjustments() const {
  return !params_.logit_bias.empty() || params_.repetition_penalty != 1 ||
         params_.presence_penalty != 0 || params_.frequency_penalty != 0;
}

std::span<const float> Sampler::adjusted(std::span<const float> logits,
                                         const TokenHistory& history) {
  if (!has_adjustments()) return logits;  // nothing to change: read the model's row directly
  const size_t n = logits.size();
  values_.resize(n);
  for (size_t i = 0; i < n; ++i) values_[i] = sanitize(logits[i]);
  for (const auto& [token, bias] : params_.logit_bias) {
    if (token >= 0 && static_cast<size_t>(token) < n) values_[token] += bias;
  }
  if (params_.repetition_penalty != 1 || params_.presence_penalty != 0 ||
      params_.frequency_penalty != 0) {
    apply_penalties(history);
  }
  return values_;
}

// Each distinct token is penalised once, in time linear in the history: counts_ marks prompt
// tokens with a flag bit and counts generated ones in the low bits; penalising clears them.
void Sampler::apply_penalties(const TokenHistory& history) {
  const size_t n = values_.size();
  counts_.resize(n);  // zero-filled when first allocated; every call leaves it all zero
  constexpr uint32_t kInPrompt = 1u << 31;
  const auto in_vocab = [n](int32_t t) { return t >= 0 && static_cast<size_t>(t) < n; };
  for (int32_t t : history.prompt) {
    if (in_vocab(t)) counts_[t] |= kInPrompt;
  }
  for (int32_t t : history.generated) {
    if (in_vocab(t)) ++counts_[t];
  }
  const float rep = params_.repetition_penalty;
  const auto penalise = [&](int32_t t) {
    if (!in_vocab(t) || counts_[t] == 0) return;  // out of range, or already done
    const uint32_t generated = counts_[t] & ~kInPrompt;
    float& v = values_[t];
    v = v > 0 ? v / rep : v * rep;
    if (generated > 0) {
      v -= params_.frequency_penalty * static_cast<float>(generated) + params_.presence_penalty;
    }
    counts_[t] = 0;
  };
  for (int32_t t : history.prompt) penalise(t);
  for (int32_t t : history.generated) penalise(t);
}

Sampler::Pool Sampler::impossible() {
  cands_.assign(1, Candidate{1.0f, 0});
  return {cands_, {}, 0, 1.0};
}

Sampler::Pool Sampler::filter(std::span<const float> adjusted) {
  const size_t k = static_cast<size_t>(params_.top_k);
  if (k > 0 && k < adjusted.size()) return filter_top_k(adjusted, k);
  return filter_dense(adjusted);
}

Sampler::Pool Sampler::filter_top_k(std::span<const float> adjusted, size_t k) {
  if (k <= kSmallTopK) {
    select_top_k(adjusted, k, cands_);
  } else {
    cands_.resize(adjusted.size());
    for (size_t i = 0; i < adjusted.size(); ++i) {
      cands_[i] = {sanitize(adjusted[i]), static_cast<int32_t>(i)};
    }
    std::nth_element(cands_.begin(), cands_.begin() + (k - 1), cands_.end(), ByValueDesc{});
    cands_.resize(k);
  }
  float max = kNegInf;
  for (const Candidate& c : cands_) max = std::max(max, c.value);
  if (max == kNegInf) return impossible();
  const float inv_temperature = 1.0f / params_.temperature;
  double total = 0;
  for (Candidate& c : cands_) {
    c.value = exp_nonpositive((c.value - max) * inv_temperature);  // the top one gets exactly 1
    total += c.value;
  }
  if (params_.top_p < 1) cands_.resize(top_p_keep(cands_, params_.top_p * total));
  return finish_list();
}

Sampler::Pool Sampler::filter_dense(std::span<const float> adjusted) {
  const float max = std::min(max_value(adjusted), FLT_MAX);
  if (max == kNegInf) return impossible();
  values_.resize(adjusted.size());
  weights(adjusted, max, 1.0f / params_.temperature, values_);  // the top token gets exactly 1
  if (params_.top_p >= 1) {  // no list: draw straight from the row, min-p as a floor
    const float floor = params_.min_p;
    return {{}, values_, floor, sum_at_least(values_, floor)};
  }
  // Top-p: the radix select's first level runs over the row itself, so only tokens in or above
  // the crossing bucket (a power-of-two band of weights) become candidates.
  const double need = params_.top_p * sum_at_least(values_, 0.0f);
  const RadixLevel& level = kRadixLevels[0];
  const std::array<double, 256> mass = band_masses(values_);
  double above = 0;
  const int64_t crossing = crossing_digit(mass, level.mask, need, above);
  // Candidates: weights >= the crossing bucket's lower edge (all of them if rounding left
  // `need` out of reach); the bar is the float just below that edge.
  const uint32_t edge = crossing < 0 ? 0 : static_cast<uint32_t>(crossing) << level.shift;
  const float bar = std::nextafter(std::bit_cast<float>(edge), -1.0f);
  cands_.clear();
  scan_above(
      values_, [bar] { return bar; },
      [&](size_t i) {
        cands_.push_back({values_[i], static_cast<int32_t>(i)});
      });
  if (crossing < 0) return finish_list();
  if (cands_.size() <= kSortLimit) {  // few enough to sort: cheaper than two more levels
    cands_.resize(top_p_keep(cands_, need));
    return finish_list();
  }
  const auto mid = std::partition(cands_.begin(), cands_.end(), [&](const Candidate& c) {
    return radix_digit(c.value, level) > static_cast<uint32_t>(crossing);
  });
  const size_t certain = mid - cands_.begin();
  const size_t more =
      select_top_mass(std::span(cands_).subspan(certain), need - above, /*first_level=*/1);
  cands_.resize(certain + more);
  return finish_list();
}

Sampler::Pool Sampler::finish_list() {
  if (params_.min_p > 0) {  // p >= min_p * p_max  <=>  weight >= min_p, as p_max has weight 1
    const float floor = params_.min_p;
    std::erase_if(cands_, [&](const Candidate& c) { return c.value < floor; });
  }
  double total = 0;
  for (const Candidate& c : cands_) total += c.value;
  return {cands_, {}, 0, total};
}

int32_t Sampler::draw(const Pool& pool) {
  const double target = rng_.uniform() * pool.total;
  if (pool.list.empty()) {
    return static_cast<int32_t>(draw_dense(pool.dense, pool.min_weight, target));
  }
  double sum = 0;
  for (const Candidate& c : pool.list) {
    sum += c.value;
    if (sum > target) return c.id;
  }
  for (auto it = pool.list.rbegin(); it != pool.list.rend(); ++it) {  // rounding at the end
    if (it->value > 0) return it->id;
  }
  return pool.list.front().id;
}

SampleResult Sampler::sample(std::span<const float> logits, const TokenHistory& history) {
  assert(!logits.empty() && logits.size() <= size_t{std::numeric_limits<int32_t>::max()});
  SampleResult result;
  const std::span<const float> row = adjusted(logits, history);
  result.token = is_greedy() ? static_cast<int32_t>(argmax(row)) : draw(filter(row));
  if (params_.logprobs || params_.top_logprobs > 0) {
    const double log_z = raw_log_normaliser(logits);
    result.logprob = raw_logprob(logits[result.token], log_z);
    if (params_.top_logprobs > 0) {
      result.top_logprobs =
          top_raw_logprobs(logits, static_cast<size_t>(params_.top_logprobs), log_z);
    }
  } else {
    result.logprob = std::numeric_limits<float>::quiet_NaN();
  }
  return result;
}

std::vector<float> Sampler::adjusted_logits(std::span<const float> logits,
                                            const TokenHistory& history) {
  const std::span<const float> row = adjusted(logits, history);
  std::vector<float> out(row.size());
  for (size_t i = 0; i < row.size(); ++i) out[i] = sanitize(row[i]);
  return out;
}

std::vector<TokenProb> Sampler::distribution(std::span<const float> logits,
                                             const TokenHistory& history) {
  const std::span<const float> row = adjusted(logits, history);
  if (is_greedy()) return {TokenProb{static_cast<int32_t>(argmax(row)), 1.0}};
  const Pool pool = filter(row);
  std::vector<TokenProb> out;
  for (const Candidate& c : pool.list) {
    if (c.value > 0) out.push_back({c.id, c.value / pool.total});
  }
  for (size_t i = 0; i < pool.dense.size(); ++i) {
    const float w = pool.dense[i];
    if (w > 0 && w >= pool.min_weight) out.push_back({static_cast<int32_t>(i), w / pool.total});
  }
  std::sort(out.begin(), out.end(), [](const TokenProb& a, const TokenProb& b) {
    return a.prob > b.prob || (a.prob == b.prob && a.token < b.token);
  });
  return out;
}

int32_t greedy_pick(std::span<const float> logits) { return static_cast<int32_t>(argmax(logits)); }

}  // namespace duet
