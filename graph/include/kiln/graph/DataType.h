// DataType.h: the element types Kiln computes with.
//
// Commands name f16, bf16, f32, f64 and i32; i64 holds sizes, strides and indices, and bool the
// result of comparisons. Half types are stored rounded and computed in wider types, as GPUs do.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

enum class DataType : std::uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };

/// The name used in JSON and printed graphs ("f16", "i64", ...).
std::string_view name(DataType type);

/// The type with that name, if there is one.
std::optional<DataType> parseDataType(std::string_view name);

/// Bytes one element takes in memory.
int sizeInBytes(DataType type);

bool isFloat(DataType type);
bool isInteger(DataType type);

/// Rounds a value to what `type` can hold (f16/bf16 round to nearest even, f32 to float,
/// integers truncate and wrap as the hardware does).
double roundTo(DataType type, double value);

} // namespace kiln
