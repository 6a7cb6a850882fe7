// Runs an ONNX test folder (model.onnx + test_data_set_N/{input,output}_K.pb) and compares
// each data set's outputs with the ONNX rule.
#pragma once

#include <string>
#include <vector>

#include "onyx/session.h"
#include "testing/value_compare.h"

namespace onyx::testing {

struct DataSetResult {
  std::string name;
  bool passed = false;
  std::string message;  // why it failed
};

struct TestFolderResult {
  std::string error;  // set when the model could not be loaded or run at all
  std::vector<DataSetResult> data_sets;
  bool passed() const;
  std::string FirstFailure() const;
};

TestFolderResult RunTestFolder(const std::string& dir, const SessionOptions& options = {},
                               const Tolerance& tol = {});

}  // namespace onyx::testing
