#include "quantize/quantize_file.h"

#include <algorithm>
#include <vector>

#include "base/thread_pool.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "kernels/ref/dequantize.h"
#include "kernels/ref/quantize.h"

namespace duet {

namespace {

// Rows are quantized in chunks of about this many elements, one chunk per task.
constexpr int64_t kChunkElements = int64_t{1} << 18;

Result<QuantModelShape> model_shape(const GgufFile& f) {
  const GgufValue* arch = f.find("general.architecture");
  if (!arch || !arch->as_string()) return Status::error("the file names no general.architecture");
  const std::string prefix(*arch->as_string());
  auto count = [&](const std::string& key) -> int64_t {
    const GgufValue* v = f.find(prefix + "." + key);
    return v && v->as_int() ? *v->as_int() : 0;
  };
  QuantModelShape m;
  m.n_layer = count("block_count");
  m.n_head = count("attention.head_count");
  m.n_head_kv = count("attention.head_count_kv");
  if (m.n_head_kv == 0) m.n_head_kv = m.n_head;
  m.has_output = f.find_tensor("output.weight") != nullptr;
  if (m.n_layer <= 0) return Status::error("the file has no " + prefix + ".block_count");
  return m;
}

// One tensor in the new type: its elements decoded to floats a chunk of rows at a time and
// encoded again, the chunks spread over the pool and joined in order.
Status requantize(const GgufTensorInfo& t, GgmlType type, ThreadPool& pool,
                  std::vector<uint8_t>& out) {
  const int64_t row = t.ne[0];
  const int64_t rows = static_cast<int64_t>(t.n_elements) / row;
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunkElements / row);
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
  const size_t in_row = ggml_row_bytes(t.type, row), out_row = ggml_row_bytes(type, row);
  out.resize(out_row * static_cast<size_t>(rows));
  std::vector<Status> failed(static_cast<size_t>(pool.size()), Status::ok());
  pool.parallel_for(chunks, [&](int64_t c, int thread) {
    const int64_t first = c * rows_per_chunk, last = std::min(rows, first + rows_per_chunk);
    std::vector<float> x(static_cast<size_t>(row));
    std::vector<uint8_t> encoded;
    for (int64_t r = first; r < last; ++r) {
      ref::dequantize_row(t.type, t.data + in_row * static_cast<size_t>(r), x.data(), row);
      encoded.clear();
      const Status s = ref::quantize_row(type, x.data(), row, encoded);
      if (!s) {
        failed[static_cast<size_t>(thread)] = s;
        return;
      }
      std::copy(encoded.begin(), encoded.end(), out.begin() + static_cast<ptrdiff_t>(out_row * r));
    }
  });
  for (const Status& s : failed) DUET_TRY(s);
  return Status::ok();
}

}  // namespace

Result<QuantizeSummary> quantize_gguf(const std::string& in_path, const std::string& out_path,
                                      const QuantizeOptions& o) {
  auto file = GgufModelFile::open(in_path);
  if (!file) return file.status();
  const GgufFile& in = (*file)->gguf();
  DUET_ASSIGN(shape, model_shape(in));

  // Every tensor's new type, and the refusals, before anything is written.
  std::vector<GgmlType> types;
  for (const GgufTensorInfo& t : in.tensors()) {
    const auto chosen = quant_tensor_type(o.preset, t.name, t.n_dims, t.ne[0], shape);
    if (!chosen) {
      types.push_back(t.type);
      continue;
    }
    const bool quantized_already = ggml_traits(t.type).block_elems > 1;
    if (quantized_already && !o.allow_requantize)
      return Status::error(in_path + " is already quantized (" + t.name + " is " +
                           ggml_type_name(t.type) +
                           "); quantizing it again compounds the error. Quantize the F16/BF16 "
                           "original, or pass --allow-requantize to do it anyway");
    if (!ggml_traits(t.type).can_compute)
      return Status::error(t.name + " has type " + ggml_type_name(t.type) +
                           ", which duet cannot decode");
    types.push_back(*chosen);
  }

  GgufWriter w;
  w.set_alignment(static_cast<uint32_t>(in.alignment()));
  for (const GgufKeyValue& kv : in.metadata()) {
    if (kv.key == "general.alignment" || kv.key == "general.file_type" ||
        kv.key == "general.quantization_version")
      continue;
    w.add_value(kv.key, kv.value);
  }
  w.add_u32("general.quantization_version", 2);
  w.add_u32("general.file_type", o.preset.file_type);
  QuantizeSummary summary;
  for (size_t i = 0; i < in.tensors().size(); ++i) {
    const GgufTensorInfo& t = in.tensors()[i];
    w.add_tensor(t.name, types[i], std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims));
    summary.bytes_in += t.n_bytes;
    summary.bytes_out += w.tensor_bytes(i);
    summary.quantized += types[i] != t.type;
  }
  summary.tensors = in.tensors().size();

  ThreadPool pool(o.threads);
  const Status written = w.write(out_path, [&](size_t i, std::vector<uint8_t>& data) -> Status {
    const GgufTensorInfo& t = in.tensors()[i];
    if (types[i] == t.type) {
      data.assign(t.data, t.data + t.n_bytes);
    } else {
      DUET_TRY(requantize(t, types[i], pool, data));
    }
    if (o.progress) o.progress(i + 1, in.tensors().size(), t.name, types[i]);
    return Status::ok();
  });
  if (!written) return Status::error(out_path + ": " + written.message());
  return summary;
}

}  // namespace duet
