// A bare ONNX backend-test runner: ONNX Runtime's C++ API and ONNX's protobuf
// classes, nothing of rung's (no Tensor, no session code, no worker). It runs
// each test folder (model.onnx, test_data_set_N/input_K.pb, output_K.pb) on the
// CPU provider of one build and sorts it as pass, mismatch or refused, so that
// `rung conform`'s figures on the CPU rung can be checked against it:
//
//   build/bench/conform-bare LIBRARY SUITE_DIR [--filter REGEX] [--compare RECORD.json COLUMN_ID]
//
// --compare lists every test whose outcome differs from the record's column.
// Mismatch is counted two ways: rung's element rule (both |a-b| > atol and
// |a-b|/|a| > rtol) and NumPy's assert_allclose (|a-b| > atol + rtol*|b|), which
// ONNX's own backend runner uses; at ONNX's bounds (atol 1e-7, rtol 1e-3).
#include <dlfcn.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "onnxruntime_cxx_api.h"

namespace fs = std::filesystem;

namespace {

constexpr double kAtol = 1e-7, kRtol = 1e-3;

template <class Proto>
bool parse(const fs::path& file, Proto& proto) {
  std::ifstream in(file, std::ios::binary);
  return in && proto.ParseFromIstream(&in);
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    found.emplace_back(std::atoi(name.c_str() + prefix.size()), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

std::size_t elements(const onnx::TensorProto& t) {
  std::size_t n = 1;
  for (auto d : t.dims()) n *= static_cast<std::size_t>(d);
  return n;
}

std::size_t width(int type) {
  switch (type) {
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: return 8;
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: return 2;
    default: return 1;
  }
}

// The tensor's bytes, little-endian, from raw_data or the typed field ONNX keeps the type in.
std::vector<char> bytes_of(const onnx::TensorProto& t) {
  const std::size_t n = elements(t), w = width(t.data_type());
  std::vector<char> out(n * w);
  if (t.has_raw_data()) {
    std::memcpy(out.data(), t.raw_data().data(), std::min(out.size(), t.raw_data().size()));
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    char* p = out.data() + i * w;
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT: { float v = t.float_data(static_cast<int>(i)); std::memcpy(p, &v, 4); break; }
      case onnx::TensorProto::DOUBLE: { double v = t.double_data(static_cast<int>(i)); std::memcpy(p, &v, 8); break; }
      case onnx::TensorProto::INT64: { std::int64_t v = t.int64_data(static_cast<int>(i)); std::memcpy(p, &v, 8); break; }
      case onnx::TensorProto::UINT64: case onnx::TensorProto::UINT32: { std::uint64_t v = t.uint64_data(static_cast<int>(i)); std::memcpy(p, &v, w); break; }
      default: { std::int32_t v = t.int32_data(static_cast<int>(i)); std::memcpy(p, &v, w); break; }
    }
  }
  return out;
}

// Keeps the bytes a tensor value points into alive as long as the run needs them.
struct Feeds {
  std::vector<std::vector<char>> buffers;
  std::vector<std::vector<std::int64_t>> shapes;
};

Ort::Value tensor_value(const onnx::TensorProto& t, Feeds& keep) {
  keep.shapes.emplace_back(t.dims().begin(), t.dims().end());
  const auto& shape = keep.shapes.back();
  if (t.data_type() == onnx::TensorProto::STRING) {
    Ort::AllocatorWithDefaultOptions alloc;
    auto v = Ort::Value::CreateTensor(alloc, shape.data(), shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING);
    std::vector<const char*> s;
    for (const auto& x : t.string_data()) s.push_back(x.c_str());
    if (!s.empty()) v.FillStringTensor(s.data(), s.size());
    return v;
  }
  keep.buffers.push_back(bytes_of(t));
  auto& b = keep.buffers.back();
  if (b.empty()) b.reserve(1);
  static const auto mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  return Ort::Value::CreateTensor(mem, b.data(), b.size(), shape.data(), shape.size(), static_cast<ONNXTensorElementDataType>(t.data_type()));
}

// The doubles and strings of an ONNX Runtime tensor, or of a TensorProto.
struct Flat {
  int type = 0;
  std::vector<std::int64_t> shape;
  std::vector<double> numbers;
  std::vector<std::string> strings;
};

double widen(int type, const char* p) {
  switch (type) {
    case onnx::TensorProto::FLOAT: { float v; std::memcpy(&v, p, 4); return v; }
    case onnx::TensorProto::DOUBLE: { double v; std::memcpy(&v, p, 8); return v; }
    case onnx::TensorProto::INT64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case onnx::TensorProto::UINT64: { std::uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case onnx::TensorProto::INT32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case onnx::TensorProto::UINT32: { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
    case onnx::TensorProto::INT16: { std::int16_t v; std::memcpy(&v, p, 2); return v; }
    case onnx::TensorProto::UINT16: { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
    case onnx::TensorProto::INT8: return static_cast<std::int8_t>(*p);
    case onnx::TensorProto::FLOAT16: {
      std::uint16_t h; std::memcpy(&h, p, 2);
      const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
      const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
      return (h & 0x8000) ? -v : v;
    }
    case onnx::TensorProto::BFLOAT16: {
      std::uint32_t x = 0; std::memcpy(reinterpret_cast<char*>(&x) + 2, p, 2);
      float f; std::memcpy(&f, &x, 4); return f;
    }
    default: return static_cast<unsigned char>(*p);
  }
}

Flat flat_of(const onnx::TensorProto& t) {
  Flat f{t.data_type(), {t.dims().begin(), t.dims().end()}, {}, {}};
  if (t.data_type() == onnx::TensorProto::STRING) {
    f.strings.assign(t.string_data().begin(), t.string_data().end());
    return f;
  }
  const auto b = bytes_of(t);
  for (std::size_t i = 0; i < elements(t); ++i) f.numbers.push_back(widen(t.data_type(), b.data() + i * width(t.data_type())));
  return f;
}

Flat flat_of(const Ort::ConstValue& v) {
  auto info = v.GetTensorTypeAndShapeInfo();
  Flat f{static_cast<int>(info.GetElementType()), info.GetShape(), {}, {}};
  const std::size_t n = info.GetElementCount();
  if (f.type == onnx::TensorProto::STRING) {
    for (std::size_t i = 0; i < n; ++i) f.strings.push_back(v.GetStringTensorElement(i));
    return f;
  }
  const char* p = static_cast<const char*>(v.GetTensorRawData());
  for (std::size_t i = 0; i < n; ++i) f.numbers.push_back(widen(f.type, p + i * width(f.type)));
  return f;
}

struct Verdict {
  bool rung_rule = true;   // no element past both bounds
  bool numpy_rule = true;  // no element past atol + rtol * |expected|
  std::string why;
};

void compare(const Flat& expected, const Flat& actual, Verdict& v) {
  if (expected.type != actual.type || expected.shape != actual.shape) {
    v.rung_rule = v.numpy_rule = false;
    v.why = "type or shape";
    return;
  }
  if (expected.strings != actual.strings) {
    v.rung_rule = v.numpy_rule = false;
    v.why = "strings";
  }
  for (std::size_t i = 0; i < expected.numbers.size(); ++i) {
    const double e = expected.numbers[i], a = actual.numbers[i];
    if (std::isnan(e) && std::isnan(a)) continue;
    if (e == a) continue;
    const double abs = std::fabs(a - e);
    if (std::isnan(abs) || (abs > kAtol && abs / std::max(std::fabs(e), 1e-30) > kRtol)) v.rung_rule = false;
    if (std::isnan(abs) || abs > kAtol + kRtol * std::fabs(e)) v.numpy_rule = false;
  }
  if (!v.rung_rule || !v.numpy_rule) v.why = "values";
}

// Compares an output with its expected file, as the model declares the output.
void compare_output(const fs::path& file, const onnx::TypeProto& declared, const Ort::Value& actual, Verdict& v) {
  if (declared.has_sequence_type()) {
    onnx::SequenceProto s;
    parse(file, s);
    const std::size_t n = actual.GetCount();
    if (n != static_cast<std::size_t>(s.tensor_values_size())) {
      v.rung_rule = v.numpy_rule = false;
      v.why = "sequence length";
      return;
    }
    Ort::AllocatorWithDefaultOptions alloc;
    for (std::size_t i = 0; i < n; ++i) compare(flat_of(s.tensor_values(static_cast<int>(i))), flat_of(actual.GetValue(static_cast<int>(i), alloc).GetConst()), v);
    return;
  }
  if (declared.has_optional_type()) {
    onnx::OptionalProto o;
    parse(file, o);
    const bool expected_none = o.elem_type() == onnx::OptionalProto::UNDEFINED;
    if (expected_none != !actual.HasValue()) {
      v.rung_rule = v.numpy_rule = false;
      v.why = "None";
      return;
    }
    if (expected_none) return;
    if (o.elem_type() == onnx::OptionalProto::TENSOR) compare(flat_of(o.tensor_value()), flat_of(actual.GetConst()), v);
    return;
  }
  onnx::TensorProto t;
  parse(file, t);
  compare(flat_of(t), flat_of(actual.GetConst()), v);
}

struct Outcome {
  std::string rung_rule;   // "pass", "mismatch", "runtime refused"
  std::string numpy_rule;
  std::string reason;
};

Outcome run_test(Ort::Env& env, const fs::path& dir) {
  onnx::ModelProto model;
  parse(dir / "model.onnx", model);
  try {
    Ort::SessionOptions options;
    options.SetIntraOpNumThreads(1);
    Ort::Session session(env, (dir / "model.onnx").c_str(), options);
    Ort::AllocatorWithDefaultOptions alloc;
    std::vector<std::string> in_names, out_names;
    for (std::size_t i = 0; i < session.GetInputCount(); ++i) in_names.push_back(session.GetInputNameAllocated(i, alloc).get());
    for (std::size_t i = 0; i < session.GetOutputCount(); ++i) out_names.push_back(session.GetOutputNameAllocated(i, alloc).get());
    std::map<std::string, const onnx::TypeProto*> declared;
    for (const auto& o : model.graph().output()) declared[o.name()] = &o.type();
    Verdict v;
    for (const auto& set : numbered(dir, "test_data_set_")) {
      Feeds keep;
      std::vector<Ort::Value> values;
      std::vector<const char*> names;
      const auto inputs = numbered(set, "input_");
      for (std::size_t k = 0; k < inputs.size() && k < in_names.size(); ++k) {
        const auto type = session.GetInputTypeInfo(k).GetONNXType();
        if (type == ONNX_TYPE_SEQUENCE) {
          onnx::SequenceProto s;
          parse(inputs[k], s);
          std::vector<Ort::Value> items;
          for (const auto& t : s.tensor_values()) items.push_back(tensor_value(t, keep));
          values.push_back(Ort::Value::CreateSequence(items));
        } else if (type == ONNX_TYPE_OPTIONAL) {
          onnx::OptionalProto o;
          parse(inputs[k], o);
          if (o.elem_type() == onnx::OptionalProto::UNDEFINED) continue;  // None: not fed
          if (o.elem_type() == onnx::OptionalProto::TENSOR) {
            values.push_back(tensor_value(o.tensor_value(), keep));
          } else {
            std::vector<Ort::Value> items;
            for (const auto& t : o.sequence_value().tensor_values()) items.push_back(tensor_value(t, keep));
            values.push_back(Ort::Value::CreateSequence(items));
          }
        } else {
          onnx::TensorProto t;
          parse(inputs[k], t);
          values.push_back(tensor_value(t, keep));
        }
        names.push_back(in_names[k].c_str());
      }
      std::vector<const char*> outs;
      for (const auto& n : out_names) outs.push_back(n.c_str());
      auto results = session.Run(Ort::RunOptions{nullptr}, names.data(), values.data(), values.size(), outs.data(), outs.size());
      const auto expected = numbered(set, "output_");
      for (std::size_t k = 0; k < expected.size() && k < results.size(); ++k) {
        compare_output(expected[k], *declared[out_names[k]], results[k], v);
      }
    }
    return {v.rung_rule ? "pass" : "mismatch", v.numpy_rule ? "pass" : "mismatch", v.why};
  } catch (const Ort::Exception& e) {
    return {"runtime refused", "runtime refused", e.what()};
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: conform-bare LIBONNXRUNTIME SUITE_DIR [--filter REGEX] [--compare RECORD.json COLUMN_ID]\n";
    return 2;
  }
  std::string filter, record, column;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--compare" && i + 2 < argc) { record = argv[++i]; column = argv[++i]; }
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::cerr << dlerror() << "\n";
    return 3;
  }
  auto get = reinterpret_cast<const OrtApiBase* (*)()>(dlsym(lib, "OrtGetApiBase"));
  const OrtApiBase* base = get();
  // ONNX Runtime 1.N serves API versions up to N: ask for no more (a build complains about the rest).
  const std::string version = base->GetVersionString();
  const int newest = std::min(ORT_API_VERSION, std::atoi(version.c_str() + version.find('.') + 1));
  const OrtApi* api = nullptr;
  for (int v = newest; v >= 17 && api == nullptr; --v) api = base->GetApi(static_cast<std::uint32_t>(v));
  if (api == nullptr) {
    std::cerr << argv[1] << ": ONNX Runtime " << version << " serves no API version rung's headers know\n";
    return 3;
  }
  Ort::InitApi(api);
  Ort::Env env(ORT_LOGGING_LEVEL_FATAL, "bare");

  // Test folders two levels down at most, as `rung conform` finds them; stubs (no model.onnx) are not tests here.
  std::vector<fs::path> tests;
  const std::regex re(filter.empty() ? "." : filter);
  auto consider = [&](const fs::path& d) {
    const std::string id = d.parent_path().filename().string() + "/" + d.filename().string();
    if (fs::is_regular_file(d / "model.onnx") && std::regex_search(id, re)) tests.push_back(d);
  };
  for (const auto& a : fs::directory_iterator(argv[2])) {
    if (!a.is_directory()) continue;
    if (fs::is_regular_file(a.path() / "model.onnx")) { consider(a.path()); continue; }
    for (const auto& b : fs::directory_iterator(a.path())) {
      if (b.is_directory()) consider(b.path());
    }
  }
  std::sort(tests.begin(), tests.end());
  nlohmann::json rec;
  if (!record.empty()) rec = nlohmann::json::parse(std::ifstream(record));
  std::map<std::string, int> by_rung_rule, by_numpy_rule;
  int differ = 0;
  for (const auto& t : tests) {
    const Outcome o = run_test(env, t);
    ++by_rung_rule[o.rung_rule];
    ++by_numpy_rule[o.numpy_rule];
    const std::string id = t.parent_path().filename().string() + "/" + t.filename().string();
    if (rec.is_null()) continue;
    for (const auto& r : rec["tests"]) {
      if (r["id"] != id || !r["results"].contains(column)) continue;
      const std::string theirs = r["results"][column]["outcome"];
      if (theirs != o.rung_rule) {
        ++differ;
        std::cout << "differs  " << id << ": bare " << o.rung_rule << ", rung " << theirs << " (" << o.reason << ")\n";
      }
    }
  }
  std::cout << tests.size() << " tests on ONNX Runtime " << base->GetVersionString() << " (CPU, 1 thread), atol " << kAtol << " rtol " << kRtol << "\n";
  for (const char* rule : {"rung's element rule", "NumPy's assert_allclose"}) {
    const auto& m = rule[0] == 'r' ? by_rung_rule : by_numpy_rule;
    std::cout << "  " << rule << ": pass " << (m.count("pass") ? m.at("pass") : 0) << ", mismatch " << (m.count("mismatch") ? m.at("mismatch") : 0)
              << ", runtime refused " << (m.count("runtime refused") ? m.at("runtime refused") : 0) << "\n";
  }
  if (!rec.is_null()) std::cout << "  " << differ << " tests sorted differently from the record's column " << column << "\n";
  return 0;
}
