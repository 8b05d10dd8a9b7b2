/* A growable byte buffer: every message and response is built here, once. Appends after an
 * allocation failure are no-ops and set `oom`, so callers check once at the end. */
#ifndef JOBGUARD_BUF_H
#define JOBGUARD_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jg_buf {
    char *data; /* NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    bool oom;
} jg_buf;

#define JG_BUF_INIT                                                                                \
    { NULL, 0, 0, false }

void jg_buf_free(jg_buf *b);
void jg_buf_reset(jg_buf *b); /* keeps the allocation, clears content and oom */
bool jg_buf_reserve(jg_buf *b, size_t extra);
void jg_buf_put(jg_buf *b, const char *s, size_t n);
void jg_buf_puts(jg_buf *b, const char *s);
void jg_buf_putc(jg_buf *b, char c);
void jg_buf_printf(jg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jg_buf_put_i64(jg_buf *b, int64_t v);

/* Go's strconv.Quote (fmt %q) of s, quotes included. */
void jg_buf_go_quote(jg_buf *b, const char *s, size_t n);

/* Go's encoding/json string encoding of s (HTML-safe: < > & as \u003c \u003e \u0026, U+2028/9
 * escaped, invalid UTF-8 as \ufffd), quotes included. Also what jobguard writes in its responses.
 */
void jg_buf_json_string(jg_buf *b, const char *s, size_t n);

#endif
