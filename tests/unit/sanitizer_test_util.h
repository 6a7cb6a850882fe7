// Whether this test binary is built with AddressSanitizer (the sanitize preset): tests whose
// measurements ASan changes (the arena's mapped pages: its backing takes every block from
// malloc) say so and skip them.
#pragma once

namespace onyx::test {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

}  // namespace onyx::test
