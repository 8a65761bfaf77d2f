/* Scratch files and the rejection contract for the fuzz targets (fuzz/fuzz.h). */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *ffn_fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    static char path[256];
    static char made_for[16];
    if (!path[0] || strcmp(made_for, suffix)) {
        struct stat st;
        const char *dir = getenv("FFNROOF_FUZZ_DIR");
        if (!dir || !*dir)
            dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/ffnroof-fuzz-%ld%s", dir, (long)getpid(), suffix);
        snprintf(made_for, sizeof made_for, "%s", suffix);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    close(fd);
    return path;
}

void ffn_fuzz_check(int rc, const ffn_diag *d)
{
    if (rc == 0) return;
    if (rc > 0 || !d->msg[0] || d->line < 0 || d->col < 0 || (d->col > 0 && d->line == 0)) {
        fprintf(stderr, "broken rejection: rc %d at %d:%d '%s'\n", rc, d->line, d->col, d->msg);
        abort();
    }
}
