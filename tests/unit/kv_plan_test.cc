// host/kv_plan.h: the context and KV pool a deployer's flags and the free memory decide.
#include "host/kv_plan.h"

#include <gtest/gtest.h>

namespace duet {
namespace {

constexpr size_t kPerToken = 112 * 1024;  // Qwen3-0.6B at f16: 28 layers × 2 × 8 heads × 128 × 2
constexpr size_t kGiB = size_t{1} << 30;

KvPlanInput qwen3_06b() {
  KvPlanInput in;
  in.model_context = in.trained_context = 40960;
  in.bytes_per_token = kPerToken;
  in.block_size = 16;
  in.parallel = 64;
  in.free_bytes = 20 * kGiB;
  return in;
}

TEST(KvPlan, DefaultsToTheTrainedContextAndHalfTheFreeMemory) {
  auto plan = plan_kv(qwen3_06b());
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->context, 40960);  // not what a fixed budget happens to hold
  EXPECT_EQ(plan->bytes, plan->blocks * 16 * kPerToken);
  EXPECT_LE(plan->bytes, 10 * kGiB);
  EXPECT_GT(plan->bytes, 10 * kGiB - 16 * kPerToken);
  EXPECT_TRUE(plan->adjustments.empty());
  EXPECT_NE(plan->pool_reason.find("half"), std::string::npos) << plan->pool_reason;
}

TEST(KvPlan, EverySequenceGetsAFullContextWhenMemoryAllows) {
  KvPlanInput in = qwen3_06b();
  in.ctx_size = 8192;
  in.parallel = 4;
  auto plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->context, 8192);
  EXPECT_EQ(plan->pool_tokens(), 4 * 8192);
  EXPECT_NE(plan->pool_reason.find("each of 4"), std::string::npos) << plan->pool_reason;
}

TEST(KvPlan, AContextBeyondTheModelIsRefusedOrFitted) {
  KvPlanInput in = qwen3_06b();
  in.ctx_size = 131072;
  auto refused = plan_kv(in);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("-c 131072"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("--rope-scale"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("--fit"), std::string::npos) << refused.message();
  in.fit = true;
  auto fitted = plan_kv(in);
  ASSERT_TRUE(fitted) << fitted.message();
  EXPECT_EQ(fitted->context, 40960);
  ASSERT_EQ(fitted->adjustments.size(), 1u);
  EXPECT_NE(fitted->adjustments[0].find("(-c, --rope-scale)"), std::string::npos);
}

TEST(KvPlan, YarnExtendsWhatMayBeAsked) {
  KvPlanInput in = qwen3_06b();
  in.trained_context = 32768;
  in.model_context = 131072;  // --rope-scale 4
  in.ctx_size = 131072;
  auto plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->context, 131072);
}

TEST(KvPlan, AnExplicitBudgetTooSmallForTheContextNamesTheFlags) {
  KvPlanInput in = qwen3_06b();
  in.kv_budget_mb = 1024;  // 9,362 tokens at 112 KiB each
  auto refused = plan_kv(in);
  ASSERT_FALSE(refused);
  const std::string& m = refused.message();
  EXPECT_NE(m.find("--kv-budget-mb 1024 holds 9360 tokens"), std::string::npos) << m;
  EXPECT_NE(m.find("lower -c"), std::string::npos) << m;
  EXPECT_NE(m.find("--kv-type q8_0"), std::string::npos) << m;
  EXPECT_NE(m.find("raise --kv-budget-mb"), std::string::npos) << m;
  in.fit = true;
  auto fitted = plan_kv(in);
  ASSERT_TRUE(fitted) << fitted.message();
  EXPECT_EQ(fitted->context, 9360);
  EXPECT_EQ(fitted->pool_tokens(), 9360);
  ASSERT_EQ(fitted->adjustments.size(), 1u);
  EXPECT_NE(fitted->adjustments[0].find("(-c, --kv-budget-mb, --kv-type)"), std::string::npos)
      << fitted->adjustments[0];
}

TEST(KvPlan, TooLittleFreeMemoryIsRefusedOrFitted) {
  KvPlanInput in = qwen3_06b();
  in.free_bytes = 2 * kGiB;  // 90 % of it holds 1,053 blocks: 16,848 tokens
  auto refused = plan_kv(in);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("2.0 GiB of memory is free"), std::string::npos)
      << refused.message();
  in.fit = true;
  auto fitted = plan_kv(in);
  ASSERT_TRUE(fitted) << fitted.message();
  EXPECT_EQ(fitted->context, 16848);
  EXPECT_LE(fitted->bytes, 2 * kGiB / 10 * 9);
}

TEST(KvPlan, TheBackendsLargestBufferBoundsThePool) {
  KvPlanInput in = qwen3_06b();
  in.max_blocks = 1000;  // 16,000 tokens per layer buffer
  EXPECT_FALSE(plan_kv(in));
  in.ctx_size = 8192;
  auto plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_LE(plan->blocks, 1000);
  EXPECT_GE(plan->pool_tokens(), 8192);
}

TEST(KvPlan, UnknownMemoryStaysModest) {
  KvPlanInput in = qwen3_06b();
  in.free_bytes.reset();
  auto plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->context, 40960);
  EXPECT_EQ(plan->pool_tokens(), 4 * 40960);
}

TEST(KvPlan, BadFlagsAreErrors) {
  KvPlanInput in = qwen3_06b();
  in.ctx_size = -1;
  EXPECT_FALSE(plan_kv(in));
  in = qwen3_06b();
  in.ctx_size = 1;
  EXPECT_FALSE(plan_kv(in));
  in = qwen3_06b();
  in.parallel = 0;
  EXPECT_FALSE(plan_kv(in));
  in = qwen3_06b();
  in.kv_budget_mb = 1;
  in.bytes_per_token = 1 << 20;  // a block of 16 MiB: not one fits, even with --fit
  in.fit = true;
  EXPECT_FALSE(plan_kv(in));
}

TEST(KvPlan, ExtremeFlagsDoNotOverflow) {  // UBSan checks the arithmetic in the ASan build
  KvPlanInput in = qwen3_06b();
  in.parallel = INT64_MAX;
  auto plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->context, 40960);
  in = qwen3_06b();
  in.free_bytes.reset();
  in.parallel = INT64_MAX;
  plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->pool_tokens(), 4 * 40960);
  in = qwen3_06b();
  in.kv_budget_mb = INT64_MAX;
  EXPECT_FALSE(plan_kv(in));
  in = qwen3_06b();
  in.ctx_size = INT64_MAX;
  in.fit = true;
  plan = plan_kv(in);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->context, 40960);
}

TEST(KvPlan, FormatsSizes) {
  EXPECT_EQ(format_bytes(640u << 20), "640 MiB");
  EXPECT_EQ(format_bytes(3 * kGiB / 2), "1.5 GiB");
}

}  // namespace
}  // namespace duet
