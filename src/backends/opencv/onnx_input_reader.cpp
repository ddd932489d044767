#include "backends/opencv/onnx_input_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "core/error.hpp"

namespace infermark {
namespace {

// Field numbers from onnx/onnx.proto. Protobuf never renumbers fields, so these hold for every
// ONNX version. Comments name the message and field each number belongs to.
constexpr std::uint32_t kModelGraph = 7;        // ModelProto.graph: GraphProto
constexpr std::uint32_t kGraphInitializer = 5;  // GraphProto.initializer: repeated TensorProto
constexpr std::uint32_t kGraphInput = 11;       // GraphProto.input: repeated ValueInfoProto
constexpr std::uint32_t kGraphOutput = 12;      // GraphProto.output: repeated ValueInfoProto
constexpr std::uint32_t kTensorName = 8;        // TensorProto.name
constexpr std::uint32_t kValueInfoName = 1;     // ValueInfoProto.name
constexpr std::uint32_t kValueInfoType = 2;     // ValueInfoProto.type: TypeProto
constexpr std::uint32_t kTypeTensor = 1;        // TypeProto.tensor_type: TypeProto.Tensor
constexpr std::uint32_t kTensorElemType = 1;    // TypeProto.Tensor.elem_type: TensorProto.DataType
constexpr std::uint32_t kTensorShape = 2;       // TypeProto.Tensor.shape: TensorShapeProto
constexpr std::uint32_t kShapeDim = 1;          // TensorShapeProto.dim: repeated Dimension
constexpr std::uint32_t kDimValue = 1;          // Dimension.dim_value (int64)
constexpr std::uint32_t kDimParam = 2;          // Dimension.dim_param (string)

// Protobuf wire types (protobuf.dev/programming-guides/encoding). Groups (3, 4) never occur in ONNX.
enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Walks the fields of one serialized message in order. A nested message is read by a new
// WireReader over the bytes length_delimited() returns.
class WireReader {
 public:
  explicit WireReader(std::string_view message) : rest_(message) {}

  // Reads the next field's tag; false at the end of the message.
  bool next_field() {
    if (rest_.empty()) return false;
    const auto tag = read_varint();
    field_ = static_cast<std::uint32_t>(tag >> 3);
    wire_type_ = static_cast<std::uint32_t>(tag & 7);
    if (field_ == 0) throw Error("malformed protobuf (field number 0)");
    return true;
  }

  std::uint32_t field() const { return field_; }

  std::uint64_t varint() {
    expect(kVarint);
    return read_varint();
  }

  std::string_view length_delimited() {
    expect(kLengthDelimited);
    return take(read_varint());
  }

  void skip() {
    switch (wire_type_) {
      case kVarint:
        read_varint();
        return;
      case kFixed64:
        take(8);
        return;
      case kLengthDelimited:
        take(read_varint());
        return;
      case kFixed32:
        take(4);
        return;
      default:
        throw Error("malformed protobuf (wire type " + std::to_string(wire_type_) + ")");
    }
  }

 private:
  std::uint64_t read_varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) throw Error("truncated protobuf");
      const auto byte = static_cast<std::uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    throw Error("malformed protobuf (varint longer than 10 bytes)");
  }

  std::string_view take(std::uint64_t size) {
    if (size > rest_.size()) throw Error("truncated protobuf");
    const auto taken = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return taken;
  }

  void expect(WireType type) const {
    if (wire_type_ != type)
      throw Error("malformed protobuf (field " + std::to_string(field_) + " has wire type " + std::to_string(wire_type_) +
                  ", expected " + std::to_string(type) + ")");
  }

  std::string_view rest_;
  std::uint32_t field_ = 0;
  std::uint32_t wire_type_ = 0;
};

// TensorProto.DataType values infermark has a DType for.
DType to_dtype(std::uint64_t elem_type, const std::string& tensor) {
  switch (elem_type) {
    case 1:
      return DType::kFloat32;
    case 2:
      return DType::kUInt8;
    case 3:
      return DType::kInt8;
    case 5:
      return DType::kInt16;
    case 6:
      return DType::kInt32;
    case 7:
      return DType::kInt64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kFloat16;
    case 11:
      return DType::kFloat64;
    case 16:
      return DType::kBFloat16;
    default:
      throw Error("tensor '" + tensor + "' has ONNX element type " + std::to_string(elem_type) + ", which infermark cannot feed");
  }
}

// Dimension is a oneof: dim_value (fixed), dim_param (symbolic, so dynamic) or neither (unknown, dynamic).
void append_dimension(std::string_view dimension, TensorSpec& spec) {
  std::int64_t value = kDynamicDim;
  std::string name;
  for (WireReader r(dimension); r.next_field();) {
    if (r.field() == kDimValue) {
      value = static_cast<std::int64_t>(r.varint());
      name.clear();
    } else if (r.field() == kDimParam) {
      name = r.length_delimited();
      value = kDynamicDim;
    } else {
      r.skip();
    }
  }
  spec.shape.push_back(value);
  spec.dim_names.push_back(name);
}

void read_shape(std::string_view shape, TensorSpec& spec) {
  for (WireReader r(shape); r.next_field();) {
    if (r.field() == kShapeDim)
      append_dimension(r.length_delimited(), spec);
    else
      r.skip();
  }
}

void read_tensor_type(std::string_view tensor_type, TensorSpec& spec) {
  std::uint64_t elem_type = 0;  // 0 is UNDEFINED, refused by to_dtype
  for (WireReader r(tensor_type); r.next_field();) {
    if (r.field() == kTensorElemType)
      elem_type = r.varint();
    else if (r.field() == kTensorShape)
      read_shape(r.length_delimited(), spec);
    else
      r.skip();
  }
  spec.dtype = to_dtype(elem_type, spec.name);
}

// A graph input or output: its name, and its TypeProto left unparsed until the name says it is
// wanted (inputs that are initializers are dropped, whatever their type).
struct ValueInfo {
  std::string name;
  std::string_view type;
};

ValueInfo read_value_info(std::string_view value_info) {
  ValueInfo info;
  for (WireReader r(value_info); r.next_field();) {
    if (r.field() == kValueInfoName)
      info.name = r.length_delimited();
    else if (r.field() == kValueInfoType)
      info.type = r.length_delimited();
    else
      r.skip();
  }
  return info;
}

TensorSpec to_spec(const ValueInfo& info) {
  TensorSpec spec{info.name, DType::kFloat32, {}, {}};
  bool is_tensor = false;
  for (WireReader r(info.type); r.next_field();) {
    if (r.field() != kTypeTensor) {
      r.skip();
      continue;
    }
    read_tensor_type(r.length_delimited(), spec);
    is_tensor = true;
  }
  if (!is_tensor) throw Error("'" + info.name + "' is not a tensor (sequences, maps and optionals are not supported)");
  return spec;
}

std::string read_tensor_name(std::string_view tensor) {
  for (WireReader r(tensor); r.next_field();) {
    if (r.field() == kTensorName) return std::string(r.length_delimited());
    r.skip();
  }
  return "";
}

OnnxSignature read_graph(std::string_view graph) {
  std::set<std::string> initializers;
  std::vector<ValueInfo> inputs, outputs;
  for (WireReader r(graph); r.next_field();) {
    switch (r.field()) {
      case kGraphInitializer:
        initializers.insert(read_tensor_name(r.length_delimited()));
        break;
      case kGraphInput:
        inputs.push_back(read_value_info(r.length_delimited()));
        break;
      case kGraphOutput:
        outputs.push_back(read_value_info(r.length_delimited()));
        break;
      default:
        r.skip();
    }
  }
  OnnxSignature signature;
  // Older exporters list every weight as a graph input too; an initializer is not fed by the user.
  for (const auto& input : inputs)
    if (!initializers.contains(input.name)) signature.inputs.push_back(to_spec(input));
  for (const auto& output : outputs) signature.outputs.push_back(to_spec(output));
  return signature;
}

// A read-only map of a whole file. Pages are read only when touched, so the weights the parser
// skips are neither read from disk nor counted in the process's peak RSS.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(std::strerror(errno));
    struct stat status {};
    const bool sized = ::fstat(fd, &status) == 0;
    if (sized && status.st_size > 0) {
      size_ = static_cast<std::size_t>(status.st_size);
      data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    const int error = errno;
    ::close(fd);
    if (!sized || data_ == MAP_FAILED) throw Error(std::strerror(error));
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return data_ ? std::string_view(static_cast<const char*>(data_), size_) : std::string_view(); }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace

OnnxSignature parse_onnx_signature(std::string_view model_proto) {
  std::string_view graph;
  bool has_graph = false;
  for (WireReader r(model_proto); r.next_field();) {
    if (r.field() != kModelGraph) {
      r.skip();
      continue;
    }
    graph = r.length_delimited();
    has_graph = true;
  }
  if (!has_graph) throw Error("not an ONNX model (no graph)");
  return read_graph(graph);
}

OnnxSignature read_onnx_signature(const std::filesystem::path& model) {
  try {
    const MappedFile file(model);
    return parse_onnx_signature(file.bytes());
  } catch (const Error& e) {
    throw Error("cannot read the inputs and outputs of " + model.string() + ": " + e.what());
  }
}

}  // namespace infermark
