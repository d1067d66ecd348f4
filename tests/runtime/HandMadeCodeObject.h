// HandMadeCodeObject.h: AMD code objects built byte by byte for tests: MessagePack for metadata
// notes, ELF notes, and the smallest AMDGPU ELF that holds them. A test that builds its code
// object so runs with or without an AMDGCN assembler, and what it reads does not change with
// code generation or the assembler's version (CodeObjectTest.cpp, the exported C ABI's golden
// files in tests/cli).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

namespace kiln::runtime::test {

/// MessagePack, written by hand: enough of it to build metadata notes.
class Pack {
public:
    Pack& map(std::size_t entries) { return header(0x80, 0xde, entries); }
    Pack& array(std::size_t items) { return header(0x90, 0xdc, items); }
    Pack& text(std::string_view s) {
        if (s.size() < 32) {
            bytes_ += static_cast<char>(0xa0 | s.size());
        } else {
            bytes_ += '\xd9';
            bytes_ += static_cast<char>(s.size());
        }
        bytes_ += s;
        return *this;
    }
    Pack& number(std::uint64_t n) {
        if (n < 128)
            return raw({static_cast<unsigned char>(n)});
        if (n < 65536)
            return raw({0xcd, static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)});
        return raw({0xce, static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
                    static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)});
    }
    /// `key: value` where the value is a string or a number.
    Pack& entry(std::string_view key, std::string_view value) { return text(key).text(value); }
    Pack& entry(std::string_view key, std::uint64_t value) { return text(key).number(value); }
    Pack& raw(std::initializer_list<unsigned char> bytes) {
        for (unsigned char b : bytes)
            bytes_ += static_cast<char>(b);
        return *this;
    }
    std::string const& bytes() const { return bytes_; }

private:
    Pack& header(unsigned char fix, unsigned char wide, std::size_t n) {
        if (n < 16)
            return raw({static_cast<unsigned char>(fix | n)});
        return raw({wide, static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)});
    }
    std::string bytes_;
};

/// Writes `value` at byte `at` of `bytes` (little-endian, as the host).
template <class T>
void put(std::string& bytes, std::size_t at, T value) {
    std::memcpy(bytes.data() + at, &value, sizeof value);
}

/// One ELF note, padded to 4 bytes.
inline std::string note(std::string const& owner, std::uint32_t type,
                        std::string const& descriptor) {
    std::string out(12, '\0');
    put<std::uint32_t>(out, 0, static_cast<std::uint32_t>(owner.size() + 1));
    put<std::uint32_t>(out, 4, static_cast<std::uint32_t>(descriptor.size()));
    put<std::uint32_t>(out, 8, type);
    out += owner + '\0';
    out.resize((out.size() + 3) / 4 * 4, '\0');
    out += descriptor;
    out.resize((out.size() + 3) / 4 * 4, '\0');
    return out;
}

/// The smallest AMDGPU ELF: a header with `machine` in e_flags, `notes` in one SHT_NOTE section
/// and the section header table (the null section and the note section).
inline std::string codeObject(std::string const& notes, std::uint32_t machine = 0x3f) {
    std::string elf(64, '\0');
    elf.replace(0, 4,
                "\x7f"
                "ELF");
    elf[4] = 2;                       // ELFCLASS64
    elf[5] = 1;                       // ELFDATA2LSB
    elf[6] = 1;                       // EV_CURRENT
    elf[7] = 0x40;                    // ELFOSABI_AMDGPU_HSA
    put<std::uint16_t>(elf, 16, 3);   // ET_DYN
    put<std::uint16_t>(elf, 18, 224); // EM_AMDGPU
    put<std::uint32_t>(elf, 20, 1);
    put<std::uint32_t>(elf, 48, machine);
    put<std::uint16_t>(elf, 52, 64);
    elf += notes;
    elf.resize((elf.size() + 7) / 8 * 8, '\0');
    std::size_t const table = elf.size();
    elf.resize(table + 2 * 64, '\0');
    put<std::uint64_t>(elf, 40, table);
    put<std::uint16_t>(elf, 58, 64);
    put<std::uint16_t>(elf, 60, 2);
    std::size_t const section = table + 64;
    put<std::uint32_t>(elf, section + 4, 7); // SHT_NOTE
    put<std::uint64_t>(elf, section + 24, 64);
    put<std::uint64_t>(elf, section + 32, notes.size());
    put<std::uint64_t>(elf, section + 48, 4);
    return elf;
}

/// The AMDGPU metadata note (NT_AMDGPU_METADATA) holding `msgpack`.
inline std::string metadataNote(std::string const& msgpack) {
    return note("AMDGPU", 32, msgpack); // NT_AMDGPU_METADATA
}

} // namespace kiln::runtime::test
