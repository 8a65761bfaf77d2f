# The peak probes' loops as the compiler built them (cmake -P; OBJDUMP and LIB are passed in).
# A probe counts N instructions per iteration; if the compiler can prove that two of its
# accumulators always hold the same value it computes one chain and the probe reports a
# latency-bound loop as N times its work (GCC 12 did this to the VDPBF16PS, VPDPBUSD, FP16 and SVE
# probes while their accumulators started equal). Each probe's function must hold at least N of
# its instruction. A probe this build does not have (another ISA) is not in the library and is
# skipped; no objdump, or one that cannot disassemble a single function, skips the whole test.
if(NOT OBJDUMP OR NOT EXISTS "${OBJDUMP}")
  message("SKIP: no objdump for this toolchain")
  return()
endif()

# function | regular expression for the instruction | instructions per iteration
set(probes
  "ffn__peak_fp32_avx2|vfmadd[0-9]+ps|12"
  "ffn__peak_fp32_avx512|vfmadd[0-9]+ps|16"
  "ffn__peak_bf16_avx512|vdpbf16ps|16"
  "ffn__peak_fp16_avx512|vfmadd[0-9]+ph|16"
  "ffn__peak_int8_vnni|vpdpbusd|16"
  "ffn__peak_int8_avx_vnni|vpdpbusd|12"
  "ffn__peak_int8_avx2|vpmaddubsw|8"
  "ffn__peak_bf16_amx|tdpbf16ps|4"
  "ffn__peak_int8_amx|tdpbssd|4"
  "ffn__peak_fp32_neon|fmla|16"
  "ffn__peak_fp16_neon|fmla|16"
  "ffn__peak_int8_neon_sdot|sdot|16"
  "ffn__peak_int8_neon_i8mm|smmla|16"
  "ffn__peak_fp32_sve|fmla|16"
  "ffn__peak_int8_sve_sdot|sdot|16")

set(checked 0)
set(failed "")
foreach(p ${probes})
  string(REPLACE "|" ";" f "${p}")
  list(GET f 0 fn)
  list(GET f 1 re)
  list(GET f 2 want)
  execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "--disassemble=${fn}" "${LIB}"
                  OUTPUT_VARIABLE dis ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message("SKIP: ${OBJDUMP} --disassemble=${fn} failed: ${err}")
    return()
  endif()
  if(NOT dis MATCHES "<${fn}>:")
    continue() # not built for this ISA
  endif()
  string(REGEX MATCHALL "[\t ]${re}[\t ]" hits "${dis}")
  list(LENGTH hits n)
  math(EXPR checked "${checked} + 1")
  if(n LESS want)
    string(APPEND failed "  ${fn}: ${n} ${re} in the function, its FLOP count assumes ${want} per iteration\n")
  else()
    message("${fn}: ${n} ${re} (>= ${want})")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "peak probes whose chains the compiler merged:\n${failed}")
endif()
if(checked EQUAL 0)
  message("SKIP: no vector peak probe in ${LIB}")
endif()
