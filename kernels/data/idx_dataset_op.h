// The kernel of the dataset ops whose examples an IdxDataset holds
// (IdxDataset over MNIST's IDX files, CifarDataset over CIFAR's binary
// files): it reads the attrs they share (shuffle, seed, epochs and the
// placement of dataset_op_util.h), and each run finds or creates the
// task's dataset of that spec, loading its files once. What differs, the
// files and their attrs, is the `read_files` each op passes.
//
//   class CifarDatasetOp : public IdxDatasetKernel {
//    public:
//     explicit CifarDatasetOp(OpKernelConstruction& c) : IdxDatasetKernel(c, ReadCifarFiles) {}
//   };
//
// Thread-safety: as OpKernel (Compute may run concurrently).
#pragma once

#include "common/op_kernel.h"
#include "kernels/data/dataset_op_util.h"
#include "kernels/data/idx_dataset.h"

namespace tfd::kernels::data {

class IdxDatasetKernel : public OpKernel {
 public:
  // Reads the files' attrs into `spec` and checks them (INVALID_ARGUMENT
  // naming what is wrong).
  using ReadFiles = Status (*)(OpKernelConstruction& c, IdxDatasetSpec& spec);

  IdxDatasetKernel(OpKernelConstruction& c, ReadFiles read_files);
  void Compute(OpKernelContext& ctx) override;

 private:
  IdxDatasetSpec spec_;
  DatasetPlacement where_;
};

}  // namespace tfd::kernels::data
