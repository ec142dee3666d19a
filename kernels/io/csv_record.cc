// Splitting a CSV record; see csv_record.h.
#include "kernels/io/csv_record.h"

#include <algorithm>

namespace tfd::kernels::io {

StatusOr<std::vector<std::string>> SplitCsvRecord(const std::string& line, char delim, bool quotes,
                                                  int64_t record) {
  std::vector<std::string> fields;
  size_t i = 0;
  for (;;) {
    std::string field;
    if (quotes && i < line.size() && line[i] == '"') {
      for (++i;; ++i) {
        if (i >= line.size()) {
          return errors::InvalidArgument("record ", record, ": a quoted field is not closed");
        }
        if (line[i] != '"') {
          field += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          break;
        }
      }
      ++i;  // past the closing quote
      if (i < line.size() && line[i] != delim) {
        return errors::InvalidArgument("record ", record,
                                       ": a quoted field ends before its "
                                       "delimiter (a quote inside is written twice)");
      }
    } else {
      const size_t end = std::min(line.find(delim, i), line.size());
      field = line.substr(i, end - i);
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) return fields;
    ++i;  // past the delimiter
  }
}

}  // namespace tfd::kernels::io
