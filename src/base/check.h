// Throwing helpers: ONYX_THROW(code, pieces...) and ONYX_CHECK(cond, code, pieces...).
#pragma once

#include "base/str_cat.h"
#include "onyx/error.h"

#define ONYX_THROW(code, ...) throw ::onyx::Error(::onyx::ErrorCode::code, ::onyx::StrCat(__VA_ARGS__))

#define ONYX_CHECK(cond, code, ...) \
  do {                              \
    if (!(cond)) ONYX_THROW(code, __VA_ARGS__); \
  } while (0)
