# Recorded tensors are one ONNX TensorProto each. A build without ONNX's protobuf
# classes (cmake/platform.cmake) reads and writes that one message itself
# (tensor_file_without_onnx.cpp).
set(concept_needs_onnx_protobuf tensor_file.cpp)
