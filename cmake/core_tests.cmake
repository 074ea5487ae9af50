# duet_core_tests (DUET_CORE_ONLY): the CPU kernel, model and golden logits tests over the
# layers up to the model. It is what the AArch64 cross build runs under qemu (scripts/test
# --arm64), so it takes only what that needs: GoogleTest compiled from its sources when no
# GoogleTest for the target is installed (Debian's googletest package ships them), and the
# JSON library's headers, which are the same for every architecture, from the build host.
if(NOT DUET_TESTS)
  return()
endif()
enable_testing()
find_package(GTest QUIET)
if(NOT TARGET GTest::gtest_main)
  set(DUET_GTEST_SOURCE_DIR "/usr/src/googletest" CACHE PATH "GoogleTest's sources (Debian: googletest)")
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory("${DUET_GTEST_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL SYSTEM)
  if(NOT TARGET GTest::gtest_main)  # GoogleTest 1.11 and later define it themselves
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
endif()
# A folder holding only a link to nlohmann/: the host's /usr/include itself must not be on a
# cross compiler's include path (its C library headers are the host's).
find_path(DUET_JSON_INCLUDE_DIR nlohmann/json.hpp NO_CMAKE_FIND_ROOT_PATH REQUIRED)
set(DUET_JSON_ROOT "${CMAKE_BINARY_DIR}/include/json")
file(MAKE_DIRECTORY "${DUET_JSON_ROOT}")
file(CREATE_LINK "${DUET_JSON_INCLUDE_DIR}/nlohmann" "${DUET_JSON_ROOT}/nlohmann" SYMBOLIC)

set(DUET_CORE_TEST_SOURCES
  tests/unit/cpu_kernels_test.cc tests/unit/cpu_attention_test.cc tests/unit/cpu_fused_ops_test.cc
  tests/unit/ops_test.cc tests/unit/quant_test.cc tests/unit/half_test.cc
  tests/unit/thread_pool_test.cc
  tests/golden/golden_data_test.cc tests/golden/quant_blocks_golden_test.cc
  tests/golden/logits_golden_test.cc tests/golden/logits_cpu_golden_test.cc
  tests/support/test_paths.cc)
add_executable(duet_core_tests ${DUET_CORE_TEST_SOURCES})
target_link_libraries(duet_core_tests PRIVATE duet_model GTest::gtest_main)
target_include_directories(duet_core_tests PRIVATE tests)
target_include_directories(duet_core_tests SYSTEM PRIVATE "${DUET_JSON_ROOT}")
set_source_files_properties("${CMAKE_SOURCE_DIR}/tests/support/test_paths.cc" PROPERTIES
  COMPILE_DEFINITIONS "DUET_GOLDEN_DIR=\"${DUET_GOLDEN_DIR}\";DUET_DEFAULT_TOKENIZER_DIR=\"\"")
add_test(NAME duet_core_tests COMMAND duet_core_tests --gtest_brief=1)
