#include "cli/feed_parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace tfd::cli {
namespace {

// At most this many bytes of a value go into an error: a value may be
// megabytes long, and the error should show where it went wrong.
constexpr size_t kQuoteBytes = 64;

// `text` as errors quote it: whole when short, else kQuoteBytes of it
// around byte `at`, with "..." where cut.
std::string Quote(std::string_view text, size_t at = 0) {
  if (text.size() <= kQuoteBytes) return std::string(text);
  const size_t from =
      std::min(at > kQuoteBytes / 2 ? at - kQuoteBytes / 2 : 0, text.size() - kQuoteBytes);
  return (from > 0 ? "..." : "") + std::string(text.substr(from, kQuoteBytes)) +
         (from + kQuoteBytes < text.size() ? "..." : "");
}

// One element or list of a literal, before its dtype is known.
struct Literal {
  enum Kind { kInt, kFloat, kBool, kString, kWord, kList } kind = kInt;
  std::string text;  // the token; for kString the unquoted, unescaped text
  std::vector<Literal> items;
};

std::string KindName(Literal::Kind k) {
  switch (k) {
    case Literal::kInt: return "an integer";
    case Literal::kFloat: return "a float";
    case Literal::kBool: return "a bool";
    case Literal::kString: return "a string";
    case Literal::kWord: return "a bare word";
    case Literal::kList: return "a list";
  }
  return "?";
}

// inf, infinity and nan in any case, with an optional sign: what tfctl's
// JSON output writes ("inf", "-inf", "nan"), and what JSON tools and
// JavaScript write (Infinity, -Infinity, NaN).
bool IsNonFinite(std::string_view token) {
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) token.remove_prefix(1);
  auto equals = [token](std::string_view word) {
    return token.size() == word.size() &&
           std::equal(token.begin(), token.end(), word.begin(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  };
  return equals("inf") || equals("infinity") || equals("nan");
}

Literal::Kind Classify(const std::string& token) {
  if (token == "true" || token == "false") return Literal::kBool;
  if (IsNonFinite(token)) return Literal::kFloat;
  size_t i = (token[0] == '-' || token[0] == '+') ? 1 : 0;
  bool digits = false, dot = false, exp = false;
  for (; i < token.size(); ++i) {
    const char c = token[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exp) {
      exp = true;
      if (i + 1 < token.size() && (token[i + 1] == '-' || token[i + 1] == '+')) ++i;
      if (i + 1 >= token.size()) return Literal::kWord;
    } else {
      return Literal::kWord;
    }
  }
  if (!digits) return Literal::kWord;
  return (dot || exp) ? Literal::kFloat : Literal::kInt;
}

class LiteralParser {
 public:
  explicit LiteralParser(const std::string& text) : text_(text) {}

  StatusOr<Literal> ParseAll() {
    TFD_ASSIGN_OR_RETURN(Literal v, Item(0));
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 32;

  Status Fail(const std::string& what) const {
    return errors::InvalidArgument(what, " at column ", pos_ + 1, " of '", Quote(text_, pos_), "'");
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }

  StatusOr<Literal> Item(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("expected a value");
    const char c = text_[pos_];
    if (c == '[') return List(depth);
    if (c == '"' || c == '\'') return Quoted();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           std::string_view(",[] \t\n\"'").find(text_[pos_]) == std::string_view::npos) {
      ++pos_;
    }
    if (pos_ == start) return Fail(std::string("unexpected '") + c + "'");
    Literal lit;
    lit.text = text_.substr(start, pos_ - start);
    lit.kind = Classify(lit.text);
    return lit;
  }

  StatusOr<Literal> List(int depth) {
    if (depth >= kMaxDepth) return Fail("lists nested deeper than 32");
    ++pos_;  // '['
    Literal list;
    list.kind = Literal::kList;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return list;
    }
    while (true) {
      TFD_ASSIGN_OR_RETURN(Literal item, Item(depth + 1));
      list.items.push_back(std::move(item));
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("missing ']'");
      if (text_[pos_] == ']') {
        ++pos_;
        return list;
      }
      if (text_[pos_] != ',') return Fail("expected ',' or ']'");
      ++pos_;
    }
  }

  StatusOr<Literal> Quoted() {
    const char quote = text_[pos_++];
    Literal lit;
    lit.kind = Literal::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        c = text_[pos_++];
        if (c == 'n') c = '\n';
        if (c == 't') c = '\t';
      }
      lit.text += c;
    }
    if (pos_ >= text_.size()) return Fail("unterminated string");
    ++pos_;
    return lit;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// The shape a literal claims: the lengths along its chain of first elements.
std::vector<int64_t> ClaimedDims(const Literal& lit) {
  std::vector<int64_t> dims;
  for (const Literal* l = &lit; l && l->kind == Literal::kList;
       l = l->items.empty() ? nullptr : &l->items[0]) {
    dims.push_back(static_cast<int64_t>(l->items.size()));
  }
  return dims;
}

// Every list at `depth` must match the claimed dims; INVALID_ARGUMENT for a
// ragged or mixed list.
Status CheckShape(const Literal& lit, const std::vector<int64_t>& dims, size_t depth) {
  if (lit.kind != Literal::kList) {
    if (depth != dims.size()) {
      return errors::InvalidArgument("ragged list: a scalar where a list of rank ",
                                     dims.size() - depth, " was expected");
    }
    return OkStatus();
  }
  if (depth >= dims.size()) {
    return errors::InvalidArgument("ragged list: a list where a scalar was expected");
  }
  const auto n = static_cast<int64_t>(lit.items.size());
  if (dims[depth] != n) {
    return errors::InvalidArgument("ragged list: a list of ", n, " elements where ", dims[depth],
                                   " were expected (dimension ", depth, ")");
  }
  for (const Literal& item : lit.items) TFD_RETURN_IF_ERROR(CheckShape(item, dims, depth + 1));
  return OkStatus();
}

void Leaves(const Literal& lit, std::vector<const Literal*>& out) {
  if (lit.kind != Literal::kList) {
    out.push_back(&lit);
    return;
  }
  for (const Literal& item : lit.items) Leaves(item, out);
}

// A quoted "inf", "-inf" or "nan", as tfctl's JSON output writes them.
bool IsQuotedNonFinite(const Literal& l) {
  return l.kind == Literal::kString && IsNonFinite(l.text);
}

StatusOr<DType> InferDType(const std::vector<const Literal*>& leaves) {
  bool any_float = false, any_int = false, any_bool = false, any_string = false;
  bool any_quoted_non_finite = false;
  for (const Literal* l : leaves) {
    any_float |= l->kind == Literal::kFloat;
    any_int |= l->kind == Literal::kInt;
    any_bool |= l->kind == Literal::kBool;
    any_quoted_non_finite |= IsQuotedNonFinite(*l);
    any_string |= l->kind == Literal::kString && !IsQuotedNonFinite(*l);
    if (l->kind == Literal::kWord) {
      return errors::InvalidArgument("'", Quote(l->text),
                                     "' is not a number, true/false or a quoted string");
    }
  }
  // Quoted non-finite values beside numbers are floats (a JSON list read
  // back); alone they are text, as any quoted word is.
  if (any_quoted_non_finite) {
    if (any_float || any_int) {
      any_float = true;
    } else {
      any_string = true;
    }
  }
  const int kinds = (any_float || any_int) + any_bool + any_string;
  if (kinds > 1) {
    return errors::InvalidArgument("the value mixes numbers, bools and strings; give a dtype "
                                   "prefix such as float32:[...]");
  }
  if (any_string) return DType::kString;
  if (any_bool) return DType::kBool;
  if (any_float) return DType::kFloat32;
  if (any_int) return DType::kInt32;
  return DType::kFloat32;  // an empty list
}

Status NotA(const Literal& l, DType d) {
  return errors::InvalidArgument(KindName(l.kind), " '", Quote(l.text), "' is not a valid ",
                                 DTypeName(d));
}

Status OutOfRange(const Literal& l, DType d) {
  return errors::InvalidArgument("'", Quote(l.text), "' is out of range for ", DTypeName(d));
}

// A float literal's value in T, rounded as numpy does; nullopt when it is
// too large for T (1e39 for float32, 1e400 for either). inf, infinity and
// nan are taken as written. A literal too small for T keeps what strtof or
// strtod gives: a denormal (1e-45 for float32) when that is nonzero, else
// 0 (1e-400), as numpy.float64('1e-400') is 0.0.
template <typename T>
std::optional<T> ParseFloat(const std::string& text) {
  // strtod reads inf, infinity and nan in any case, signed or not.
  if (IsNonFinite(text)) return static_cast<T>(std::strtod(text.c_str(), nullptr));
  errno = 0;
  T v;
  if constexpr (std::is_same_v<T, float>) {
    v = std::strtof(text.c_str(), nullptr);  // rounds once, straight to float
  } else {
    v = std::strtod(text.c_str(), nullptr);
  }
  // ERANGE is also an underflow's; only an overflow gives infinity.
  if (errno == ERANGE && std::isinf(v)) return std::nullopt;
  return v;
}

template <typename T>
Status Convert(const Literal& l, DType d, T* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (l.kind == Literal::kBool) return NotA(l, d);
    *out = l.text;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (l.kind != Literal::kBool) return NotA(l, d);
    *out = l.text == "true";
  } else if constexpr (std::is_floating_point_v<T>) {
    if (l.kind != Literal::kInt && l.kind != Literal::kFloat && !IsQuotedNonFinite(l)) {
      return NotA(l, d);
    }
    const std::optional<T> v = ParseFloat<T>(l.text);
    if (!v) return OutOfRange(l, d);
    *out = *v;
  } else {
    if (l.kind != Literal::kInt) return NotA(l, d);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(l.text.c_str(), &end, 10);
    if (errno == ERANGE || v < static_cast<long long>(std::numeric_limits<T>::min()) ||
        v > static_cast<long long>(std::numeric_limits<T>::max())) {
      return OutOfRange(l, d);
    }
    *out = static_cast<T>(v);
  }
  return OkStatus();
}

}  // namespace

StatusOr<FeedArg> SplitFeed(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
    return errors::InvalidArgument("--feed '", Quote(arg), "' is not NAME=VALUE or NAME=@file.npy");
  }
  FeedArg f;
  f.name = arg.substr(0, eq);
  f.value = arg.substr(eq + 1);
  if (f.value[0] == '@') {
    f.from_file = true;
    f.value = f.value.substr(1);
    if (f.value.empty()) return errors::InvalidArgument("--feed '", arg, "' names no file after '@'");
  }
  return f;
}

StatusOr<Tensor> ParseFeedValue(const std::string& text, DType declared) {
  DType dtype = declared;
  std::string body = text;
  // A dtype prefix: "float64:[1, 2]". Only a dtype name counts, so a quoted
  // "a:b" or a bare word with a colon is left alone.
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    if (auto d = DTypeFromName(text.substr(0, colon))) {
      dtype = *d;
      body = text.substr(colon + 1);
    }
  }
  TFD_ASSIGN_OR_RETURN(Literal lit, LiteralParser(body).ParseAll());
  const std::vector<int64_t> dims = ClaimedDims(lit);
  TFD_RETURN_IF_ERROR(CheckShape(lit, dims, 0));
  std::vector<const Literal*> leaves;
  Leaves(lit, leaves);
  if (dtype == DType::kInvalid) {
    TFD_ASSIGN_OR_RETURN(dtype, InferDType(leaves));
  }
  TFD_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(dims));
  TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  Status status;
  TFD_SWITCH_ALL(dtype, T, {
    T* out = t.data<T>();
    for (size_t i = 0; i < leaves.size() && status.ok(); ++i) status = Convert(*leaves[i], dtype, &out[i]);
  }, return errors::InvalidArgument("cannot feed a value of dtype ", DTypeName(dtype)));
  TFD_RETURN_IF_ERROR(status);
  return t;
}

}  // namespace tfd::cli
