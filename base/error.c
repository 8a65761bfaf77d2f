/* Error codes and the diagnostic struct (include/ffnroof/error.h). */
#include "ffnroof/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ffn_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define FFN_ERR_TEXT(name, code, text)                                                             \
    case FFN_E##name:                                                                              \
        return text;
        FFN_ERRNO_MAP(FFN_ERR_TEXT)
#undef FFN_ERR_TEXT
    default:
        return "unknown error";
    }
}

const char *ffn_err_name(int err)
{
    switch (err) {
    case 0:
        return "FFN_OK";
#define FFN_ERR_NAME(name, code, text)                                                             \
    case FFN_E##name:                                                                              \
        return "FFN_E" #name;
        FFN_ERRNO_MAP(FFN_ERR_NAME)
#undef FFN_ERR_NAME
    default:
        return "FFN_EUNKNOWN";
    }
}

void ffn_diag_clear(ffn_diag *d)
{
    if (d) memset(d, 0, sizeof *d);
}

int ffn_diag_set(ffn_diag *d, int err, const char *file, int line, int col, const char *fmt, ...)
{
    if (!d) return err;
    d->file[0] = '\0';
    if (file) snprintf(d->file, sizeof d->file, "%s", file);
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return err;
}

int ffn_diag_format(const ffn_diag *d, char *buf, size_t n)
{
    if (!d) return snprintf(buf, n, "%s", "");
    if (d->file[0] && d->line > 0 && d->col > 0)
        return snprintf(buf, n, "%s:%d:%d: %s", d->file, d->line, d->col, d->msg);
    if (d->file[0] && d->line > 0) return snprintf(buf, n, "%s:%d: %s", d->file, d->line, d->msg);
    if (d->file[0]) return snprintf(buf, n, "%s: %s", d->file, d->msg);
    return snprintf(buf, n, "%s", d->msg);
}
