/* Linked into every suite (tests/CMakeLists.txt). LeakSanitizer (FFNROOF_SANITIZE builds): PAPI
 * 7.0 and libsde keep their event tables until the process exits (strdup'd names inside
 * libpapi.so / libsde.so); those allocations are theirs, not ffnroof's. In a build without the
 * sanitizer nothing calls these. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpapi.so\nleak:libsde.so\n";
}
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}
