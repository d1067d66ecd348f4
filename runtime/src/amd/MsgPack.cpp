// MsgPack.cpp: MessagePack decoding with every length checked against the bytes left.
#include "MsgPack.h"

#include <bit>
#include <cstring>

namespace kiln::runtime::amd {
namespace {

/// Deeper nesting than any metadata note has; a bound so hostile input cannot exhaust the stack.
constexpr int kMaxDepth = 64;

class Decoder {
public:
    explicit Decoder(std::string_view bytes)
        : bytes_(bytes) {}

    Expected<MsgPackValue> decodeAll() {
        MsgPackValue value;
        KILN_RETURN_IF_ERROR(decode(value, 0));
        if (at_ != bytes_.size()) {
            return fail("one value ends at byte " + std::to_string(at_) + " but " +
                        std::to_string(bytes_.size() - at_) + " bytes follow it");
        }
        return value;
    }

private:
    std::string_view bytes_;
    std::size_t at_ = 0;

    Error fail(std::string const& what) const {
        return Error(ErrorCode::InvalidArgument, "malformed MessagePack: " + what);
    }
    Status need(std::size_t count, char const* what) const {
        if (count <= bytes_.size() - at_)
            return {};
        return fail(std::string(what) + " at byte " + std::to_string(at_) + " needs " +
                    std::to_string(count) + " bytes but " + std::to_string(bytes_.size() - at_) +
                    " are left");
    }
    /// A big-endian unsigned integer of `size` bytes.
    Expected<std::uint64_t> unsignedOf(std::size_t size, char const* what) {
        KILN_RETURN_IF_ERROR(need(size, what));
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < size; ++i)
            value = value << 8 | static_cast<unsigned char>(bytes_[at_ + i]);
        at_ += size;
        return value;
    }
    Status take(std::string& out, std::size_t size, char const* what) {
        KILN_RETURN_IF_ERROR(need(size, what));
        out.assign(bytes_.substr(at_, size));
        at_ += size;
        return {};
    }
    static void setSigned(MsgPackValue& value, std::int64_t signedValue) {
        value.kind = MsgPackValue::Kind::Integer;
        value.negative = signedValue < 0;
        value.magnitude = value.negative ? ~static_cast<std::uint64_t>(signedValue) + 1
                                         : static_cast<std::uint64_t>(signedValue);
    }
    Status signedOf(MsgPackValue& value, std::size_t size) {
        KILN_ASSIGN_OR_RETURN(std::uint64_t const bits, unsignedOf(size, "an integer"));
        // Sign-extend from size * 8 bits.
        unsigned const shift = static_cast<unsigned>(64 - size * 8);
        setSigned(value, static_cast<std::int64_t>(bits << shift) >> shift);
        return {};
    }
    Status containerOf(MsgPackValue& value, std::uint64_t count, bool map, int depth) {
        // Each element takes at least one byte: a count beyond the bytes left is malformed, and
        // checking it first bounds the memory reserved.
        std::uint64_t const elements = map ? count * 2 : count;
        if (elements > bytes_.size() - at_) {
            return fail(std::string(map ? "a map" : "an array") + " before byte " +
                        std::to_string(at_) + " claims " + std::to_string(count) +
                        (map ? " entries" : " items") + " but " +
                        std::to_string(bytes_.size() - at_) + " bytes are left");
        }
        if (map) {
            value.kind = MsgPackValue::Kind::Map;
            value.keys.resize(count);
            value.items.resize(count);
            for (std::size_t i = 0; i < count; ++i) {
                KILN_RETURN_IF_ERROR(decode(value.keys[i], depth + 1));
                KILN_RETURN_IF_ERROR(decode(value.items[i], depth + 1));
            }
        } else {
            value.kind = MsgPackValue::Kind::Array;
            value.items.resize(count);
            for (MsgPackValue& item : value.items)
                KILN_RETURN_IF_ERROR(decode(item, depth + 1));
        }
        return {};
    }
    Status extensionOf(MsgPackValue& value, std::size_t size) {
        KILN_ASSIGN_OR_RETURN(std::uint64_t const type, unsignedOf(1, "an extension type"));
        value.kind = MsgPackValue::Kind::Extension;
        value.extensionType = static_cast<std::int8_t>(static_cast<std::uint8_t>(type));
        return take(value.bytes, size, "an extension");
    }

    Status decode(MsgPackValue& value, int depth) {
        if (depth > kMaxDepth)
            return fail("nesting deeper than " + std::to_string(kMaxDepth) + " at byte " +
                        std::to_string(at_));
        KILN_RETURN_IF_ERROR(need(1, "a value"));
        std::size_t const start = at_;
        auto const tag = static_cast<unsigned char>(bytes_[at_++]);
        using Kind = MsgPackValue::Kind;
        if (tag <= 0x7f) { // positive fixint
            value.kind = Kind::Integer;
            value.magnitude = tag;
            return {};
        }
        if (tag >= 0xe0) { // negative fixint
            setSigned(value, static_cast<std::int8_t>(tag));
            return {};
        }
        if (tag >= 0x80 && tag <= 0x8f)
            return containerOf(value, tag & 0x0fu, true, depth);
        if (tag >= 0x90 && tag <= 0x9f)
            return containerOf(value, tag & 0x0fu, false, depth);
        if (tag >= 0xa0 && tag <= 0xbf) {
            value.kind = Kind::String;
            return take(value.bytes, tag & 0x1fu, "a string");
        }
        switch (tag) {
        case 0xc0:
            value.kind = Kind::Nil;
            return {};
        case 0xc2:
        case 0xc3:
            value.kind = Kind::Boolean;
            value.boolean = tag == 0xc3;
            return {};
        case 0xc4:
        case 0xc5:
        case 0xc6: {
            KILN_ASSIGN_OR_RETURN(std::uint64_t const size,
                                  unsignedOf(std::size_t{1} << (tag - 0xc4), "a binary length"));
            value.kind = Kind::Binary;
            return take(value.bytes, size, "a binary");
        }
        case 0xc7:
        case 0xc8:
        case 0xc9: {
            KILN_ASSIGN_OR_RETURN(
                std::uint64_t const size,
                unsignedOf(std::size_t{1} << (tag - 0xc7), "an extension length"));
            return extensionOf(value, size);
        }
        case 0xca: {
            KILN_ASSIGN_OR_RETURN(std::uint64_t const bits, unsignedOf(4, "a float"));
            value.kind = Kind::Float;
            value.real = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
            return {};
        }
        case 0xcb: {
            KILN_ASSIGN_OR_RETURN(std::uint64_t const bits, unsignedOf(8, "a double"));
            value.kind = Kind::Float;
            value.real = std::bit_cast<double>(bits);
            return {};
        }
        case 0xcc:
        case 0xcd:
        case 0xce:
        case 0xcf: {
            KILN_ASSIGN_OR_RETURN(value.magnitude,
                                  unsignedOf(std::size_t{1} << (tag - 0xcc), "an integer"));
            value.kind = Kind::Integer;
            return {};
        }
        case 0xd0:
        case 0xd1:
        case 0xd2:
        case 0xd3:
            return signedOf(value, std::size_t{1} << (tag - 0xd0));
        case 0xd4:
        case 0xd5:
        case 0xd6:
        case 0xd7:
        case 0xd8:
            return extensionOf(value, std::size_t{1} << (tag - 0xd4));
        case 0xd9:
        case 0xda:
        case 0xdb: {
            KILN_ASSIGN_OR_RETURN(std::uint64_t const size,
                                  unsignedOf(std::size_t{1} << (tag - 0xd9), "a string length"));
            value.kind = Kind::String;
            return take(value.bytes, size, "a string");
        }
        case 0xdc:
        case 0xdd: {
            KILN_ASSIGN_OR_RETURN(std::uint64_t const count,
                                  unsignedOf(tag == 0xdc ? 2 : 4, "an array length"));
            return containerOf(value, count, false, depth);
        }
        case 0xde:
        case 0xdf: {
            KILN_ASSIGN_OR_RETURN(std::uint64_t const count,
                                  unsignedOf(tag == 0xde ? 2 : 4, "a map length"));
            return containerOf(value, count, true, depth);
        }
        default: // 0xc1 is never used
            return fail("byte " + std::to_string(start) + " is 0xc1, which is not a type");
        }
    }
};

} // namespace

MsgPackValue const* MsgPackValue::find(std::string_view key) const {
    if (kind != Kind::Map)
        return nullptr;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].kind == Kind::String && keys[i].bytes == key)
            return &items[i];
    }
    return nullptr;
}

std::optional<std::uint64_t> MsgPackValue::asUnsigned() const {
    if (kind != Kind::Integer || negative)
        return std::nullopt;
    return magnitude;
}

std::optional<std::string> MsgPackValue::asString() const {
    if (kind != Kind::String)
        return std::nullopt;
    return bytes;
}

std::string_view MsgPackValue::kindName() const {
    switch (kind) {
    case Kind::Nil:
        return "nil";
    case Kind::Boolean:
        return "a boolean";
    case Kind::Integer:
        return "an integer";
    case Kind::Float:
        return "a float";
    case Kind::String:
        return "a string";
    case Kind::Binary:
        return "a binary";
    case Kind::Array:
        return "an array";
    case Kind::Map:
        return "a map";
    case Kind::Extension:
        return "an extension";
    }
    return "unknown";
}

Expected<MsgPackValue> decodeMsgPack(std::string_view bytes) {
    return Decoder(bytes).decodeAll();
}

} // namespace kiln::runtime::amd
