#include "daemon/rpc/tensor_wire.h"

namespace tfd {

StatusOr<Tensor> TensorFromWire(proto::Tensor::Reader t, std::shared_ptr<void> keepalive) {
  if (t.which() != proto::Tensor::CONTENT || t.getDtype() == proto::DType::STRING ||
      t.getContent().size() == 0) {
    return TensorFromProto(t);  // small or typed lists: a copy is cheap
  }
  TFD_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(t.getDtype()));
  std::vector<int64_t> dims;
  for (int64_t d : t.getShape()) dims.push_back(d);
  TFD_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(std::move(dims)));
  auto bytes = t.getContent();
  if (bytes.size() != shape.num_elements() * DTypeSize(dtype)) {
    return errors::InvalidArgument("tensor ", DTypeName(dtype), shape.ToString(), " needs ",
                                   shape.num_elements() * DTypeSize(dtype), " bytes, got ",
                                   bytes.size());
  }
  // The message is read-only; tensors handed to kernels are never written in
  // place (outputs are fresh buffers; variables copy on write).
  auto buffer = Buffer::Wrap(const_cast<capnp::byte*>(bytes.begin()), bytes.size(),
                             std::move(keepalive));
  return Tensor::FromBuffer(dtype, shape, std::move(buffer));
}

}  // namespace tfd
