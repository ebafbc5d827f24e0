// The text gate: both sides' recogniser outputs decoded by greedy CTC with the
// model's character list; exact-string agreement and character error rate, and
// every line that differs named.
#include <fmt/format.h>

#include <cmath>

#include "parity/gates/gate.h"
#include "rung/json_text.h"
#include "rung/decode.h"

namespace rung {
namespace {

class TextGate final : public ParityGate {
 public:
  TextGate(std::string output, CharacterList chars, std::string chars_file)
      : output_(std::move(output)), chars_(std::move(chars)), chars_file_(std::move(chars_file)) {}
  double min_exact = 1.0, max_cer = 0.0, drop_score = NAN;

  std::vector<std::string> outputs() const override { return {output_}; }
  std::vector<std::string> files_read() const override { return {chars_file_}; }
  Status check(const ModelIo& io) override {
    RUNG_RETURN_IF_ERROR(require_output(io, output_, "text gate"));
    const TensorInfo* info = find_output(io, output_);
    if (info->shape.size() >= 2 && info->shape.back() > 0 && static_cast<std::size_t>(info->shape.back()) != chars_.classes()) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("text gate: output '{}' has {} classes, but {} gives {} (blank + {} symbols); is it the model's list, "
                               "and is 'space' right?", output_, info->shape.back(), chars_file_, chars_.classes(), chars_.classes() - 1)};
    }
    return {};
  }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    auto a = decode(*ref.at(output_));
    if (!a) return a.error();
    auto b = decode(*cand.at(output_));
    if (!b) return b.error();
    if (a->size() != b->size()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("text gate: {} lines from the reference, {} from the candidate for {}",
                                                            a->size(), b->size(), input)};
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      const TextLine& r = (*a)[i];
      const TextLine& c = (*b)[i];
      ++lines_;
      vacuous_.add(!r.text.empty());
      if (show) shown_.push_back(fmt::format("{}: ref \"{}\" · cand \"{}\"", item_name(input, i, a->size()), r.text, c.text));
      const std::size_t edits = edit_distance(r.text, c.text);
      characters_ += code_points(r.text);
      edits_ += edits;
      if (r.text == c.text) {
        ++exact_;
      } else {
        differing_.push_back(fmt::format("{}: \"{}\" vs \"{}\" ({} edit{})", item_name(input, i, a->size()), r.text, c.text, edits, edits == 1 ? "" : "s"));
      }
      if (!std::isnan(drop_score)) {
        const bool kept_r = r.score >= drop_score, kept_c = c.score >= drop_score;
        kept_ref_ += kept_r;
        kept_cand_ += kept_c;
        if (kept_r != kept_c) {
          (kept_r ? dropped_ : rescued_) += 1;
          differing_.push_back(fmt::format("{}: line {} at drop score {} (confidence {} vs {})", item_name(input, i, a->size()),
                                           kept_r ? "dropped" : "kept", num(drop_score), num(r.score), num(c.score)));
        }
      }
    }
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "text";
    g.title = fmt::format("text · {}", output_);
    const double cer = characters_ ? static_cast<double>(edits_) / static_cast<double>(characters_) : (edits_ ? 1.0 : 0.0);
    g.passed = lines_ > 0 && static_cast<double>(exact_) >= min_exact * static_cast<double>(lines_) - 1e-9 && cer <= max_cer + 1e-12 &&
               dropped_ + rescued_ == 0;
    g.summary = fmt::format("{} vs {} lines, {} line{} changed ({} exact, need {:g}%); CER {:.3f}% ({} edits in {} characters, at most {:g}%)",
                            lines_, lines_, lines_ - exact_, lines_ - exact_ == 1 ? "" : "s", percent(exact_, lines_), min_exact * 100,
                            100 * cer, edits_, characters_, max_cer * 100);
    if (!std::isnan(drop_score)) {
      g.summary += fmt::format("; at drop score {}: {} vs {} lines kept, {}", num(drop_score), kept_ref_, kept_cand_, changes_phrase(dropped_, rescued_));
    }
    g.details = differing_;
    g.stats_json = json_text(nlohmann::json{{"lines", lines_}, {"exact", exact_}, {"edits", edits_}, {"characters", characters_}, {"cer", cer},
                                  {"kept_ref", kept_ref_}, {"kept_cand", kept_cand_}, {"differing", differing_}});
    g.shown = shown_;
    vacuous_.apply(g);
    return g;
  }

 private:
  VacuousCount vacuous_;
  std::vector<std::string> shown_;
  Result<std::vector<TextLine>> decode(const Tensor& t) const {
    auto l = item_layout(t, 2, "text gate");
    if (!l) return l.error();
    if (static_cast<std::size_t>(t.shape.back()) != chars_.classes()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("text gate: output '{}' has {} classes; {} gives {}", output_, t.shape.back(),
                                                            chars_file_, chars_.classes())};
    }
    const auto v = to_floats(t);
    const std::size_t steps = l->size / chars_.classes();
    std::vector<TextLine> lines;
    for (std::size_t i = 0; i < l->items; ++i) lines.push_back(ctc_greedy_decode(std::span<const float>(v).subspan(i * l->size, l->size), steps, chars_));
    return lines;
  }

  std::string output_;
  CharacterList chars_;
  std::string chars_file_;
  std::size_t lines_ = 0, exact_ = 0, edits_ = 0, characters_ = 0, kept_ref_ = 0, kept_cand_ = 0, dropped_ = 0, rescued_ = 0;
  std::vector<std::string> differing_;
};

}  // namespace

Result<std::unique_ptr<ParityGate>> make_text_gate(GateParams& p, const std::filesystem::path& base_dir) {
  const std::string output = p.text("output", "");
  const std::string file = p.text("characters", "");
  const bool space = p.flag("space", true);
  const double min_exact = p.number("min_exact", 1.0), max_cer = p.number("max_cer", 0.0);
  const double drop = p.has("drop_score") ? p.number("drop_score", 0.5) : NAN;
  p.require(!output.empty(), "needs 'output', the recogniser's [.., steps, classes] scores");
  p.require(!file.empty(), "needs 'characters', the character list file (one symbol per line)");
  p.require(min_exact >= 0 && min_exact <= 1, "'min_exact' must be in [0, 1]");
  p.require(max_cer >= 0, "'max_cer' must not be negative");
  RUNG_RETURN_IF_ERROR(p.finish());
  std::filesystem::path path = file;
  if (path.is_relative()) path = base_dir / path;
  auto chars = CharacterList::from_file(path, space);
  if (!chars) return p.error(chars.error().message);
  auto g = std::make_unique<TextGate>(output, std::move(*chars), path.string());
  g->min_exact = min_exact;
  g->max_cer = max_cer;
  g->drop_score = drop;
  return std::unique_ptr<ParityGate>(std::move(g));
}

}  // namespace rung
