// ErrorTest.cpp: messages that echo the user's input print it readably, whatever its bytes.
#include "kiln/graph/Error.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Error, ValidUtf8IsPrintedAsItIs) {
    EXPECT_EQ(printable("Ωmega ÿñé 𝛼"), "Ωmega ÿñé 𝛼");
    EXPECT_EQ(printable("plain"), "plain");
}

TEST(Error, BrokenBytesAndControlCharactersAreEscaped) {
    EXPECT_EQ(printable("ax\xC3"), "ax\\xC3");                  // a character cut short
    EXPECT_EQ(printable("v\xE2\x82rsion"), "v\\xE2\\x82rsion"); // two bytes of three
    EXPECT_EQ(printable("\xC0\xAF"), "\\xC0\\xAF");             // an overlong '/'
    EXPECT_EQ(printable("\xED\xA0\x80"), "\\xED\\xA0\\x80");    // a surrogate
    EXPECT_EQ(printable("bell\a, escape\x1B"), "bell\\x07, escape\\x1B");
    EXPECT_EQ(printable("two\n\tlines"), "two\n\tlines"); // messages may span lines
    EXPECT_EQ(printable(printable("ax\xC3")), "ax\\xC3"); // escaping twice changes nothing
}

TEST(Error, AUserErrorEscapesItsMessageAndPointer) {
    UserError const e("unknown field 'v\xE2\x82'", {"f.json", 3, 4, "/v\xE2\x82"});
    EXPECT_STREQ(e.what(), "f.json:3:4: error: unknown field 'v\\xE2\\x82' [at /v\\xE2\\x82]");
    EXPECT_EQ(e.message(), "unknown field 'v\\xE2\\x82'");
}

TEST(Error, CharacterAtTakesTheWholeCharacter) {
    EXPECT_EQ(characterAt("a + ÿ", 4), "ÿ");
    EXPECT_EQ(characterAt("a + \xC3", 4), "\xC3");
    EXPECT_EQ(characterAt("ab", 1), "b");
    EXPECT_EQ(characterAt("ab", 2), "");
}

} // namespace
} // namespace kiln
