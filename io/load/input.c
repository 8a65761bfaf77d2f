/* Input files read whole, within the limits of include/ffnroof/limits.h (io/load/input.h). */
#include "input.h"

#include "ffnroof/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ffn__input_read(const char *path, ffn_input *in, ffn_diag *diag)
{
    in->data = NULL;
    in->len = 0;
    if (!path || !*path) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no file given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "is a directory, not a file");
        goto out;
    }
    if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > FFN_MAX_INPUT_BYTES) {
        rc = ffn_diag_set(diag, FFN_ERANGE, path, 0, 0,
                          "the file is larger than the limit of %u MiB (%lld bytes)",
                          FFN_MAX_INPUT_BYTES >> 20, (long long)st.st_size);
        goto out;
    }
    /* A regular file is read at its size; a pipe or device grows the buffer up to the limit. */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    for (;;) {
        if (!in->data || in->len + 1 >= cap) {
            if (in->data) cap *= 2;
            if (cap > (size_t)FFN_MAX_INPUT_BYTES + 2) cap = (size_t)FFN_MAX_INPUT_BYTES + 2;
            char *p = realloc(in->data, cap);
            if (!p) {
                rc = ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory reading the file");
                goto out;
            }
            in->data = p;
        }
        ssize_t got = read(fd, in->data + in->len, cap - 1 - in->len);
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot read: %s",
                              errno == EISDIR ? "is a directory, not a file" : strerror(errno));
            goto out;
        }
        if (got == 0) break;
        in->len += (size_t)got;
        if (in->len > FFN_MAX_INPUT_BYTES) {
            rc = ffn_diag_set(diag, FFN_ERANGE, path, 0, 0,
                              "the file is larger than the limit of %u MiB",
                              FFN_MAX_INPUT_BYTES >> 20);
            goto out;
        }
    }
    if (!in->data && !(in->data = malloc(1))) {
        rc = ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory reading the file");
        goto out;
    }
    in->data[in->len] = '\0';
out:
    close(fd);
    if (rc) ffn__input_free(in);
    return rc;
}

void ffn__input_free(ffn_input *in)
{
    free(in->data);
    in->data = NULL;
    in->len = 0;
}

void ffn__input_pos(const ffn_input *in, size_t offset, int *line, int *col)
{
    int l = 1, c = 1;
    const unsigned char *s = (const unsigned char *)in->data;
    if (offset > in->len) offset = in->len;
    for (size_t i = 0; i < offset; i++) {
        if (s[i] == '\n' || (s[i] == '\r' && (i + 1 >= in->len || s[i + 1] != '\n'))) {
            l++;
            c = 1;
        } else if (s[i] != '\r' && (s[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

int ffn__input_text(const ffn_input *in, const char *path, size_t *start, ffn_diag *diag)
{
    *start = in->len >= 3 && !memcmp(in->data, "\xEF\xBB\xBF", 3) ? 3 : 0;
    const char *nul = memchr(in->data, '\0', in->len);
    if (nul) {
        int l, c;
        ffn__input_pos(in, (size_t)(nul - in->data), &l, &c);
        return ffn_diag_set(diag, FFN_EPARSE, path, l, c, "NUL byte in a text file");
    }
    return 0;
}

bool ffn__input_line(ffn_input *in, size_t *off, char **line)
{
    if (*off >= in->len) return false;
    char *s = in->data + *off;
    char *nl = memchr(s, '\n', in->len - *off);
    size_t n = nl ? (size_t)(nl - s) : in->len - *off;
    *off += n + (nl ? 1 : 0);
    if (n && s[n - 1] == '\r') n--;
    s[n] = '\0';
    *line = s;
    return true;
}

int ffn__input_fields(char *line, char **f, int cap, int *nf, const char *path, int lineno,
                      ffn_diag *diag)
{
    *nf = 0;
    for (char *t = line;; (*nf)++) {
        char *comma = strchr(t, ',');
        if (*nf < cap) f[*nf] = t;
        if (comma) *comma = '\0';
        if (!*t)
            return ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, (int)(t - line) + 1,
                                "empty field (column %d)", *nf + 1);
        if (!comma) {
            (*nf)++;
            return 0;
        }
        t = comma + 1;
    }
}
