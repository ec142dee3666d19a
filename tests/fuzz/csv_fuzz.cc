// libFuzzer target: any bytes as CSV records, as DecodeCSV splits and parses
// them (kernels/io/csv_record.h). The first byte picks the delimiter and
// whether quotes count. Each line must split or end in an error status;
// without quotes the fields must join back into the line; every field must
// parse as each column type or be refused.
//
//   ./build-fuzz/tests/fuzz/csv_fuzz -max_total_time=60 tests/fuzz/corpus/csv_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/io/csv_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace io = tfd::kernels::io;
  if (size == 0) return 0;
  const char delim = (data[0] & 1) != 0 ? ',' : static_cast<char>(data[0] >> 1);
  const bool quotes = (data[0] & 2) != 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t at = 0;
  for (int64_t record = 0; at <= rest.size(); ++record) {
    const size_t nl = std::min(rest.find('\n', at), rest.size());
    const std::string line = rest.substr(at, nl - at);
    at = nl + 1;
    auto fields = io::SplitCsvRecord(line, delim, quotes, record);
    if (!fields.ok()) continue;
    if (!quotes || line.find('"') == std::string::npos) {
      std::string joined;
      for (size_t i = 0; i < fields->size(); ++i)
        joined += (i ? std::string(1, delim) : "") + (*fields)[i];
      if (joined != line) std::abort();  // a split that loses or invents bytes
    }
    for (const std::string& f : *fields) {
      int32_t i32;
      int64_t i64;
      float f32;
      double f64;
      io::ParseCsvField(f, &i32);
      io::ParseCsvField(f, &i64);
      io::ParseCsvField(f, &f32);
      io::ParseCsvField(f, &f64);
    }
  }
  return 0;
}
