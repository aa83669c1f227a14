// Every pollux header includes this one first, so that a translation unit
// compiled as C++17 or older stops at the first pollux header with one
// clear message instead of errors deep inside a library header.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "pollux needs C++20 (-std=c++20)"
#endif
