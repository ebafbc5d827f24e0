#include "graph/compile_ready.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "graph/model_write.h"
#include "graph/onnx_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

using Names = std::set<std::string>;

template <class Graph, class F>
void for_each_subgraph_of(Graph& g, F&& f) {
  for (auto& node : *g.mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) f(*a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) f(sub);
    }
  }
}

bool has_subgraph(const onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(),
                     [](const onnx::AttributeProto& a) { return a.has_g() || a.graphs_size() > 0; });
}

// What a graph defines itself: its inputs, initializers and node outputs (not its subgraphs').
Names defined_in(const onnx::GraphProto& g) {
  Names out;
  for (const auto& i : g.input()) out.insert(i.name());
  for (const auto& t : g.initializer()) out.insert(t.name());
  for (const auto& n : g.node()) out.insert(n.output().begin(), n.output().end());
  out.erase("");
  return out;
}

// What a graph reads from the scopes around it: inputs of its nodes and of its
// subgraphs, and outputs it returns without producing them, less what it defines.
Names outer_reads(onnx::GraphProto& g) {
  Names reads;
  for (const auto& n : g.node()) reads.insert(n.input().begin(), n.input().end());
  for_each_subgraph_of(g, [&](onnx::GraphProto& sub) {
    auto inner = outer_reads(sub);
    reads.insert(inner.begin(), inner.end());
  });
  for (const auto& o : g.output()) reads.insert(o.name());
  for (const auto& d : defined_in(g)) reads.erase(d);
  reads.erase("");
  return reads;
}

// Every name the model uses anywhere, node names included, so a new one clashes with none.
void collect_names(onnx::GraphProto& g, Names& out) {
  auto defined = defined_in(g);
  out.insert(defined.begin(), defined.end());
  for (const auto& n : g.node()) {
    out.insert(n.input().begin(), n.input().end());
    out.insert(n.name());
  }
  for (const auto& o : g.output()) out.insert(o.name());
  for (const auto& v : g.value_info()) out.insert(v.name());
  for_each_subgraph_of(g, [&](onnx::GraphProto& sub) { collect_names(sub, out); });
}

// How many graphs of the model define each name: a subgraph may reuse a name its sibling defines.
void count_definitions(onnx::GraphProto& g, std::map<std::string, int>& out) {
  for (const auto& d : defined_in(g)) ++out[d];
  for_each_subgraph_of(g, [&](onnx::GraphProto& sub) { count_definitions(sub, out); });
}

// Renames a value everywhere in a graph and its subgraphs.
void rename_value(onnx::GraphProto& g, const std::string& from, const std::string& to) {
  auto swap = [&](std::string* s) {
    if (*s == from) *s = to;
  };
  for (auto& n : *g.mutable_node()) {
    for (auto& s : *n.mutable_input()) swap(&s);
    for (auto& s : *n.mutable_output()) swap(&s);
  }
  for (auto& t : *g.mutable_initializer()) swap(t.mutable_name());
  for (auto& v : *g.mutable_input()) swap(v.mutable_name());
  for (auto& v : *g.mutable_output()) swap(v.mutable_name());
  for (auto& v : *g.mutable_value_info()) swap(v.mutable_name());
  for_each_subgraph_of(g, [&](onnx::GraphProto& sub) { rename_value(sub, from, to); });
}

bool is_constant_node(const onnx::NodeProto& n) {
  return n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx") && n.output_size() == 1;
}

bool has_external_data(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

bool any_external_data(onnx::GraphProto& g) {
  bool found = std::any_of(g.initializer().begin(), g.initializer().end(), has_external_data);
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) found = found || (a.has_t() && has_external_data(a.t()));
  }
  for_each_subgraph_of(g, [&](onnx::GraphProto& sub) { found = found || any_external_data(sub); });
  return found;
}

class Rewriter {
 public:
  explicit Rewriter(onnx::GraphProto& main) : main_(main) {
    collect_names(main_, taken_);
    count_definitions(main_, definitions_);
  }

  CompileReadyRewrite run() {
    for_each_subgraph_of(main_, [&](onnx::GraphProto& sub) { lift_constants(sub); });
    // Lifted Constant nodes read nothing: first in the main graph keeps its nodes in topological order.
    if (!lifted_nodes_.empty()) {
      std::vector<onnx::NodeProto> nodes(lifted_nodes_.begin(), lifted_nodes_.end());
      nodes.insert(nodes.end(), main_.node().begin(), main_.node().end());
      main_.clear_node();
      for (auto& n : nodes) *main_.add_node() = std::move(n);
    }
    add_outer_readers();
    return stats_;
  }

 private:
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; taken_.count(name); ++i) name = fmt::format("{}_{}", base, i);
    taken_.insert(name);
    return name;
  }

  // Bottom up, so a nested subgraph's constants go straight to the main graph.
  void lift_constants(onnx::GraphProto& sub) {
    for_each_subgraph_of(sub, [&](onnx::GraphProto& nested) { lift_constants(nested); });
    Names inputs, outputs;
    for (const auto& v : sub.input()) inputs.insert(v.name());
    for (const auto& v : sub.output()) outputs.insert(v.name());

    int lifted = 0;
    std::vector<onnx::NodeProto> identities;  // subgraph outputs that were constants
    // A constant under a name its graph also takes as an input is an overridable default: left alone.
    auto liftable = [&](const std::string& name) { return !inputs.count(name); };
    auto take_name = [&](const std::string& name) -> std::string {
      if (outputs.count(name)) {
        // The subgraph still returns it: an Identity inside produces the output from the lifted constant.
        std::string lifted_name = fresh(name + "_lifted");
        onnx::NodeProto id;
        id.set_op_type("Identity");
        id.set_name(fresh(name + "_lifted_output"));
        id.add_input(lifted_name);
        id.add_output(name);
        identities.push_back(std::move(id));
        return lifted_name;
      }
      if (definitions_[name] > 1) {  // a sibling or the main graph defines the same name
        std::string lifted_name = fresh(name + "_lifted");
        --definitions_[name];
        rename_value(sub, name, lifted_name);
        return lifted_name;
      }
      return name;
    };

    std::vector<onnx::TensorProto> kept;
    for (auto& t : *sub.mutable_initializer()) {
      if (!liftable(t.name())) {
        kept.push_back(t);
        continue;
      }
      std::string name = t.name();
      onnx::TensorProto moved = t;
      moved.set_name(take_name(name));
      *main_.add_initializer() = std::move(moved);
      ++lifted;
    }
    sub.clear_initializer();
    for (auto& t : kept) *sub.add_initializer() = std::move(t);

    std::vector<onnx::NodeProto> nodes;
    for (auto& n : *sub.mutable_node()) {
      if (!is_constant_node(n) || !liftable(n.output(0))) {
        nodes.push_back(n);
        continue;
      }
      onnx::NodeProto moved = n;
      moved.set_output(0, take_name(n.output(0)));
      lifted_nodes_.push_back(std::move(moved));
      ++lifted;
    }
    sub.clear_node();
    for (auto& n : identities) *sub.add_node() = std::move(n);
    for (auto& n : nodes) *sub.add_node() = std::move(n);

    if (lifted > 0) {
      drop_value_info_of_outer_names(sub);
      stats_.constants_lifted += lifted;
      ++stats_.subgraphs;
    }
  }

  // A subgraph's value_info for a name it no longer defines would describe another scope's value.
  static void drop_value_info_of_outer_names(onnx::GraphProto& sub) {
    auto defined = defined_in(sub);
    auto* infos = sub.mutable_value_info();
    infos->erase(std::remove_if(infos->begin(), infos->end(),
                                [&](const onnx::ValueInfoProto& v) { return !defined.count(v.name()); }),
                 infos->end());
  }

  // A main-graph value that only subgraphs read gets an Identity reading it, so
  // the compile API's copy of the main graph knows the value (and its type).
  void add_outer_readers() {
    Names read_by_nodes, read_by_subgraphs, outputs, defined_here;
    for (auto& n : *main_.mutable_node()) {
      read_by_nodes.insert(n.input().begin(), n.input().end());
      if (!has_subgraph(n)) continue;
      for (auto& a : *n.mutable_attribute()) {
        auto add = [&](onnx::GraphProto& sub) {
          auto r = outer_reads(sub);
          read_by_subgraphs.insert(r.begin(), r.end());
        };
        if (a.has_g()) add(*a.mutable_g());
        for (auto& sub : *a.mutable_graphs()) add(sub);
      }
    }
    for (const auto& o : main_.output()) outputs.insert(o.name());
    for (const auto& t : main_.initializer()) defined_here.insert(t.name());
    for (const auto& n : main_.node()) defined_here.insert(n.output().begin(), n.output().end());
    for (const auto& name : read_by_subgraphs) {
      // Graph inputs and outputs are always known to the compiled graph; an undefined name is ONNX Runtime's to report.
      if (read_by_nodes.count(name) || outputs.count(name) || !defined_here.count(name)) continue;
      auto* reader = main_.add_node();
      reader->set_op_type("Identity");
      reader->set_name(fresh(name + "_outer_reader"));
      reader->add_input(name);
      reader->add_output(fresh(name + "_outer_read"));
      ++stats_.readers;
    }
  }

  onnx::GraphProto& main_;
  Names taken_;
  std::map<std::string, int> definitions_;
  std::vector<onnx::NodeProto> lifted_nodes_;
  CompileReadyRewrite stats_;
};

std::string plural(int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace

bool compile_ready_rewrite_built() { return true; }

std::string CompileReadyRewrite::describe() const {
  std::vector<std::string> parts;
  if (constants_lifted > 0) {
    parts.push_back(fmt::format("{} lifted out of {}", plural(constants_lifted, "constant"), plural(subgraphs, "subgraph")));
  }
  if (readers > 0) parts.push_back(fmt::format("{} only subgraphs read given an outer reader", plural(readers, "value")));
  return parts.empty() ? "unchanged" : fmt::format("{}", fmt::join(parts, "; "));
}

Result<CompileReadyRewrite> write_compile_ready(const fs::path& model, const fs::path& output) {
  auto proto = read_onnx_model(model);
  if (!proto) return proto.error();
  auto& main = *proto->mutable_graph();
  if (std::none_of(main.node().begin(), main.node().end(), has_subgraph)) return CompileReadyRewrite{};
  if (proto->ir_version() < 4) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("{} is IR version {}: before version 4 an initializer must also be a graph input, so none can be lifted",
                             model.filename().string(), proto->ir_version())};
  }
  if (any_external_data(main)) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("{} keeps tensors in external data files, which a rewritten copy elsewhere would not find",
                             model.filename().string())};
  }
  CompileReadyRewrite rewrite = Rewriter(main).run();
  if (!rewrite.changed()) return rewrite;
  RUNG_RETURN_IF_ERROR(write_onnx_model(*proto, output));
  return rewrite;
}

}  // namespace rung
