// StatusTest.cpp: errors as values, and misuse of an Expected as the caller's bug.
#include "kiln/runtime/Status.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

Expected<int> half(int value) {
    if (value % 2 != 0)
        return Error(ErrorCode::InvalidArgument, std::to_string(value) + " is odd");
    return value / 2;
}

Expected<int> quarter(int value) {
    KILN_ASSIGN_OR_RETURN(int const once, half(value));
    KILN_ASSIGN_OR_RETURN(int const twice, half(once));
    return twice;
}

Status checkEven(int value) {
    KILN_RETURN_IF_ERROR(half(value).status());
    return {};
}

TEST(Status, ValuesAndErrorsPropagate) {
    EXPECT_EQ(*quarter(12), 3);
    Expected<int> odd = quarter(6);
    ASSERT_FALSE(odd.ok());
    EXPECT_EQ(odd.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(odd.error().message(), "3 is odd");
    EXPECT_TRUE(checkEven(4).ok());
    EXPECT_EQ(checkEven(5).message(), "5 is odd");
    EXPECT_EQ(Status().message(), "ok");
    EXPECT_EQ(odd.error().withContext("quarter(6)").message(), "quarter(6): 3 is odd");
    EXPECT_EQ(name(ErrorCode::JitFailed), "JitFailed");
}

TEST(Status, ReadingTheValueOfAnErrorThrows) {
    Expected<int> odd = half(3);
    try {
        (void)odd.value();
        FAIL() << "value() of an error returned";
    } catch (BadExpectedAccess const& error) {
        EXPECT_STREQ(error.what(), "value() of an Expected holding an error: 3 is odd");
    }
}

} // namespace
} // namespace kiln::runtime
