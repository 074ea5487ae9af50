// The writer's files parse back to what was written: every value type, arrays, alignment.
#include <gtest/gtest.h>

#include <cstring>

#include "gguf/gguf_writer.h"

namespace duet {
namespace {

TEST(GgufRoundTrip, MetadataAndTensors) {
  GgufWriter w;
  w.set_alignment(64);
  w.add_u32("a.u32", 4000000000u);
  w.add_i32("a.i32", -7);
  w.add_u64("a.u64", 1ull << 40);
  w.add_f32("a.f32", 0.25f);
  w.add_bool("a.bool", true);
  w.add_string("a.str", "héllo");
  w.add_string_array("a.strs", {"x", "", "yz"});
  w.add_i32_array("a.ints", {1, -2, 3});
  w.add_f32_array("a.floats", {1.5f, -2.5f});
  w.add_tensor("t0", GgmlType::F32, {3, 2});
  w.add_tensor("t1", GgmlType::Q8_0, {64});
  auto bytes = w.to_bytes([&](size_t i, std::vector<uint8_t>& d) {
    d.resize(w.tensor_bytes(i));
    for (size_t k = 0; k < d.size(); ++k) d[k] = static_cast<uint8_t>(i * 31 + k);
    return Status::ok();
  });
  ASSERT_TRUE(bytes.is_ok());
  auto f = GgufFile::parse(*bytes);
  ASSERT_TRUE(f.is_ok()) << f.message();
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_EQ(*f->find("a.u32")->as_int(), 4000000000ll);
  EXPECT_EQ(*f->find("a.i32")->as_int(), -7);
  EXPECT_EQ(*f->find("a.u64")->as_int(), 1ll << 40);
  EXPECT_EQ(*f->find("a.f32")->as_float(), 0.25);
  EXPECT_EQ(*f->find("a.bool")->as_bool(), true);
  EXPECT_EQ(*f->find("a.str")->as_string(), "héllo");
  EXPECT_FALSE(f->find("a.str")->as_int().has_value());
  auto strs = f->find("a.strs")->arr.strings();
  ASSERT_TRUE(strs.is_ok());
  EXPECT_EQ(*strs, (std::vector<std::string_view>{"x", "", "yz"}));
  EXPECT_EQ(*f->find("a.ints")->arr.ints(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(*f->find("a.floats")->arr.floats(), (std::vector<double>{1.5, -2.5}));
  EXPECT_FALSE(f->find("a.ints")->arr.strings().is_ok());
  EXPECT_FALSE(f->find("a.strs")->arr.ints().is_ok());
  EXPECT_EQ(f->find("missing"), nullptr);

  ASSERT_EQ(f->tensors().size(), 2u);
  const GgufTensorInfo* t0 = f->find_tensor("t0");
  ASSERT_NE(t0, nullptr);
  EXPECT_EQ(t0->n_dims, 2);
  EXPECT_EQ(t0->ne[0], 3);
  EXPECT_EQ(t0->ne[1], 2);
  EXPECT_EQ(t0->n_bytes, 24u);
  EXPECT_EQ(t0->data[5], 5);
  const GgufTensorInfo* t1 = f->find_tensor("t1");
  EXPECT_EQ(t1->type, GgmlType::Q8_0);
  EXPECT_EQ(t1->n_bytes, 68u);
  EXPECT_EQ(t1->offset % 64, 0u);
  EXPECT_EQ(t1->data[0], 31);
  EXPECT_EQ(t1->shape_string(), "[64]");
}

TEST(GgufRoundTrip, Version2Parses) {
  GgufWriter w;
  w.add_u32("k", 1);
  auto bytes = w.header_bytes();
  bytes[4] = 2;  // version field
  auto f = GgufFile::parse(bytes);
  ASSERT_TRUE(f.is_ok()) << f.message();
  EXPECT_EQ(f->version(), 2u);
}

TEST(GgufRoundTrip, ProducerSizeMismatchIsAnError) {
  GgufWriter w;
  w.add_tensor("t", GgmlType::F32, {4});
  auto bytes = w.to_bytes([](size_t, std::vector<uint8_t>& d) {
    d.resize(3);
    return Status::ok();
  });
  EXPECT_FALSE(bytes.is_ok());
}

}  // namespace
}  // namespace duet
