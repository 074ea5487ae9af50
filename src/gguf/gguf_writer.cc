#include "gguf/gguf_writer.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace duet {

namespace gguf_bytes {
void put_u8(std::vector<uint8_t>& out, uint8_t v) { out.push_back(v); }
void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(v >> (8 * k)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<uint8_t>(v >> (8 * k)));
}
void put_f32(std::vector<uint8_t>& out, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  put_u32(out, u);
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put_u64(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}
}  // namespace gguf_bytes

using namespace gguf_bytes;

namespace {
void put_key(std::vector<uint8_t>& out, const std::string& key, GgufValueType t) {
  put_string(out, key);
  put_u32(out, static_cast<uint32_t>(t));
}
}  // namespace

void GgufWriter::add_u32(const std::string& key, uint32_t v) {
  put_key(kv_bytes_, key, GgufValueType::UINT32);
  put_u32(kv_bytes_, v);
  ++kv_count_;
}
void GgufWriter::add_i32(const std::string& key, int32_t v) {
  put_key(kv_bytes_, key, GgufValueType::INT32);
  put_u32(kv_bytes_, static_cast<uint32_t>(v));
  ++kv_count_;
}
void GgufWriter::add_u64(const std::string& key, uint64_t v) {
  put_key(kv_bytes_, key, GgufValueType::UINT64);
  put_u64(kv_bytes_, v);
  ++kv_count_;
}
void GgufWriter::add_f32(const std::string& key, float v) {
  put_key(kv_bytes_, key, GgufValueType::FLOAT32);
  put_f32(kv_bytes_, v);
  ++kv_count_;
}
void GgufWriter::add_bool(const std::string& key, bool v) {
  put_key(kv_bytes_, key, GgufValueType::BOOL);
  put_u8(kv_bytes_, v ? 1 : 0);
  ++kv_count_;
}
void GgufWriter::add_string(const std::string& key, const std::string& v) {
  put_key(kv_bytes_, key, GgufValueType::STRING);
  put_string(kv_bytes_, v);
  ++kv_count_;
}
void GgufWriter::add_string_array(const std::string& key, const std::vector<std::string>& v) {
  put_key(kv_bytes_, key, GgufValueType::ARRAY);
  put_u32(kv_bytes_, static_cast<uint32_t>(GgufValueType::STRING));
  put_u64(kv_bytes_, v.size());
  for (const auto& s : v) put_string(kv_bytes_, s);
  ++kv_count_;
}
void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  put_key(kv_bytes_, key, GgufValueType::ARRAY);
  put_u32(kv_bytes_, static_cast<uint32_t>(GgufValueType::INT32));
  put_u64(kv_bytes_, v.size());
  for (int32_t x : v) put_u32(kv_bytes_, static_cast<uint32_t>(x));
  ++kv_count_;
}
void GgufWriter::add_f32_array(const std::string& key, const std::vector<float>& v) {
  put_key(kv_bytes_, key, GgufValueType::ARRAY);
  put_u32(kv_bytes_, static_cast<uint32_t>(GgufValueType::FLOAT32));
  put_u64(kv_bytes_, v.size());
  for (float x : v) put_f32(kv_bytes_, x);
  ++kv_count_;
}

void GgufWriter::add_value(const std::string& key, const GgufValue& v) {
  put_key(kv_bytes_, key, v.type);
  auto put_bytes = [&](uint64_t x, int n) {
    for (int k = 0; k < n; ++k) put_u8(kv_bytes_, static_cast<uint8_t>(x >> (8 * k)));
  };
  switch (v.type) {
    case GgufValueType::UINT8:
    case GgufValueType::BOOL:
      put_bytes(v.u, 1);
      break;
    case GgufValueType::INT8:
      put_bytes(static_cast<uint64_t>(v.i), 1);
      break;
    case GgufValueType::UINT16:
      put_bytes(v.u, 2);
      break;
    case GgufValueType::INT16:
      put_bytes(static_cast<uint64_t>(v.i), 2);
      break;
    case GgufValueType::UINT32:
      put_bytes(v.u, 4);
      break;
    case GgufValueType::INT32:
      put_bytes(static_cast<uint64_t>(v.i), 4);
      break;
    case GgufValueType::UINT64:
      put_bytes(v.u, 8);
      break;
    case GgufValueType::INT64:
      put_bytes(static_cast<uint64_t>(v.i), 8);
      break;
    case GgufValueType::FLOAT32:
      put_f32(kv_bytes_, static_cast<float>(v.f));
      break;
    case GgufValueType::FLOAT64: {
      uint64_t u;
      std::memcpy(&u, &v.f, 8);
      put_u64(kv_bytes_, u);
      break;
    }
    case GgufValueType::STRING:
      put_string(kv_bytes_, std::string(v.str));
      break;
    case GgufValueType::ARRAY:
      put_u32(kv_bytes_, static_cast<uint32_t>(v.arr.elem_type));
      put_u64(kv_bytes_, v.arr.count);
      kv_bytes_.insert(kv_bytes_.end(), v.arr.bytes.begin(), v.arr.bytes.end());
      break;
  }
  ++kv_count_;
}

size_t GgufWriter::add_tensor(const std::string& name, GgmlType type,
                              const std::vector<int64_t>& ne) {
  TensorRecord r;
  r.name = name;
  r.type = type;
  r.ne = ne;
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  r.n_bytes = ggml_row_bytes(type, n);
  r.offset = data_size_;
  data_size_ += (r.n_bytes + alignment_ - 1) / alignment_ * alignment_;
  tensors_.push_back(std::move(r));
  return tensors_.size() - 1;
}

std::vector<uint8_t> GgufWriter::header_bytes() const {
  std::vector<uint8_t> out;
  put_u32(out, 0x46554747);
  put_u32(out, 3);
  put_u64(out, tensors_.size());
  const bool has_alignment_key = alignment_ != 32;
  put_u64(out, kv_count_ + (has_alignment_key ? 1 : 0));
  if (has_alignment_key) {
    put_key(out, "general.alignment", GgufValueType::UINT32);
    put_u32(out, alignment_);
  }
  out.insert(out.end(), kv_bytes_.begin(), kv_bytes_.end());
  for (const auto& t : tensors_) {
    put_string(out, t.name);
    put_u32(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put_u64(out, static_cast<uint64_t>(d));
    put_u32(out, static_cast<uint32_t>(t.type));
    put_u64(out, t.offset);
  }
  return out;
}

namespace {
// Writes header, padding and each tensor (padded) through `sink`.
Status emit(const std::vector<uint8_t>& header, uint32_t alignment, size_t n_tensors,
            const std::function<size_t(size_t)>& bytes_of, const GgufWriter::Producer& produce,
            const std::function<Status(const uint8_t*, size_t)>& sink) {
  DUET_TRY(sink(header.data(), header.size()));
  const std::vector<uint8_t> zeros(alignment, 0);
  const size_t pad = (alignment - header.size() % alignment) % alignment;
  DUET_TRY(sink(zeros.data(), pad));
  std::vector<uint8_t> data;
  for (size_t i = 0; i < n_tensors; ++i) {
    data.clear();
    DUET_TRY(produce(i, data));
    if (data.size() != bytes_of(i))
      return Status::error("tensor " + std::to_string(i) + " producer gave " +
                           std::to_string(data.size()) + " bytes, expected " +
                           std::to_string(bytes_of(i)));
    DUET_TRY(sink(data.data(), data.size()));
    DUET_TRY(sink(zeros.data(), (alignment - data.size() % alignment) % alignment));
  }
  return Status::ok();
}
}  // namespace

Status GgufWriter::write(const std::string& path, const Producer& produce) const {
  const std::string tmp = path + ".partial";
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!f) return Status::error("cannot create output file");
  auto sink = [&](const uint8_t* p, size_t n) -> Status {
    if (n > 0 && std::fwrite(p, 1, n, f.get()) != n)
      return Status::error("write failed (disk full?)");
    return Status::ok();
  };
  Status s = emit(
      header_bytes(), alignment_, tensors_.size(), [&](size_t i) { return tensors_[i].n_bytes; },
      produce, sink);
  if (std::fflush(f.get()) != 0 && s.is_ok()) s = Status::error("write failed (disk full?)");
  f.reset();
  // Rename only a complete file into place, so an interrupted forge never leaves a
  // truncated model under the requested name.
  if (!s.is_ok() || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return s.is_ok() ? Status::error("cannot rename output file into place") : s;
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> GgufWriter::to_bytes(const Producer& produce) const {
  std::vector<uint8_t> out;
  auto sink = [&](const uint8_t* p, size_t n) -> Status {
    out.insert(out.end(), p, p + n);
    return Status::ok();
  };
  Status s = emit(
      header_bytes(), alignment_, tensors_.size(), [&](size_t i) { return tensors_[i].n_bytes; },
      produce, sink);
  if (!s.is_ok()) return s;
  return out;
}

}  // namespace duet
