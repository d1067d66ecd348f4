// Status.cpp: names of error codes and error context.
#include "kiln/runtime/Status.h"

namespace kiln::runtime {

std::string_view name(ErrorCode code) {
    switch (code) {
    case ErrorCode::NoDriver:
        return "NoDriver";
    case ErrorCode::NoDevice:
        return "NoDevice";
    case ErrorCode::DriverError:
        return "DriverError";
    case ErrorCode::JitFailed:
        return "JitFailed";
    case ErrorCode::InvalidManifest:
        return "InvalidManifest";
    case ErrorCode::ArgumentMismatch:
        return "ArgumentMismatch";
    case ErrorCode::LaunchOutOfLimits:
        return "LaunchOutOfLimits";
    case ErrorCode::InvalidArgument:
        return "InvalidArgument";
    case ErrorCode::NotFound:
        return "NotFound";
    case ErrorCode::Unsupported:
        return "Unsupported";
    }
    return "unknown";
}

Error Error::withContext(std::string_view context) const {
    return Error(code_, std::string(context) + ": " + message_);
}

} // namespace kiln::runtime
