// Everything a user of Onyx includes.
#pragma once

#include "onyx/dtype.h"
#include "onyx/error.h"
#include "onyx/session.h"
#include "onyx/tensor.h"
#include "onyx/value.h"
