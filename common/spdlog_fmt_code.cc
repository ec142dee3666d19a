// The compiled half of spdlog and fmt, for executables that link their
// dependencies statically (-Dstatic_deps, meson.build).
//
// Both libraries keep the definitions behind their headers in "-inl.h"
// files, which their own shared libraries compile with a handful of
// explicit template instantiations. Debian ships those shared libraries but
// no archives, so tfd and tfctl compile the same definitions here: linked
// ahead of libspdlog.so and libfmt.so, they resolve every reference, and
// --as-needed leaves both shared libraries out (tests/deploy/container_test.sh
// fails if either comes back). The instantiations below are the console
// sinks spdlog's library provides, both locking variants, and fmt's char
// formatting core; code that reaches for more (a file sink, wide strings)
// would load the shared library again rather than fail to link.
//
// The tests and the Python module do not link this file: they use the
// shared libraries, as the rest of the system does.

#include <fmt/format-inl.h>
#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/console_globals.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

namespace spdlog::sinks {
using details::console_mutex;
using details::console_nullmutex;

template class base_sink<std::mutex>;
template class base_sink<details::null_mutex>;
template class stdout_sink_base<console_mutex>;
template class stdout_sink_base<console_nullmutex>;
template class stdout_sink<console_mutex>;
template class stdout_sink<console_nullmutex>;
template class stderr_sink<console_mutex>;
template class stderr_sink<console_nullmutex>;
template class ansicolor_sink<console_mutex>;
template class ansicolor_sink<console_nullmutex>;
template class ansicolor_stdout_sink<console_mutex>;
template class ansicolor_stdout_sink<console_nullmutex>;
template class ansicolor_stderr_sink<console_mutex>;
template class ansicolor_stderr_sink<console_nullmutex>;
}  // namespace spdlog::sinks

FMT_BEGIN_NAMESPACE
namespace detail {
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
