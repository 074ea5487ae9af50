# Cross-compiles duet for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu; the results run
# here under qemu-user (qemu-aarch64 with QEMU_LD_PREFIX=/usr/aarch64-linux-gnu). With
# -DDUET_CORE_ONLY=ON nothing needs arm64 copies of libraries: GoogleTest is built from
# /usr/src/googletest, and the JSON library is the host's headers. scripts/test --arm64 runs it:
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#     -DDUET_CORE_ONLY=ON && cmake --build build-arm64 --target duet_core_tests
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# How CMake (gtest_discover_tests, ctest) runs the test binaries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
