# graph/ reads and writes ONNX models through ONNX's protobuf classes. A build
# without them (cmake/platform.cmake) keeps the one thing an engine compile needs
# from here: control-flow models are refused an engine, with that reason
# (compile_ready_without_onnx.cpp).
set(concept_needs_onnx_protobuf compile_ready.cpp model_file.cpp model_write.cpp onnx_file.cpp stable_hash.cpp tensor_data.cpp)
