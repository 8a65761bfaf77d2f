# Cross toolchain for AArch64 Linux with Debian's gcc-aarch64-linux-gnu (sysroot
# /usr/aarch64-linux-gnu from libc6-dev-arm64-cross). Test binaries run under qemu-user:
#   cmake -S tests/neon -B build-neon -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# CMAKE_CROSSCOMPILING_EMULATOR lets CTest run them through qemu-aarch64 transparently.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(FFN_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "Prefix of the cross tools")
set(FFN_CROSS_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "Target libraries (qemu -L)")

set(CMAKE_C_COMPILER ${FFN_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${FFN_CROSS_PREFIX}g++)

set(CMAKE_FIND_ROOT_PATH ${FFN_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(FFN_QEMU_AARCH64 qemu-aarch64)
if(FFN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FFN_QEMU_AARCH64} -L ${FFN_CROSS_SYSROOT})
endif()

# pkg-config must see the target's .pc files (Debian multiarch arm64 packages), not the host's:
# otherwise optional dependencies such as OpenBLAS are "found" for the wrong architecture.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
