// QNN HTP: Qualcomm's Hexagon NPU through the QNN runtime; it runs the
// release-time quantised form, and keeps its compiled context as an EP context file.
#include "os/library_files.h"
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> qnn_htp_options(const ProviderSettings& s) {
  std::map<std::string, std::string> o{{"backend_path", library_file_name("QnnHtp")},
                                       {"htp_performance_mode", "default"}};  // burst only while a job runs: run_options
  if (!s.engine_cache_dir.empty()) o["ep.context_file_path"] = s.engine_cache_dir.string();
  return o;
}

}  // namespace

RungModule rung_module_qnn_htp() {
  RungModule m;
  m.spec = {"qnn-htp", "QNN HTP", "QNNExecutionProvider", AppendMethod::kKeyValue, ModelForm::kQuantized, true,
            {library_file_name("QnnHtp")}, {}};
  m.rank = 50;
  m.platforms = {"qualcomm-hexagon"};
  m.provider_options = qnn_htp_options;
  // The HTP is clocked up for a job's runs and back to default after each, not
  // between images while nothing runs.
  m.run_options = {{"qnn.htp_perf_mode", "burst"}, {"qnn.htp_perf_mode_post_run", "default"}};
  m.about = "Qualcomm's Hexagon NPU through QNN, on the quantised form";
  return m;
}

}  // namespace rung
