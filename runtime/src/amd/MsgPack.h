// MsgPack.h: a MessagePack decoder for the AMDGPU metadata note of code objects (internal).
//
// Code object versions 3 to 6 carry their kernels' metadata as one MessagePack map in an ELF
// note. The bytes come from a file the user names, so decoding checks every length against the
// bytes left and bounds the nesting: malformed input is an error naming the byte offset, never
// a crash or an unbounded allocation. Every MessagePack type is read (nil, booleans, integers,
// floats, strings, binaries, arrays, maps, extensions), so unknown metadata keys are skipped
// whatever their values.
#pragma once

#include "kiln/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime::amd {

/// One decoded MessagePack value and everything inside it.
struct MsgPackValue {
    enum class Kind : std::uint8_t {
        Nil,
        Boolean,
        Integer,
        Float,
        String,
        Binary,
        Array,
        Map,
        Extension
    };
    Kind kind = Kind::Nil;
    bool boolean = false;
    bool negative = false;       ///< Integer: below zero
    std::uint64_t magnitude = 0; ///< Integer: the absolute value
    double real = 0;             ///< Float
    std::string bytes;           ///< String, Binary and Extension data
    std::int8_t extensionType = 0;
    std::vector<MsgPackValue> items; ///< Array: its items; Map: its values, in order
    std::vector<MsgPackValue> keys;  ///< Map: keys[i] is the key of items[i]

    /// The value of a map's entry whose key is the string `key`, or null.
    MsgPackValue const* find(std::string_view key) const;
    /// The value as an unsigned integer, or nothing when it is not a non-negative Integer.
    std::optional<std::uint64_t> asUnsigned() const;
    /// The value as text, or nothing when it is not a String.
    std::optional<std::string> asString() const;
    /// "an array", "a string", ... for messages.
    std::string_view kindName() const;
};

/// Decodes `bytes`, which must hold exactly one value. InvalidArgument naming the byte offset of
/// the problem when they do not.
Expected<MsgPackValue> decodeMsgPack(std::string_view bytes);

} // namespace kiln::runtime::amd
