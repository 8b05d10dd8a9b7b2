#include "jobguard/cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool jg_read_file(const char *path, size_t max, jg_buf *out, char *err, size_t errlen) {
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = true;
    char chunk[65536];
    for (;;) {
        size_t n = fread(chunk, 1, sizeof chunk, f);
        if (n) {
            if (out->len + n > max) {
                snprintf(err, errlen, "%s: larger than the %zu-byte limit",
                         is_stdin ? "stdin" : path, max);
                ok = false;
                break;
            }
            jg_buf_put(out, chunk, n);
        }
        if (n < sizeof chunk) {
            if (ferror(f)) {
                snprintf(err, errlen, "%s: %s", is_stdin ? "stdin" : path, strerror(errno));
                ok = false;
            }
            break;
        }
    }
    if (ok && out->oom) {
        snprintf(err, errlen, "%s: out of memory", path);
        ok = false;
    }
    if (ok && !out->data) jg_buf_put(out, "", 0); /* an empty file still yields a valid pointer */
    if (!is_stdin) fclose(f);
    return ok;
}
