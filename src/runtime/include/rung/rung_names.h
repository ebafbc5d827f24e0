// One id and one display name per rung, used by every command.
//
// The id is the lower-case token a command line takes and every JSON document,
// CSV file, cache and record stores: "cpu", "cuda", "tensorrt", "webgpu",
// "openvino", ..., and for a plugin EP library its file name without the system's
// prefix and suffix ("rung_sim_ep" for librung_sim_ep.so). The display name is what every text table and line
// shows: "CPU", "CUDA", "TensorRT", "WebGPU" ("WebGPU on lavapipe (software)"
// while the software adapter is lent). A plugin's display name is its id: rung
// knows a plugin only by its file until a worker loads it.
//
// Neither is ONNX Runtime's provider name ("TensorrtExecutionProvider",
// "RungSimAccelerator"), which only lines about ONNX Runtime's providers show
// (which provider ran a model's nodes).
#pragma once

#include <string>

namespace rung {

// The id of a rung as a command line names it: a ladder rung's id (its id or display name in any case gives it), a plugin
// EP library (a path, or a library's file name) by its file name ("rung_sim_ep").
std::string rung_id(const std::string& named);

// The display name of a rung as a command line names it (a ladder rung's id or a
// plugin library): "TensorRT", "WebGPU on lavapipe (software)", "rung_sim_ep";
// an id rung does not know is shown as it was given.
std::string rung_display_name(const std::string& named);

// Empty when `named` is a rung rung knows (its id or display name, in any case) or
// a plugin EP library; else the sentence every command says for a name it cannot
// place: "no rung 'cpux': rung's rungs are tensorrt, ..., cpu, or a plugin EP library's path".
std::string unknown_rung_reason(const std::string& named);

}  // namespace rung
