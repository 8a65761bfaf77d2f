# The NEON kernel sources and their compile options, included by kernels/CMakeLists.txt on
# AArch64 and by the standalone cross test project tests/neon/CMakeLists.txt.
# Only base ARMv8.0-A Advanced SIMD is used (fp16 is a storage format, widened with FCVTL), so
# the objects run on every AArch64 CPU; the options go on these sources only.
set(FFN_NEON_SOURCES "${CMAKE_CURRENT_LIST_DIR}/ffn_dense_neon.c")
set(FFN_NEON_FLAGS -march=armv8-a)
set(FFN_NEON_COMPILE_OPTIONS ${FFN_NEON_FLAGS})
