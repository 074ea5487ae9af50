#include "gguf/gguf_file.h"

#include <cinttypes>
#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_set>

namespace duet {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr uint64_t kMaxAlignment = 1u << 20;
constexpr int kMaxArrayDepth = 4;
constexpr int kMaxDims = 4;

std::string fmt_u64(uint64_t v) { return std::to_string(v); }

size_t fixed_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::BOOL:
      return 1;
    case GgufValueType::UINT16:
    case GgufValueType::INT16:
      return 2;
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::FLOAT32:
      return 4;
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::FLOAT64:
      return 8;
    default:
      return 0;  // string, array: variable
  }
}

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::FLOAT64); }

// A read position over the file image; every read is checked against the end.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> b) : b_(b) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return b_.size() - pos_; }
  const uint8_t* here() const { return b_.data() + pos_; }

  Status read(void* out, size_t n, const char* what) {
    if (n > remaining())
      return Status::error(std::string("file truncated while reading ") + what + " at offset " +
                           fmt_u64(pos_));
    std::memcpy(out, here(), n);
    pos_ += n;
    return Status::ok();
  }
  Status skip(uint64_t n, const char* what) {
    if (n > remaining())
      return Status::error(std::string("file truncated inside ") + what + " at offset " +
                           fmt_u64(pos_));
    pos_ += n;
    return Status::ok();
  }
  template <typename T>
  Status read_le(T* out, const char* what) {
    return read(out, sizeof(T), what);  // GGUF is little-endian, as is every host duet runs on
  }
  Status read_string(std::string_view* out, const char* what) {
    uint64_t len = 0;
    DUET_TRY(read_le(&len, what));
    if (len > remaining())
      return Status::error(std::string(what) + " length " + fmt_u64(len) + " at offset " +
                           fmt_u64(pos_ - 8) + " runs past the end of the file");
    *out = std::string_view(reinterpret_cast<const char*>(here()), len);
    pos_ += len;
    return Status::ok();
  }

 private:
  std::span<const uint8_t> b_;
  uint64_t pos_ = 0;
};

// Walks (and so validates) the elements of an array whose header was just read.
Status skip_array_elements(Cursor& c, GgufValueType elem, uint64_t count, int depth) {
  if (depth > kMaxArrayDepth) return Status::error("arrays nested deeper than 4 levels");
  const size_t fs = fixed_size(elem);
  if (fs > 0) {
    if (count > c.remaining() / fs)
      return Status::error("array of " + fmt_u64(count) + " elements at offset " +
                           fmt_u64(c.pos()) + " runs past the end of the file");
    return c.skip(count * fs, "array");
  }
  // Each string or array element takes at least 8 bytes of header.
  if (count > c.remaining() / 8)
    return Status::error("array of " + fmt_u64(count) + " elements at offset " + fmt_u64(c.pos()) +
                         " runs past the end of the file");
  for (uint64_t k = 0; k < count; ++k) {
    if (elem == GgufValueType::STRING) {
      std::string_view s;
      DUET_TRY(c.read_string(&s, "array string"));
    } else {
      uint32_t sub_type = 0;
      uint64_t sub_count = 0;
      DUET_TRY(c.read_le(&sub_type, "nested array type"));
      if (!valid_value_type(sub_type))
        return Status::error("nested array has unknown element type " + std::to_string(sub_type));
      DUET_TRY(c.read_le(&sub_count, "nested array length"));
      DUET_TRY(skip_array_elements(c, static_cast<GgufValueType>(sub_type), sub_count, depth + 1));
    }
  }
  return Status::ok();
}

Status read_value(Cursor& c, GgufValueType type, GgufValue* v) {
  v->type = type;
  switch (type) {
    case GgufValueType::UINT8: {
      uint8_t x;
      DUET_TRY(c.read_le(&x, "u8 value"));
      v->u = x;
      return Status::ok();
    }
    case GgufValueType::INT8: {
      int8_t x;
      DUET_TRY(c.read_le(&x, "i8 value"));
      v->i = x;
      return Status::ok();
    }
    case GgufValueType::UINT16: {
      uint16_t x;
      DUET_TRY(c.read_le(&x, "u16 value"));
      v->u = x;
      return Status::ok();
    }
    case GgufValueType::INT16: {
      int16_t x;
      DUET_TRY(c.read_le(&x, "i16 value"));
      v->i = x;
      return Status::ok();
    }
    case GgufValueType::UINT32: {
      uint32_t x;
      DUET_TRY(c.read_le(&x, "u32 value"));
      v->u = x;
      return Status::ok();
    }
    case GgufValueType::INT32: {
      int32_t x;
      DUET_TRY(c.read_le(&x, "i32 value"));
      v->i = x;
      return Status::ok();
    }
    case GgufValueType::UINT64:
      return c.read_le(&v->u, "u64 value");
    case GgufValueType::INT64:
      return c.read_le(&v->i, "i64 value");
    case GgufValueType::FLOAT32: {
      float x;
      DUET_TRY(c.read_le(&x, "f32 value"));
      v->f = x;
      return Status::ok();
    }
    case GgufValueType::FLOAT64:
      return c.read_le(&v->f, "f64 value");
    case GgufValueType::BOOL: {
      uint8_t x;
      DUET_TRY(c.read_le(&x, "bool value"));
      if (x > 1) return Status::error("bool value " + std::to_string(x) + " is neither 0 nor 1");
      v->u = x;
      return Status::ok();
    }
    case GgufValueType::STRING:
      return c.read_string(&v->str, "string value");
    case GgufValueType::ARRAY: {
      uint32_t elem = 0;
      DUET_TRY(c.read_le(&elem, "array type"));
      if (!valid_value_type(elem))
        return Status::error("array has unknown element type " + std::to_string(elem));
      DUET_TRY(c.read_le(&v->arr.count, "array length"));
      v->arr.elem_type = static_cast<GgufValueType>(elem);
      const uint64_t begin = c.pos();
      const uint8_t* p = c.here();
      DUET_TRY(skip_array_elements(c, v->arr.elem_type, v->arr.count, 1));
      v->arr.bytes = std::span<const uint8_t>(p, c.pos() - begin);
      return Status::ok();
    }
  }
  return Status::error("unknown value type");
}

}  // namespace

const char* gguf_value_type_name(GgufValueType t) {
  static const char* kNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                 "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(t);
  return i < 13 ? kNames[i] : "?";
}

// ---- values -------------------------------------------------------------------------

std::optional<int64_t> GgufValue::as_int() const {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::UINT16:
    case GgufValueType::UINT32:
      return static_cast<int64_t>(u);
    case GgufValueType::UINT64:
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(u);
    case GgufValueType::INT8:
    case GgufValueType::INT16:
    case GgufValueType::INT32:
    case GgufValueType::INT64:
      return i;
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::as_float() const {
  if (type == GgufValueType::FLOAT32 || type == GgufValueType::FLOAT64) return f;
  if (auto n = as_int()) return static_cast<double>(*n);
  return std::nullopt;
}

std::optional<bool> GgufValue::as_bool() const {
  if (type == GgufValueType::BOOL) return u != 0;
  return std::nullopt;
}

std::optional<std::string_view> GgufValue::as_string() const {
  if (type == GgufValueType::STRING) return str;
  return std::nullopt;
}

std::string GgufValue::to_display_string(size_t max_items) const {
  std::ostringstream os;
  switch (type) {
    case GgufValueType::STRING: {
      std::string s(str.substr(0, 80));
      for (char& ch : s)
        if (ch == '\n') ch = ' ';
      os << '"' << s << (str.size() > 80 ? "…" : "") << '"';
      break;
    }
    case GgufValueType::BOOL:
      os << (u ? "true" : "false");
      break;
    case GgufValueType::FLOAT32:
    case GgufValueType::FLOAT64:
      os << f;
      break;
    case GgufValueType::ARRAY: {
      os << gguf_value_type_name(arr.elem_type) << "[" << arr.count << "]";
      if (arr.elem_type == GgufValueType::STRING) {
        if (auto v = arr.strings(); v.is_ok()) {
          os << " {";
          for (size_t k = 0; k < v->size() && k < max_items; ++k)
            os << (k ? ", " : "") << '"' << std::string((*v)[k].substr(0, 24)) << '"';
          os << (v->size() > max_items ? ", …}" : "}");
        }
      } else if (auto v = arr.floats(); v.is_ok()) {
        os << " {";
        for (size_t k = 0; k < v->size() && k < max_items; ++k) os << (k ? ", " : "") << (*v)[k];
        os << (v->size() > max_items ? ", …}" : "}");
      }
      break;
    }
    default:
      if (auto n = as_int())
        os << *n;
      else
        os << u;
  }
  return os.str();
}

Result<std::vector<std::string_view>> GgufArray::strings() const {
  if (elem_type != GgufValueType::STRING)
    return Status::error(std::string("expected an array of strings, found ") +
                         gguf_value_type_name(elem_type));
  std::vector<std::string_view> out;
  out.reserve(count);
  Cursor c(bytes);
  for (uint64_t k = 0; k < count; ++k) {
    std::string_view s;
    DUET_TRY(c.read_string(&s, "array string"));  // already validated at parse
    out.push_back(s);
  }
  return out;
}

Result<std::vector<int64_t>> GgufArray::ints() const {
  const size_t fs = fixed_size(elem_type);
  if (fs == 0 || elem_type == GgufValueType::FLOAT32 || elem_type == GgufValueType::FLOAT64 ||
      elem_type == GgufValueType::BOOL)
    return Status::error(std::string("expected an array of integers, found ") +
                         gguf_value_type_name(elem_type));
  std::vector<int64_t> out(count);
  Cursor c(bytes);
  for (uint64_t k = 0; k < count; ++k) {
    GgufValue v;
    DUET_TRY(read_value(c, elem_type, &v));
    auto n = v.as_int();
    if (!n) return Status::error("array integer out of range");
    out[k] = *n;
  }
  return out;
}

Result<std::vector<double>> GgufArray::floats() const {
  const size_t fs = fixed_size(elem_type);
  if (fs == 0 || elem_type == GgufValueType::BOOL)
    return Status::error(std::string("expected an array of numbers, found ") +
                         gguf_value_type_name(elem_type));
  std::vector<double> out(count);
  Cursor c(bytes);
  for (uint64_t k = 0; k < count; ++k) {
    GgufValue v;
    DUET_TRY(read_value(c, elem_type, &v));
    auto x = v.as_float();
    out[k] = x ? *x : 0.0;
  }
  return out;
}

std::string GgufTensorInfo::shape_string() const {
  std::string s = "[";
  for (int d = 0; d < n_dims; ++d) s += (d ? ", " : "") + std::to_string(ne[d]);
  return s + "]";
}

// ---- file -----------------------------------------------------------------------------

Result<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes) {
  GgufFile f;
  Cursor c(bytes);
  uint32_t magic = 0;
  if (bytes.size() < 4)
    return Status::error("not a GGUF file: only " + fmt_u64(bytes.size()) + " bytes");
  DUET_TRY(c.read_le(&magic, "magic"));
  if (magic != kMagic) return Status::error("not a GGUF file: bad magic");
  DUET_TRY(c.read_le(&f.version_, "version"));
  if (f.version_ == 1) return Status::error("GGUF version 1 is not supported (only 2 and 3)");
  if (f.version_ != 2 && f.version_ != 3)
    return Status::error("unsupported GGUF version " + std::to_string(f.version_) +
                         " (expected 2 or 3)");

  uint64_t n_tensors = 0, n_kv = 0;
  DUET_TRY(c.read_le(&n_tensors, "tensor count"));
  DUET_TRY(c.read_le(&n_kv, "metadata count"));
  // The smallest key/value takes 13 bytes and the smallest tensor record 32, so larger
  // counts cannot be honest; checking first keeps reserve() bounded by the file size.
  if (n_kv > c.remaining() / 13)
    return Status::error("metadata count " + fmt_u64(n_kv) + " is more than the file can hold");
  if (n_tensors > c.remaining() / 32)
    return Status::error("tensor count " + fmt_u64(n_tensors) + " is more than the file can hold");

  f.kv_.reserve(n_kv);
  std::unordered_set<std::string_view> keys;
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string_view key;
    DUET_TRY(c.read_string(&key, "metadata key"));
    if (key.empty()) return Status::error("metadata entry " + fmt_u64(k) + " has an empty key");
    uint32_t type = 0;
    DUET_TRY(c.read_le(&type, "metadata type"));
    if (!valid_value_type(type))
      return Status::error("metadata key '" + std::string(key) + "' has unknown type " +
                           std::to_string(type));
    GgufKeyValue kv;
    kv.key = std::string(key);
    Status s = read_value(c, static_cast<GgufValueType>(type), &kv.value);
    if (!s.is_ok()) return s.with_context("metadata key '" + kv.key + "'");
    if (!keys.insert(key).second)
      return Status::error("metadata key '" + kv.key + "' appears twice");
    f.kv_.push_back(std::move(kv));
  }

  if (const GgufValue* a = f.find("general.alignment")) {
    if (a->type != GgufValueType::UINT32) return Status::error("general.alignment must be a u32");
    if (a->u == 0 || (a->u & (a->u - 1)) != 0 || a->u > kMaxAlignment)
      return Status::error("general.alignment " + fmt_u64(a->u) +
                           " is not a power of two between 1 and 1048576");
    f.alignment_ = a->u;
  }

  f.tensors_.reserve(n_tensors);
  std::unordered_set<std::string> names;
  for (uint64_t t = 0; t < n_tensors; ++t) {
    GgufTensorInfo info;
    std::string_view name;
    DUET_TRY(c.read_string(&name, "tensor name"));
    info.name = std::string(name);
    const std::string where = "tensor '" + info.name + "'";
    if (name.empty()) return Status::error("tensor " + fmt_u64(t) + " has an empty name");
    uint32_t n_dims = 0;
    DUET_TRY(c.read_le(&n_dims, "tensor dimension count"));
    if (n_dims == 0 || n_dims > kMaxDims)
      return Status::error(where + " has " + std::to_string(n_dims) +
                           " dimensions (1 to 4 allowed)");
    info.n_dims = static_cast<int>(n_dims);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = 0;
      DUET_TRY(c.read_le(&ne, "tensor dimension"));
      if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Status::error(where + " has invalid dimension " + std::to_string(d) + " = " +
                             fmt_u64(ne));
      if (n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / ne)
        return Status::error(where + " has dimensions whose product overflows");
      n_elements *= ne;
      info.ne[d] = static_cast<int64_t>(ne);
    }
    info.n_elements = n_elements;
    uint32_t raw_type = 0;
    DUET_TRY(c.read_le(&raw_type, "tensor type"));
    auto traits = ggml_type_traits(raw_type);
    if (!traits) return Status::error(where + " has unknown type id " + std::to_string(raw_type));
    info.type = traits->type;
    if (info.ne[0] % traits->block_elems != 0)
      return Status::error(where + " of type " + traits->name + " has row length " +
                           std::to_string(info.ne[0]) + ", not a multiple of its block size " +
                           std::to_string(traits->block_elems));
    // n_elements < 2^63, but a plain type stores up to 8 bytes per element, so the size in
    // bytes can still pass 2^64 (2^62 F32 elements would wrap to 0 bytes).
    const uint64_t n_blocks = n_elements / static_cast<uint64_t>(traits->block_elems);
    const uint64_t block_bytes = static_cast<uint64_t>(traits->block_bytes);
    if (n_blocks > std::numeric_limits<uint64_t>::max() / block_bytes)
      return Status::error(where + " is too large: " + fmt_u64(n_elements) + " elements of " +
                           traits->name + " do not fit in 2^64 bytes");
    info.n_bytes = n_blocks * block_bytes;
    DUET_TRY(c.read_le(&info.offset, "tensor offset"));
    if (info.offset % f.alignment_ != 0)
      return Status::error(where + " offset " + fmt_u64(info.offset) + " is not aligned to " +
                           fmt_u64(f.alignment_));
    if (!names.insert(info.name).second) return Status::error(where + " appears twice");
    f.tensors_.push_back(std::move(info));
  }

  const uint64_t header_end = c.pos();
  const uint64_t data_offset = (header_end + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  f.data_offset_ = data_offset;
  if (!f.tensors_.empty() && data_offset > bytes.size())
    return Status::error("data section starts at " + fmt_u64(data_offset) +
                         ", past the end of the file (" + fmt_u64(bytes.size()) + " bytes)");
  const uint64_t data_size = data_offset <= bytes.size() ? bytes.size() - data_offset : 0;
  for (auto& info : f.tensors_) {
    if (info.offset > data_size || info.n_bytes > data_size - info.offset)
      return Status::error("tensor '" + info.name + "' data (offset " + fmt_u64(info.offset) +
                           ", " + fmt_u64(info.n_bytes) + " bytes) runs past the end of the file");
    info.data = bytes.data() + data_offset + info.offset;
  }
  return f;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& kv : kv_)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

Result<std::shared_ptr<GgufModelFile>> GgufModelFile::open(const std::string& path) {
  auto map = MappedFile::open(path);
  if (!map) return map.status();
  auto parsed = GgufFile::parse((*map)->bytes());
  if (!parsed) return parsed.status();
  auto f = std::shared_ptr<GgufModelFile>(new GgufModelFile());
  f->map_ = std::move(map.value());
  f->gguf_ = std::move(parsed.value());
  return f;
}

}  // namespace duet
