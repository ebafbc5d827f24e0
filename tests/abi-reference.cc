// What the C++ engine core gives on a real crop, for the C, Rust and Python
// bindings to match bit for bit (ctest fixture abi_reference):
//   abi-reference OUTDIR
// writes OUTDIR/plugins/ (the simulated accelerator), input.bin (the crop as the
// classifier's input tensor), output.bin (its first output) and reference.txt
// (names, types, shapes, the rung and model id), running the engine with the
// options every binding's test uses; then decision.json, the decision document
// an engine started again on its cache (decision-cache/) gives.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "parity_test_support.h"
#include "rung/engine_core.h"
#include "rung/geometry.h"
#include "rung/image.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace rung;

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "abi-reference: %s\n", why.c_str());
  return 1;
}

std::string joined(const std::vector<std::int64_t>& shape) { return fmt::format("{}", fmt::join(shape, ",")); }

bool write_bytes(const fs::path& file, const std::vector<std::byte>& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: abi-reference OUTDIR");
  const fs::path out = argv[1];
  fs::remove_all(out);
  fs::create_directories(out);
  const fs::path plugins = test::make_plugin_dir(out);
  const fs::path cache = out / "cache";

  // A real crop: one printed line of scikit-image's scanned page, as the OCR
  // pipeline feeds the angle classifier (48 x 192, BGR, (x/255 - 0.5) / 0.5).
  auto page = read_image(test::skimage_image("page.png"));
  if (!page) return fail(page.error().message);
  const Image crop = crop_quad(*page, axis_aligned_quad(10, 20, 180, 52));
  ImagePreprocess pre;
  pre.fit = ImagePreprocess::Fit::kResize;
  pre.width = 192;
  pre.height = 48;
  pre.channels = "BGR";
  pre.mean = {0.5, 0.5, 0.5};
  pre.stddev = {0.5, 0.5, 0.5};
  const Tensor input = image_to_tensor(crop, pre, "x");

  core::EngineOptions o;
  o.cache_dir = cache;
  o.plugin_dirs = {plugins};
  o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  o.worker = test::worker_path();
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  o.probe_runs = 1;
  o.inference_threads = 1;
  // Within a thousand times the floor's time and faithful: the simulated accelerator
  // (about twice the floor's time) is taken however loaded the machine is, so every
  // run computes on the same rung. (Ten was not enough: on a busy machine a few
  // preempted runs kept the interval above 9.5 until the time budget ran out.)
  o.acceptance_ratio = 1000;
  o.models = {{"ppocr_cls", Role::kGeneric, test::model_path("ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx"), {}, {}, {}}};
  auto engine = core::Engine::start(o);
  if (!engine) return fail(engine.error().message);
  (*engine)->wait_until_settled();
  auto job = (*engine)->open_job();
  if (!job) return fail(job.error().message);
  auto session = (*job)->session("ppocr_cls");
  if (!session) return fail(session.error().message);
  auto outputs = (*session)->run({input});
  if (!outputs) return fail(outputs.error().message);
  if (outputs->empty()) return fail("the classifier gave no output");
  const Tensor& first = outputs->front();
  if ((*session)->rung() != "rung_sim_ep") {
    return fail(fmt::format("the classifier ran on {}, not the simulated accelerator: {}", (*session)->rung(), (*engine)->about_line()));
  }

  if (!write_bytes(out / "input.bin", input.bytes) || !write_bytes(out / "output.bin", first.bytes)) return fail("cannot write the tensors");
  std::ofstream text(out / "reference.txt");
  text << "model_name=ppocr_cls\n"
       << "model_id=" << (*session)->model_id() << "\n"
       << "rung=" << (*session)->rung() << "\n"
       << "input_name=" << input.name << "\n"
       << "input_type=" << element_type_name(input.type) << "\n"
       << "input_shape=" << joined(input.shape) << "\n"
       << "output_name=" << first.name << "\n"
       << "output_type=" << element_type_name(first.type) << "\n"
       << "output_shape=" << joined(first.shape) << "\n";
  if (!text) return fail("cannot write reference.txt");
  std::printf("abi-reference: ppocr_cls on %s gave %s %s\n", (*session)->rung().c_str(), first.name.c_str(), shape_string(first.shape).c_str());
  // The decision document every binding must give (decision.json): the same options
  // started again on this cache answer from it, so nothing measured differs. The
  // bindings start on a copy of decision-cache/.
  job->reset();
  engine->reset();
  auto warm = core::Engine::start(o);
  if (!warm) return fail(warm.error().message);
  (*warm)->wait_until_settled();
  {
    std::ofstream doc(out / "decision.json");
    doc << (*warm)->decision_json() << "\n";
    if (!doc) return fail("cannot write decision.json");
  }
  warm->reset();
  fs::rename(cache, out / "decision-cache");
  return 0;
}
