/* .ci/qemu-x86.sh's check that its shim works: a Criterion test that must see the emulated CPU
 * in its BoxFort worker, and a program of the build tree that it starts through /bin/sh
 * (system(), as the CLI tests start ffnroof) must see it too. Built twice: with PROBE_MAIN as
 * the plain program (exit 10 + the number of CPUID levels below it sees: 10 avx512f, 11 avx2
 * without avx512f, 12 neither), without it as the Criterion suite. The CPU's expected level is
 * FFNROOF_QEMU_PROBE_WANT (10, 11 or 12); the host CI runs on has AVX-512 (a worker that escaped
 * the emulation reads 10 where 11 or 12 is expected). */
#include <stdio.h>
#include <stdlib.h>

static int level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 10;
    return __builtin_cpu_supports("avx2") ? 11 : 12;
}

#if defined(PROBE_MAIN)
int main(void)
{
    return level();
}
#else
#include <criterion/criterion.h>

Test(qemu, worker_and_its_children_see_the_emulated_cpu)
{
    const char *want = getenv("FFNROOF_QEMU_PROBE_WANT"), *tree = getenv("FFNROOF_QEMU_TREE");
    cr_assert(want && tree, "FFNROOF_QEMU_PROBE_WANT and FFNROOF_QEMU_TREE must be set");
    cr_assert_eq(level(), atoi(want), "the Criterion worker runs natively, not under qemu");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/qemu_probe_exe'", tree);
    const int st = system(cmd);
    cr_assert(st != -1 && (st >> 8) == atoi(want), "a program started by sh saw level %d, not %s",
              st >> 8, want);
}
#endif
