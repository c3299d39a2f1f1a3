// Catch2 v2 main for the native tests (one test_<area>.cpp per op or area beside this file).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
