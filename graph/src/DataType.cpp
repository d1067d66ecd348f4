#include "kiln/graph/DataType.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace kiln {

namespace {
struct TypeInfo {
    DataType type;
    std::string_view name;
    int bytes;
};
constexpr TypeInfo kTypes[] = {
    {DataType::Bool, "bool", 1}, {DataType::I32, "i32", 4},   {DataType::I64, "i64", 8},
    {DataType::F16, "f16", 2},   {DataType::BF16, "bf16", 2}, {DataType::F32, "f32", 4},
    {DataType::F64, "f64", 8},
};

// Rounds a float to `mantissaBits` explicit mantissa bits and the exponent range of a format
// with `exponentBits`, to nearest even, with IEEE overflow to infinity and gradual underflow.
double roundToFormat(double value, int mantissaBits, int exponentBits) {
    if (!std::isfinite(value) || value == 0)
        return value;
    int const maxExponent = (1 << (exponentBits - 1)) - 1; // e.g. 15 for f16
    int const minExponent = 1 - maxExponent;               // smallest normal exponent
    int exponent = std::ilogb(value);
    if (exponent < minExponent)
        exponent = minExponent; // subnormal: fixed quantum
    double const quantum = std::ldexp(1.0, exponent - mantissaBits);
    double const rounded = std::nearbyint(value / quantum) * quantum; // ties to even
    double const largest = std::ldexp(2.0 - std::ldexp(1.0, -mantissaBits), maxExponent);
    if (std::fabs(rounded) > largest)
        return std::copysign(INFINITY, value);
    return rounded;
}
} // namespace

std::string_view name(DataType type) {
    return kTypes[static_cast<int>(type)].name;
}

std::optional<DataType> parseDataType(std::string_view name) {
    for (auto const& info : kTypes)
        if (info.name == name)
            return info.type;
    return std::nullopt;
}

int sizeInBytes(DataType type) {
    return kTypes[static_cast<int>(type)].bytes;
}

bool isFloat(DataType type) {
    return type == DataType::F16 || type == DataType::BF16 || type == DataType::F32 ||
           type == DataType::F64;
}

bool isInteger(DataType type) {
    return !isFloat(type);
}

double roundTo(DataType type, double value) {
    switch (type) {
    case DataType::F64:
        return value;
    case DataType::F32:
        return static_cast<double>(static_cast<float>(value));
    case DataType::F16:
        return roundToFormat(value, 10, 5);
    case DataType::BF16:
        return roundToFormat(value, 7, 8);
    case DataType::Bool:
        return value != 0 ? 1 : 0;
    case DataType::I32:
    case DataType::I64:
        if (!std::isfinite(value))
            return 0;
        return std::trunc(value);
    }
    return value;
}

} // namespace kiln
