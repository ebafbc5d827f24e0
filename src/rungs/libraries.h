// What a shared library is, for a person: the drivers, toolkits and vendor
// runtimes the ladder's providers need, and ONNX Runtime's own provider files,
// as one table beside the ladder (libraries.cpp). A library not in the table is
// named as it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rung {

struct LibraryIdentity {
  std::string file;     // "libcublas.so.13"
  std::string what;     // "CUDA 13's cuBLAS", "the NVIDIA driver"; the file name when unknown
  std::string product;  // "CUDA 13", "the NVIDIA driver": what a person installs; the file name when unknown
  bool driver = false;  // comes with the device driver, not with a toolkit
  bool known = false;
};

LibraryIdentity identify_library(std::string_view file);

// Missing libraries of one product, in words: "the NVIDIA driver (libcuda.so.1) is
// not installed", "TensorRT 10 (libnvinfer.so.10, libnvonnxparser.so.10) not found",
// "libfoo.so.3 not found". Files of different products are said one product at a
// time, in the order given, joined by "; ".
std::string missing_libraries_words(const std::vector<std::string>& files);

// A library found with another version than the one needed: "found libcudart.so.12
// (CUDA 12), but this build needs CUDA 13 (libcudart.so.13)".
std::string other_version_words(std::string_view needed, std::string_view found);

// A library found that lacks symbol versions its requester needs: "found libstdc++.so.6
// (/usr/lib/x86_64-linux-gnu/libstdc++.so.6), but it lacks GLIBCXX_3.4.32 that libx.so needs".
std::string lacking_versions_words(std::string_view file, std::string_view path, const std::vector<std::string>& versions,
                                   std::string_view needed_by);

}  // namespace rung
