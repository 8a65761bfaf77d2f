# Cross toolchain for AArch64 Linux with Debian's gcc-aarch64-linux-gnu (sysroot
# /usr/aarch64-linux-gnu from libc6-dev-arm64-cross), target libraries from Debian's arm64
# multiarch packages (/usr/lib/aarch64-linux-gnu) and, optionally, one more root of extracted
# arm64 packages (FFN_CROSS_ROOT: Criterion, whose arm64 -dev package cannot be installed next
# to the amd64 one; .ci/aarch64.sh fills it). Test binaries run under qemu-user:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# CMAKE_CROSSCOMPILING_EMULATOR lets CTest run them through qemu-aarch64 transparently; the CPU
# qemu emulates comes from the environment (QEMU_CPU, e.g. "max,sve-default-vector-length=32").
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(FFN_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "Prefix of the cross tools")
set(FFN_CROSS_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "Target libraries (qemu -L)")
if(NOT DEFINED FFN_CROSS_ROOT AND DEFINED ENV{FFNROOF_AARCH64_ROOT})
  set(FFN_CROSS_ROOT "$ENV{FFNROOF_AARCH64_ROOT}")
endif()
set(FFN_CROSS_ROOT "${FFN_CROSS_ROOT}" CACHE PATH
    "Extra root of extracted arm64 packages (its usr/lib/aarch64-linux-gnu), or empty")
# try_compile projects read this file again, in the same process: without these they would
# reset PKG_CONFIG_LIBDIR below to a value without FFN_CROSS_ROOT.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FFN_CROSS_PREFIX FFN_CROSS_SYSROOT FFN_CROSS_ROOT)

set(CMAKE_C_COMPILER ${FFN_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${FFN_CROSS_PREFIX}g++)

set(CMAKE_FIND_ROOT_PATH ${FFN_CROSS_SYSROOT} ${FFN_CROSS_ROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(_ffn_pc "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(_ffn_qemu_root ${FFN_CROSS_SYSROOT})
if(FFN_CROSS_ROOT)
  set(_ffn_pc "${FFN_CROSS_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${_ffn_pc}")
  # The libraries the extra root's libraries need from it (libnanomsg for libcriterion).
  set(CMAKE_EXE_LINKER_FLAGS_INIT
      "-Wl,-rpath-link,${FFN_CROSS_ROOT}/usr/lib/aarch64-linux-gnu")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")
  # qemu looks up every path the guest opens under -L first and falls back to the host's own
  # path, so the extra root's libraries are found, and libc/ld.so come from libc6:arm64.
  set(_ffn_qemu_root ${FFN_CROSS_ROOT})
endif()

find_program(FFN_QEMU_AARCH64 qemu-aarch64)
if(FFN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FFN_QEMU_AARCH64} -L ${_ffn_qemu_root})
endif()

# pkg-config must see the target's .pc files (Debian multiarch arm64 packages), not the host's:
# otherwise optional dependencies such as OpenBLAS are "found" for the wrong architecture.
set(ENV{PKG_CONFIG_LIBDIR} "${_ffn_pc}")
set(ENV{PKG_CONFIG_PATH} "")
