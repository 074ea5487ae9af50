// Bad input for the GGUF reader, the vocabulary reader and the Qwen3 loader: every GGUF
// row of docs/quality.md's catalogue, built byte by byte in memory. Each test checks that
// the input is refused AND that the message names the problem, so a check that starts
// failing for the wrong reason (an earlier check tripping first) shows up here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/ref_backend.h"
#include "forge/forge.h"
#include "forge/vocab_source.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/qwen3_model.h"
#include "text/tokenizer/vocab.h"

namespace duet {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using namespace gguf_bytes;

constexpr uint32_t kMagic = 0x46554747;  // "GGUF"
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint64_t k2Pow63 = uint64_t{1} << 63;

uint32_t vt(GgufValueType t) { return static_cast<uint32_t>(t); }
uint32_t tt(GgmlType t) { return static_cast<uint32_t>(t); }

// The parse error for `bytes`, which must be refused. The bytes are copied into a
// buffer of exactly their size so that a sanitizer build sees any read past the end.
std::string parse_error(const std::vector<uint8_t>& bytes) {
  const std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  auto r = GgufFile::parse(exact);
  EXPECT_FALSE(r.is_ok()) << "parse accepted " << bytes.size() << " malformed bytes";
  if (r.is_ok()) return "<parse succeeded>";
  EXPECT_FALSE(r.message().empty());
  return r.message();
}

// magic, version, tensor count, metadata count.
std::vector<uint8_t> preamble(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
  std::vector<uint8_t> b;
  put_u32(b, kMagic);
  put_u32(b, version);
  put_u64(b, n_tensors);
  put_u64(b, n_kv);
  return b;
}

void put_key(std::vector<uint8_t>& b, const std::string& key, GgufValueType type) {
  put_string(b, key);
  put_u32(b, vt(type));
}

void pad_zeros(std::vector<uint8_t>& b, size_t n) { b.insert(b.end(), n, 0); }

// One tensor record as the file spells it; n_dims defaults to ne.size().
struct RawTensor {
  std::string name;
  std::vector<uint64_t> ne;
  uint32_t type = 0;
  uint64_t offset = 0;
  int64_t n_dims = -1;
};

void put_tensor(std::vector<uint8_t>& b, const RawTensor& t) {
  put_string(b, t.name);
  put_u32(b, t.n_dims >= 0 ? static_cast<uint32_t>(t.n_dims) : static_cast<uint32_t>(t.ne.size()));
  for (uint64_t d : t.ne) put_u64(b, d);
  put_u32(b, t.type);
  put_u64(b, t.offset);
}

// A file with no metadata, the given tensor records, padding to 32, then `data_bytes`
// zero bytes of tensor data.
std::vector<uint8_t> tensor_file(const std::vector<RawTensor>& tensors, size_t data_bytes) {
  std::vector<uint8_t> b = preamble(tensors.size(), 0);
  for (const auto& t : tensors) put_tensor(b, t);
  pad_zeros(b, (32 - b.size() % 32) % 32);
  pad_zeros(b, data_bytes);
  return b;
}

// A producer that fills each tensor with a recognisable byte pattern.
GgufWriter::Producer pattern_producer(const GgufWriter& w) {
  return [&w](size_t i, std::vector<uint8_t>& data) -> Status {
    data.resize(w.tensor_bytes(i));
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(i * 31 + k);
    return Status::ok();
  };
}

// A small valid file with one value of most kinds and two tensors; the last tensor is
// exactly 32 bytes, so the file ends with tensor data and not with padding.
std::vector<uint8_t> small_valid_file() {
  GgufWriter w;
  w.add_string("general.architecture", "qwen3");
  w.add_u32("qwen3.block_count", 1);
  w.add_i32("test.i32", -5);
  w.add_u64("test.u64", uint64_t{1} << 40);
  w.add_f32("test.f32", 0.5f);
  w.add_bool("test.bool", true);
  w.add_string_array("tokenizer.ggml.tokens", {"a", "bc", ""});
  w.add_i32_array("tokenizer.ggml.token_type", {1, 1, 3});
  w.add_f32_array("test.f32s", {1.0f, 2.0f});
  w.add_tensor("a", GgmlType::Q8_0, {32, 2});  // 68 bytes, padded to 96
  w.add_tensor("b", GgmlType::F32, {8});       // 32 bytes, last
  auto bytes = w.to_bytes(pattern_producer(w));
  EXPECT_TRUE(bytes.is_ok()) << bytes.message();
  return bytes.is_ok() ? *bytes : std::vector<uint8_t>{};
}

// ---- the file header ------------------------------------------------------------------

TEST(GgufMalformed, EmptyFile) {
  EXPECT_THAT(parse_error({}), HasSubstr("not a GGUF file: only 0 bytes"));
}

TEST(GgufMalformed, ThreeByteFile) {
  EXPECT_THAT(parse_error({'G', 'G', 'U'}), HasSubstr("not a GGUF file: only 3 bytes"));
}

TEST(GgufMalformed, FourByteFile) {
  // The magic alone: the version is missing.
  EXPECT_THAT(parse_error({'G', 'G', 'U', 'F'}),
              HasSubstr("file truncated while reading version at offset 4"));
}

TEST(GgufMalformed, BadMagic) {
  std::vector<uint8_t> b = preamble(0, 0);
  b[3] = 'X';  // "GGUX"
  EXPECT_THAT(parse_error(b), HasSubstr("not a GGUF file: bad magic"));
  std::vector<uint8_t> swapped = {'F', 'U', 'G', 'G', 3, 0, 0, 0};  // byte-swapped magic
  EXPECT_THAT(parse_error(swapped), HasSubstr("bad magic"));
}

TEST(GgufMalformed, VersionZero) {
  EXPECT_THAT(parse_error(preamble(0, 0, 0)),
              HasSubstr("unsupported GGUF version 0 (expected 2 or 3)"));
}

TEST(GgufMalformed, VersionOne) {
  EXPECT_THAT(parse_error(preamble(0, 0, 1)), HasSubstr("GGUF version 1 is not supported"));
}

TEST(GgufMalformed, VersionFour) {
  EXPECT_THAT(parse_error(preamble(0, 0, 4)),
              HasSubstr("unsupported GGUF version 4 (expected 2 or 3)"));
}

TEST(GgufMalformed, VersionThreeWrittenBigEndian) {
  // A big-endian GGUF file: version 3 reads as 0x03000000 on a little-endian host.
  EXPECT_THAT(parse_error(preamble(0, 0, 0x03000000)),
              HasSubstr("unsupported GGUF version 50331648"));
}

TEST(GgufMalformed, VersionsTwoAndThreeAreAccepted) {
  for (uint32_t version : {2u, 3u}) {
    auto r = GgufFile::parse(preamble(0, 0, version));
    ASSERT_TRUE(r.is_ok()) << "version " << version << ": " << r.message();
    EXPECT_EQ(r->version(), version);
    EXPECT_TRUE(r->tensors().empty());
  }
}

TEST(GgufMalformed, MetadataCountAllOnes) {
  std::vector<uint8_t> b = preamble(0, kU64Max);
  pad_zeros(b, 64);
  EXPECT_THAT(parse_error(b),
              HasSubstr("metadata count 18446744073709551615 is more than the file can hold"));
}

TEST(GgufMalformed, TensorCountAllOnes) {
  std::vector<uint8_t> b = preamble(kU64Max, 0);
  pad_zeros(b, 64);
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor count 18446744073709551615 is more than the file can hold"));
}

// ---- general.alignment ----------------------------------------------------------------

TEST(GgufMalformed, AlignmentZero) {
  GgufWriter w;
  w.set_alignment(0);
  EXPECT_THAT(parse_error(w.header_bytes()),
              HasSubstr("general.alignment 0 is not a power of two between 1 and 1048576"));
}

TEST(GgufMalformed, AlignmentTwoToThe30) {
  GgufWriter w;
  w.set_alignment(uint32_t{1} << 30);
  EXPECT_THAT(
      parse_error(w.header_bytes()),
      HasSubstr("general.alignment 1073741824 is not a power of two between 1 and 1048576"));
}

TEST(GgufMalformed, AlignmentNotPowerOfTwo) {
  GgufWriter w;
  w.set_alignment(48);
  EXPECT_THAT(parse_error(w.header_bytes()),
              HasSubstr("general.alignment 48 is not a power of two"));
}

TEST(GgufMalformed, AlignmentOfWrongType) {
  GgufWriter as_u64;
  as_u64.add_u64("general.alignment", 32);
  EXPECT_THAT(parse_error(as_u64.header_bytes()), HasSubstr("general.alignment must be a u32"));
  GgufWriter as_string;
  as_string.add_string("general.alignment", "32");
  EXPECT_THAT(parse_error(as_string.header_bytes()), HasSubstr("general.alignment must be a u32"));
}

TEST(GgufMalformed, NonDefaultAlignmentIsHonoured) {
  GgufWriter w;
  w.set_alignment(64);
  w.add_tensor("a", GgmlType::F32, {3});
  w.add_tensor("b", GgmlType::F32, {16});
  auto bytes = w.to_bytes(pattern_producer(w));
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  auto r = GgufFile::parse(*bytes);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(r->alignment(), 64u);
  EXPECT_EQ(r->data_offset() % 64, 0u);
  ASSERT_NE(r->find_tensor("b"), nullptr);
  EXPECT_EQ(r->find_tensor("b")->offset, 64u);
  EXPECT_EQ(r->find_tensor("b")->data, bytes->data() + r->data_offset() + 64);
}

// ---- strings and metadata values ------------------------------------------------------

TEST(GgufMalformed, KeyStringLengthTwoToThe63) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_u64(b, k2Pow63);
  pad_zeros(b, 32);
  EXPECT_THAT(parse_error(b),
              HasSubstr("metadata key length 9223372036854775808 at offset 24 runs past the end"));
}

TEST(GgufMalformed, ValueStringLengthTwoToThe63) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "general.name", GgufValueType::STRING);
  put_u64(b, k2Pow63);
  pad_zeros(b, 32);
  const std::string msg = parse_error(b);
  EXPECT_THAT(msg, HasSubstr("metadata key 'general.name'"));
  EXPECT_THAT(msg, HasSubstr("string value length 9223372036854775808"));
  EXPECT_THAT(msg, HasSubstr("runs past the end of the file"));
}

TEST(GgufMalformed, ArrayStringElementLengthTwoToThe63) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "tokenizer.ggml.tokens", GgufValueType::ARRAY);
  put_u32(b, vt(GgufValueType::STRING));
  put_u64(b, 2);
  put_string(b, "ok");
  put_u64(b, k2Pow63);
  pad_zeros(b, 32);
  const std::string msg = parse_error(b);
  EXPECT_THAT(msg, HasSubstr("metadata key 'tokenizer.ggml.tokens'"));
  EXPECT_THAT(msg, HasSubstr("array string length 9223372036854775808"));
}

TEST(GgufMalformed, TensorNameLengthTwoToThe63) {
  std::vector<uint8_t> b = preamble(1, 0);
  put_u64(b, k2Pow63);
  pad_zeros(b, 64);
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor name length 9223372036854775808 at offset 24 runs past the end"));
}

TEST(GgufMalformed, ArrayCountAllOnesForFixedSizeElements) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "test.array", GgufValueType::ARRAY);
  put_u32(b, vt(GgufValueType::UINT8));
  put_u64(b, kU64Max);
  pad_zeros(b, 64);
  const std::string msg = parse_error(b);
  EXPECT_THAT(msg, HasSubstr("metadata key 'test.array'"));
  EXPECT_THAT(msg, HasSubstr("array of 18446744073709551615 elements"));
  EXPECT_THAT(msg, HasSubstr("runs past the end of the file"));
}

TEST(GgufMalformed, ArrayCountWhoseByteSizeWrapsToZero) {
  // count × element size = 2^64 exactly: a check on the product alone would see 0 bytes.
  const std::vector<std::pair<GgufValueType, uint64_t>> cases = {
      {GgufValueType::UINT16, uint64_t{1} << 63},  {GgufValueType::INT32, uint64_t{1} << 62},
      {GgufValueType::FLOAT32, uint64_t{1} << 62}, {GgufValueType::UINT64, uint64_t{1} << 61},
      {GgufValueType::FLOAT64, uint64_t{1} << 61},
  };
  for (const auto& [type, count] : cases) {
    SCOPED_TRACE(gguf_value_type_name(type));
    std::vector<uint8_t> b = preamble(0, 1);
    put_key(b, "test.array", GgufValueType::ARRAY);
    put_u32(b, vt(type));
    put_u64(b, count);
    pad_zeros(b, 64);
    EXPECT_THAT(parse_error(b), HasSubstr("array of " + std::to_string(count) + " elements"));
  }
}

TEST(GgufMalformed, ArrayCountHugeForStrings) {
  for (uint64_t count : {kU64Max, uint64_t{1} << 61}) {
    std::vector<uint8_t> b = preamble(0, 1);
    put_key(b, "tokenizer.ggml.tokens", GgufValueType::ARRAY);
    put_u32(b, vt(GgufValueType::STRING));
    put_u64(b, count);
    pad_zeros(b, 64);
    const std::string msg = parse_error(b);
    EXPECT_THAT(msg, HasSubstr("metadata key 'tokenizer.ggml.tokens'"));
    EXPECT_THAT(msg, HasSubstr("array of " + std::to_string(count) + " elements"));
  }
}

TEST(GgufMalformed, ArrayCountHugeForNestedArrays) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "test.array", GgufValueType::ARRAY);
  put_u32(b, vt(GgufValueType::ARRAY));
  put_u64(b, kU64Max);
  pad_zeros(b, 64);
  EXPECT_THAT(parse_error(b), HasSubstr("array of 18446744073709551615 elements"));
}

// `levels` arrays, each the single element of the one outside it; the innermost is an
// empty array of u8.
std::vector<uint8_t> nested_arrays(int levels) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "test.nested", GgufValueType::ARRAY);
  for (int level = 1; level <= levels; ++level) {
    const bool innermost = level == levels;
    put_u32(b, vt(innermost ? GgufValueType::UINT8 : GgufValueType::ARRAY));
    put_u64(b, innermost ? 0 : 1);
  }
  pad_zeros(b, 16);
  return b;
}

TEST(GgufMalformed, NestedArraysTooDeep) {
  const std::string msg = parse_error(nested_arrays(5));
  EXPECT_THAT(msg, HasSubstr("metadata key 'test.nested'"));
  EXPECT_THAT(msg, HasSubstr("arrays nested deeper than 4 levels"));
  EXPECT_THAT(parse_error(nested_arrays(1000)), HasSubstr("arrays nested deeper than 4 levels"));
}

TEST(GgufMalformed, NestedArraysAtTheDepthLimitParse) {
  std::vector<uint8_t> b = nested_arrays(4);
  b.resize(b.size() - 16);  // no trailing bytes: this is a complete file
  auto r = GgufFile::parse(b);
  ASSERT_TRUE(r.is_ok()) << r.message();
  const GgufValue* v = r->find("test.nested");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->arr.elem_type, GgufValueType::ARRAY);
  EXPECT_EQ(v->arr.count, 1u);
  EXPECT_FALSE(v->arr.ints().is_ok());  // an array of arrays is not an array of integers
  EXPECT_FALSE(v->arr.strings().is_ok());
}

TEST(GgufMalformed, UnknownMetadataValueType) {
  for (uint32_t type : {13u, 0xFFFFFFFFu}) {
    std::vector<uint8_t> b = preamble(0, 1);
    put_string(b, "test.key");
    put_u32(b, type);
    pad_zeros(b, 16);
    EXPECT_THAT(parse_error(b),
                HasSubstr("metadata key 'test.key' has unknown type " + std::to_string(type)));
  }
}

TEST(GgufMalformed, UnknownArrayElementType) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "test.array", GgufValueType::ARRAY);
  put_u32(b, 13);
  put_u64(b, 1);
  pad_zeros(b, 16);
  EXPECT_THAT(parse_error(b), HasSubstr("array has unknown element type 13"));
}

TEST(GgufMalformed, UnknownNestedArrayElementType) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "test.array", GgufValueType::ARRAY);
  put_u32(b, vt(GgufValueType::ARRAY));
  put_u64(b, 1);
  put_u32(b, 99);
  put_u64(b, 0);
  pad_zeros(b, 16);
  EXPECT_THAT(parse_error(b), HasSubstr("nested array has unknown element type 99"));
}

TEST(GgufMalformed, BoolValueNeitherZeroNorOne) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "test.flag", GgufValueType::BOOL);
  put_u8(b, 2);
  pad_zeros(b, 16);
  EXPECT_THAT(parse_error(b), HasSubstr("bool value 2 is neither 0 nor 1"));
}

TEST(GgufMalformed, EmptyKey) {
  std::vector<uint8_t> b = preamble(0, 1);
  put_key(b, "", GgufValueType::UINT32);
  put_u32(b, 1);
  pad_zeros(b, 16);
  EXPECT_THAT(parse_error(b), HasSubstr("metadata entry 0 has an empty key"));
}

TEST(GgufMalformed, DuplicateKey) {
  GgufWriter w;
  w.add_string("general.name", "first");
  w.add_u32("qwen3.block_count", 1);
  w.add_string("general.name", "second");
  EXPECT_THAT(parse_error(w.header_bytes()),
              HasSubstr("metadata key 'general.name' appears twice"));
}

// ---- tensor records -------------------------------------------------------------------

TEST(GgufMalformed, TensorWithZeroDimensions) {
  EXPECT_THAT(parse_error(tensor_file({{"w", {}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' has 0 dimensions (1 to 4 allowed)"));
}

TEST(GgufMalformed, TensorWithMoreThanFourDimensions) {
  EXPECT_THAT(parse_error(tensor_file({{"w", {1, 1, 1, 1, 1}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' has 5 dimensions (1 to 4 allowed)"));
  RawTensor huge{"w", {}, tt(GgmlType::F32), 0, 0xFFFFFFFF};
  EXPECT_THAT(parse_error(tensor_file({huge}, 64)),
              HasSubstr("tensor 'w' has 4294967295 dimensions"));
}

TEST(GgufMalformed, TensorWithAZeroDimension) {
  EXPECT_THAT(parse_error(tensor_file({{"w", {4, 0}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' has invalid dimension 1 = 0"));
}

TEST(GgufMalformed, TensorDimensionAboveInt64Max) {
  EXPECT_THAT(parse_error(tensor_file({{"w", {k2Pow63}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' has invalid dimension 0 = 9223372036854775808"));
}

TEST(GgufMalformed, TensorDimensionsWhoseProductOverflowsInt64) {
  const uint64_t p32 = uint64_t{1} << 32, p21 = uint64_t{1} << 21;
  EXPECT_THAT(parse_error(tensor_file({{"w", {p32, p32}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' has dimensions whose product overflows"));
  // 2^63 exactly: one past int64's maximum.
  EXPECT_THAT(parse_error(tensor_file({{"w", {p21, p21, p21}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' has dimensions whose product overflows"));
}

TEST(GgufMalformed, TensorByteSizeOverflowsUint64) {
  // The element count fits int64, but count × 4 bytes of F32 does not fit 64 bits: it
  // must be refused, not wrap to a small size that the file seems to hold.
  const uint64_t p62 = uint64_t{1} << 62;
  EXPECT_THAT(parse_error(tensor_file({{"w", {p62 + 1}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' is too large"));
  EXPECT_THAT(parse_error(tensor_file({{"w", {64, p62 / 64}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 'w' is too large"));
  EXPECT_THAT(parse_error(tensor_file({{"w", {p62}, tt(GgmlType::F64), 0}}, 64)),
              HasSubstr("tensor 'w' is too large"));
}

TEST(GgufMalformed, UnknownTensorTypeId) {
  // Ids no ggml type has (4 and 5 were removed long ago, 31 and 32 more recently). Types
  // duet knows by name but cannot compute with are refused at load, naming the type
  // (ModelLoad.UnsupportedTensorTypeIsNamed).
  for (uint32_t type : {4u, 5u, 31u, 32u, 1000u, 0xFFFFFFFFu}) {
    EXPECT_THAT(parse_error(tensor_file({{"w", {32}, type, 0}}, 256)),
                HasSubstr("tensor 'w' has unknown type id " + std::to_string(type)));
  }
}

TEST(GgufMalformed, RowLengthNotAMultipleOfTheBlockSize) {
  EXPECT_THAT(
      parse_error(tensor_file({{"w", {33, 2}, tt(GgmlType::Q8_0), 0}}, 256)),
      HasSubstr("tensor 'w' of type Q8_0 has row length 33, not a multiple of its block size 32"));
  EXPECT_THAT(
      parse_error(tensor_file({{"w", {128}, tt(GgmlType::Q4_K), 0}}, 256)),
      HasSubstr(
          "tensor 'w' of type Q4_K has row length 128, not a multiple of its block size 256"));
}

TEST(GgufMalformed, TensorOffsetNotAligned) {
  EXPECT_THAT(parse_error(tensor_file({{"w", {8}, tt(GgmlType::F32), 1}}, 64)),
              HasSubstr("tensor 'w' offset 1 is not aligned to 32"));

  GgufWriter w;
  w.set_alignment(64);
  std::vector<uint8_t> b = w.header_bytes();
  b[8] = 1;  // the tensor count: one tensor
  put_tensor(b, {"w", {8}, tt(GgmlType::F32), 32});
  pad_zeros(b, 256);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'w' offset 32 is not aligned to 64"));
}

TEST(GgufMalformed, DataSectionStartsPastTheEnd) {
  // The header alone, without the padding that would start the data section.
  std::vector<uint8_t> b = preamble(1, 0);
  put_tensor(b, {"w", {8}, tt(GgmlType::F32), 0});
  ASSERT_NE(b.size() % 32, 0u) << "the test needs a header whose end is not aligned";
  EXPECT_THAT(parse_error(b), HasSubstr("data section starts at 64, past the end of the file (" +
                                        std::to_string(b.size()) + " bytes)"));
}

TEST(GgufMalformed, TensorOffsetPastTheEnd) {
  EXPECT_THAT(
      parse_error(tensor_file({{"w", {8}, tt(GgmlType::F32), uint64_t{1} << 40}}, 64)),
      HasSubstr("tensor 'w' data (offset 1099511627776, 32 bytes) runs past the end of the file"));
  EXPECT_THAT(parse_error(tensor_file({{"w", {8}, tt(GgmlType::F32), kU64Max - 31}}, 64)),
              HasSubstr("runs past the end of the file"));
}

TEST(GgufMalformed, TensorDataRunsPastTheEnd) {
  std::vector<uint8_t> b = small_valid_file();
  ASSERT_TRUE(GgufFile::parse(b).is_ok());
  b.pop_back();
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor 'b' data (offset 96, 32 bytes) runs past the end of the file"));
  // No data at all: the data section starts exactly at the end of the file.
  std::vector<uint8_t> headers_only = tensor_file({{"w", {8}, tt(GgmlType::F32), 0}}, 0);
  EXPECT_THAT(parse_error(headers_only),
              HasSubstr("tensor 'w' data (offset 0, 32 bytes) runs past the end"));
}

TEST(GgufMalformed, DuplicateTensorName) {
  GgufWriter w;
  w.add_tensor("blk.0.attn_q.weight", GgmlType::F32, {8});
  w.add_tensor("blk.0.attn_q.weight", GgmlType::F32, {8});
  auto bytes = w.to_bytes(pattern_producer(w));
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  EXPECT_THAT(parse_error(*bytes), HasSubstr("tensor 'blk.0.attn_q.weight' appears twice"));
}

TEST(GgufMalformed, EmptyTensorName) {
  EXPECT_THAT(parse_error(tensor_file({{"", {8}, tt(GgmlType::F32), 0}}, 64)),
              HasSubstr("tensor 0 has an empty name"));
}

// ---- truncation -----------------------------------------------------------------------

TEST(GgufMalformed, SmallValidFileParses) {
  const std::vector<uint8_t> b = small_valid_file();
  auto r = GgufFile::parse(b);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(r->version(), 3u);
  EXPECT_EQ(r->metadata().size(), 9u);
  EXPECT_EQ(r->find("test.i32")->as_int(), -5);
  EXPECT_EQ(r->find("test.u64")->as_int(), int64_t{1} << 40);
  EXPECT_EQ(r->find("test.f32")->as_float(), 0.5);
  EXPECT_EQ(r->find("test.bool")->as_bool(), true);
  auto tokens = r->find("tokenizer.ggml.tokens")->arr.strings();
  ASSERT_TRUE(tokens.is_ok()) << tokens.message();
  EXPECT_EQ(*tokens, (std::vector<std::string_view>{"a", "bc", ""}));
  ASSERT_EQ(r->tensors().size(), 2u);
  const GgufTensorInfo* t = r->find_tensor("b");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->n_bytes, 32u);
  // The file ends with the last tensor's bytes, so every shorter prefix is incomplete.
  EXPECT_EQ(t->data + t->n_bytes, b.data() + b.size());
}

TEST(GgufMalformed, TruncationAtEveryBytePosition) {
  const std::vector<uint8_t> full = small_valid_file();
  ASSERT_GT(full.size(), 200u);
  for (size_t n = 0; n < full.size(); ++n) {
    SCOPED_TRACE("prefix of " + std::to_string(n) + " bytes");
    const std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = GgufFile::parse(prefix);
    ASSERT_FALSE(r.is_ok());
    EXPECT_THAT(r.message(), AnyOf(HasSubstr("truncated"), HasSubstr("past the end"),
                                   HasSubstr("more than the file can hold"), HasSubstr("only")));
  }
  auto whole = GgufFile::parse(full);
  EXPECT_TRUE(whole.is_ok()) << whole.message();
}

// ---- the vocabulary -------------------------------------------------------------------

struct VocabSpec {
  std::vector<std::string> tokens = {"a", "<0x0A>", "<|im_end|>"};
  std::vector<int32_t> types = {1, 6, 3};
  int64_t eos = 2;  // < 0: written as an i32
};

std::vector<uint8_t> vocab_file(const VocabSpec& s) {
  GgufWriter w;
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  w.add_string_array("tokenizer.ggml.tokens", s.tokens);
  w.add_i32_array("tokenizer.ggml.token_type", s.types);
  if (s.eos >= 0)
    w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(s.eos));
  else
    w.add_i32("tokenizer.ggml.eos_token_id", static_cast<int32_t>(s.eos));
  return w.header_bytes();
}

std::string vocab_error(const VocabSpec& s) {
  const std::vector<uint8_t> bytes = vocab_file(s);
  auto f = GgufFile::parse(bytes);
  EXPECT_TRUE(f.is_ok()) << f.message();
  if (!f.is_ok()) return "<parse failed>";
  auto v = read_vocab(*f);
  EXPECT_FALSE(v.is_ok()) << "read_vocab accepted a bad vocabulary";
  return v.is_ok() ? "<read_vocab succeeded>" : v.message();
}

TEST(VocabMalformed, ValidVocabularyReads) {
  const std::vector<uint8_t> bytes = vocab_file({});
  auto f = GgufFile::parse(bytes);
  ASSERT_TRUE(f.is_ok()) << f.message();
  auto v = read_vocab(*f);
  ASSERT_TRUE(v.is_ok()) << v.message();
  EXPECT_EQ(v->model, "gpt2");
  EXPECT_EQ(v->pre, "qwen2");
  EXPECT_EQ(v->tokens.size(), 3u);
  EXPECT_EQ(v->count_of_type(6), 1);
  EXPECT_EQ(v->eos_id, 2);
  EXPECT_EQ(v->bos_id, -1);
}

TEST(VocabMalformed, ByteTokenThatIsNotAByte) {
  VocabSpec s;
  s.tokens[1] = "<0x-1>";
  EXPECT_THAT(vocab_error(s), HasSubstr("byte token 1 is '<0x-1>', expected <0xHH>"));
  s.tokens[1] = "<0x0G>";
  EXPECT_THAT(vocab_error(s), HasSubstr("byte token 1 is '<0x0G>'"));
  s.tokens[1] = "<0x0A";
  EXPECT_THAT(vocab_error(s), HasSubstr("byte token 1 is '<0x0A'"));
}

TEST(VocabMalformed, TokenTypeCountMismatch) {
  VocabSpec s;
  s.types = {1, 6};
  EXPECT_THAT(vocab_error(s), HasSubstr("tokenizer.ggml.token_type has 2 entries for 3 tokens"));
  s.types = {1, 6, 3, 1};
  EXPECT_THAT(vocab_error(s), HasSubstr("tokenizer.ggml.token_type has 4 entries for 3 tokens"));
}

TEST(VocabMalformed, UnknownTokenType) {
  VocabSpec s;
  s.types = {1, 7, 3};
  EXPECT_THAT(vocab_error(s), HasSubstr("token type 7 is not a GGUF token type"));
}

TEST(VocabMalformed, EosIdOutOfRange) {
  VocabSpec s;
  s.eos = 3;  // == n_vocab
  EXPECT_THAT(vocab_error(s),
              HasSubstr("tokenizer.ggml.eos_token_id is not a token id of this vocabulary"));
  s.eos = -1;
  EXPECT_THAT(vocab_error(s),
              HasSubstr("tokenizer.ggml.eos_token_id is not a token id of this vocabulary"));
}

// ---- loading a Qwen3 model from disk --------------------------------------------------

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / ("duet_malformed_" + name + ".gguf"))
      .string();
}

// The tiny shape every model test uses.
constexpr int64_t kEmbd = 64, kHead = 2, kHeadKv = 1, kHeadDim = 32, kFf = 64, kVocab = 8;

// A hand-written Qwen3 file with forge's metadata keys, and knobs to break it.
struct ModelSpec {
  std::string arch = "qwen3";
  std::set<std::string> omit_keys;
  std::set<std::string> omit_tensors;
  std::map<std::string, std::vector<int64_t>> shape_of;
  std::map<std::string, GgmlType> type_of;
};

Status write_model(const ModelSpec& s, const std::string& path) {
  GgufWriter w;
  auto u32 = [&](const std::string& key, uint32_t v) {
    if (!s.omit_keys.count(key)) w.add_u32(key, v);
  };
  auto f32 = [&](const std::string& key, float v) {
    if (!s.omit_keys.count(key)) w.add_f32(key, v);
  };
  if (!s.omit_keys.count("general.architecture")) w.add_string("general.architecture", s.arch);
  w.add_string("general.name", "malformed-test");
  u32("general.file_type", 0);
  u32("general.quantization_version", 2);
  u32("qwen3.block_count", 1);
  u32("qwen3.context_length", 128);
  u32("qwen3.embedding_length", kEmbd);
  u32("qwen3.feed_forward_length", kFf);
  u32("qwen3.attention.head_count", kHead);
  u32("qwen3.attention.head_count_kv", kHeadKv);
  u32("qwen3.attention.key_length", kHeadDim);
  u32("qwen3.attention.value_length", kHeadDim);
  f32("qwen3.attention.layer_norm_rms_epsilon", 1e-6f);
  f32("qwen3.rope.freq_base", 1000000.0f);
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  std::vector<std::string> tokens;
  for (int64_t i = 0; i < kVocab; ++i) tokens.push_back("t" + std::to_string(i));
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_i32_array("tokenizer.ggml.token_type", std::vector<int32_t>(kVocab, 1));
  u32("tokenizer.ggml.eos_token_id", kVocab - 1);

  struct Planned {
    std::string name;
    bool norm;
  };
  std::vector<Planned> plan;
  auto add = [&](const std::string& name, std::vector<int64_t> ne, bool norm) {
    if (s.omit_tensors.count(name)) return;
    if (auto it = s.shape_of.find(name); it != s.shape_of.end()) ne = it->second;
    GgmlType type = GgmlType::F32;
    if (auto it = s.type_of.find(name); it != s.type_of.end()) type = it->second;
    w.add_tensor(name, type, ne);
    plan.push_back({name, norm && type == GgmlType::F32});
  };
  add("token_embd.weight", {kEmbd, kVocab}, false);
  add("blk.0.attn_norm.weight", {kEmbd}, true);
  add("blk.0.attn_q.weight", {kEmbd, kHead * kHeadDim}, false);
  add("blk.0.attn_k.weight", {kEmbd, kHeadKv * kHeadDim}, false);
  add("blk.0.attn_v.weight", {kEmbd, kHeadKv * kHeadDim}, false);
  add("blk.0.attn_q_norm.weight", {kHeadDim}, true);
  add("blk.0.attn_k_norm.weight", {kHeadDim}, true);
  add("blk.0.attn_output.weight", {kHead * kHeadDim, kEmbd}, false);
  add("blk.0.ffn_norm.weight", {kEmbd}, true);
  add("blk.0.ffn_gate.weight", {kEmbd, kFf}, false);
  add("blk.0.ffn_up.weight", {kEmbd, kFf}, false);
  add("blk.0.ffn_down.weight", {kFf, kEmbd}, false);
  add("output_norm.weight", {kEmbd}, true);

  return w.write(path, [&](size_t i, std::vector<uint8_t>& data) -> Status {
    data.assign(w.tensor_bytes(i), 0);
    if (plan[i].norm) {  // norms of 1.0f; matrices stay zero
      for (size_t k = 0; k + 4 <= data.size(); k += 4) {
        const float one = 1.0f;
        std::memcpy(data.data() + k, &one, 4);
      }
    }
    return Status::ok();
  });
}

// The load error for a model written from `s`, which must be refused.
std::string load_error(const ModelSpec& s, const std::string& name) {
  const std::string path = temp_path(name);
  Status written = write_model(s, path);
  EXPECT_TRUE(written.is_ok()) << written.message();
  auto m = Qwen3Model::load(path, make_ref_backend());
  std::remove(path.c_str());
  EXPECT_FALSE(m.is_ok()) << "the model loaded";
  return m.is_ok() ? "<load succeeded>" : m.message();
}

TEST(ModelLoad, ForgedTinyModelLoadsAndRuns) {
  const std::string path = temp_path("forged");
  ForgeOptions o;
  o.shape.n_layer = 1;
  o.shape.n_embd = kEmbd;
  o.shape.n_head = kHead;
  o.shape.n_head_kv = kHeadKv;
  o.shape.head_dim = kHeadDim;
  o.shape.n_ff = kFf;
  o.type = GgmlType::F32;
  const ForgeVocab vocab = make_byte_vocab();
  ASSERT_TRUE(forge_model(o, vocab, path).is_ok());

  auto m = Qwen3Model::load(path, make_ref_backend());
  ASSERT_TRUE(m.is_ok()) << m.message();
  const Qwen3Config& c = (*m)->config();
  EXPECT_EQ(c.n_layer, 1);
  EXPECT_EQ(c.n_embd, kEmbd);
  EXPECT_EQ(c.n_head, kHead);
  EXPECT_EQ(c.n_head_kv, kHeadKv);
  EXPECT_EQ(c.head_dim, kHeadDim);
  EXPECT_EQ(c.n_ff, kFf);
  EXPECT_EQ(c.n_vocab, static_cast<int64_t>(vocab.tokens.size()));

  auto v = read_vocab((*m)->gguf());
  ASSERT_TRUE(v.is_ok()) << v.message();
  EXPECT_EQ(v->tokens.size(), vocab.tokens.size());
  EXPECT_EQ(v->eos_id, vocab.eos_id);

  SequenceKv kv = (*m)->new_sequence();
  std::vector<float> logits;
  const std::vector<int32_t> tokens = {1, 2, 3};
  ASSERT_TRUE((*m)->forward(tokens, kv, false, logits).is_ok());
  ASSERT_EQ(logits.size(), vocab.tokens.size());
  for (float x : logits) ASSERT_TRUE(std::isfinite(x));
  m = Status::error("closed");  // unmap before deleting the file
  std::remove(path.c_str());
}

TEST(ModelLoad, HandWrittenBaselineLoads) {
  // The file the tests below break, unbroken: it must load, so each failure below comes
  // from the one thing that test changed.
  const std::string path = temp_path("baseline");
  ASSERT_TRUE(write_model({}, path).is_ok());
  auto m = Qwen3Model::load(path, make_ref_backend());
  ASSERT_TRUE(m.is_ok()) << m.message();
  EXPECT_EQ((*m)->config().n_vocab, kVocab);
  EXPECT_EQ((*m)->config().q_width(), kHead * kHeadDim);
  m = Status::error("closed");
  std::remove(path.c_str());
}

// A server told to stop while it loads: the load ends at its next matrix with the cancel
// status, and nothing leaks.
TEST(ModelLoad, ACancelledLoadStops) {
  const std::string path = temp_path("cancelled");
  ASSERT_TRUE(write_model({}, path).is_ok());
  std::atomic<bool> cancel{true};
  ModelLoadOptions options;
  options.cancel = &cancel;
  auto m = Qwen3Model::load(path, make_ref_backend(), options);
  ASSERT_FALSE(m.is_ok());
  EXPECT_EQ(m.message(), kLoadCancelled);
  cancel = false;
  EXPECT_TRUE(Qwen3Model::load(path, make_ref_backend(), options).is_ok());
  std::remove(path.c_str());
}

// A FIFO as the model file: refused at once (opening it must not wait for a writer).
TEST(ModelLoad, AFifoIsRefusedWithoutWaiting) {
  const std::string path = temp_path("fifo");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto m = Qwen3Model::load(path, make_ref_backend());
  ASSERT_FALSE(m.is_ok());
  EXPECT_THAT(m.message(), HasSubstr("not a regular file"));
  std::remove(path.c_str());
}

TEST(ModelLoad, MissingTensorIsNamed) {
  ModelSpec s;
  s.omit_tensors = {"blk.0.ffn_up.weight"};
  EXPECT_THAT(load_error(s, "missing_tensor"), HasSubstr("missing tensor blk.0.ffn_up.weight"));
}

TEST(ModelLoad, MissingEmbeddingIsNamed) {
  ModelSpec s;
  s.omit_tensors = {"token_embd.weight"};
  EXPECT_THAT(load_error(s, "missing_embd"), HasSubstr("missing tensor token_embd.weight"));
}

TEST(ModelLoad, WrongShapeNamesTensorExpectedAndActual) {
  ModelSpec s;
  s.shape_of["blk.0.attn_k.weight"] = {kEmbd, 64};
  EXPECT_THAT(load_error(s, "wrong_shape"),
              HasSubstr("tensor blk.0.attn_k.weight has shape [64, 64], expected [64, 32]"));

  ModelSpec vec;
  vec.shape_of["blk.0.ffn_norm.weight"] = {32};
  EXPECT_THAT(load_error(vec, "wrong_shape_vec"),
              HasSubstr("tensor blk.0.ffn_norm.weight has shape [32], expected [64]"));

  ModelSpec dims;
  dims.shape_of["blk.0.attn_q_norm.weight"] = {kHeadDim, 1};
  EXPECT_THAT(load_error(dims, "wrong_dims"),
              HasSubstr("tensor blk.0.attn_q_norm.weight has shape [32, 1], expected [32]"));
}

TEST(ModelLoad, UnsupportedTensorTypeIsNamed) {
  ModelSpec s;
  s.type_of["blk.0.attn_q.weight"] = GgmlType::Q8_1;
  const std::string msg = load_error(s, "q8_1");
  EXPECT_THAT(msg, HasSubstr("tensor blk.0.attn_q.weight has type Q8_1"));
  EXPECT_THAT(msg, HasSubstr("which duet cannot compute with"));
  EXPECT_THAT(msg, HasSubstr("(supported: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, "
                             "Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, BF16)"));

  // A published type duet parses but cannot compute with is named too, not "unknown".
  ModelSpec mx;
  mx.type_of["blk.0.ffn_up.weight"] = GgmlType::MXFP4;
  EXPECT_THAT(load_error(mx, "mxfp4"),
              HasSubstr("tensor blk.0.ffn_up.weight has type MXFP4, which duet cannot compute"));
}

TEST(ModelLoad, ArchitectureLlamaIsRefused) {
  ModelSpec s;
  s.arch = "llama";
  EXPECT_THAT(load_error(s, "llama"), HasSubstr("architecture is 'llama', duet runs qwen3"));
}

TEST(ModelLoad, MissingArchitectureIsNamed) {
  ModelSpec s;
  s.omit_keys = {"general.architecture"};
  EXPECT_THAT(load_error(s, "no_arch"), HasSubstr("missing metadata key general.architecture"));
}

TEST(ModelLoad, MissingBlockCountIsNamed) {
  ModelSpec s;
  s.omit_keys = {"qwen3.block_count"};
  EXPECT_THAT(load_error(s, "no_block_count"), HasSubstr("missing metadata key qwen3.block_count"));
}

TEST(ModelLoad, TruncatedFileOnDisk) {
  const std::string path = temp_path("truncated");
  ASSERT_TRUE(write_model({}, path).is_ok());
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 100);
  auto m = Qwen3Model::load(path, make_ref_backend());
  std::remove(path.c_str());
  ASSERT_FALSE(m.is_ok());
  EXPECT_THAT(m.message(), HasSubstr("tensor 'output_norm.weight' data"));
  EXPECT_THAT(m.message(), HasSubstr("runs past the end of the file"));
}

TEST(ModelLoad, EmptyFileOnDisk) {
  const std::string path = temp_path("empty");
  { std::ofstream(path, std::ios::binary | std::ios::trunc); }
  auto m = Qwen3Model::load(path, make_ref_backend());
  std::remove(path.c_str());
  ASSERT_FALSE(m.is_ok());
  EXPECT_THAT(m.message(), HasSubstr("not a GGUF file: only 0 bytes"));
}

}  // namespace
}  // namespace duet
