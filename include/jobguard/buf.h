/* A growable byte buffer: every message and response is built here, once. Appends after an
 * allocation failure are no-ops and set `oom`, so callers check once at the end. */
#ifndef JOBGUARD_BUF_H
#define JOBGUARD_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* The length of a string literal, counted by the compiler ("" refuses anything but a literal). */
#define JG_LIT_LEN(lit) (sizeof("" lit) - 1)
/* Whether the n bytes at p are the string literal lit. */
#define JG_LIT_EQ(p, n, lit) ((n) == JG_LIT_LEN(lit) && memcmp((p), lit, JG_LIT_LEN(lit)) == 0)
/* Whether the n bytes at p start with the string literal lit. */
#define JG_LIT_PREFIX(p, n, lit) ((n) >= JG_LIT_LEN(lit) && memcmp((p), lit, JG_LIT_LEN(lit)) == 0)
/* Whether the NUL-terminated s starts with the string literal lit. */
#define JG_STARTS_WITH(s, lit) (strncmp((s), lit, JG_LIT_LEN(lit)) == 0)
/* The value of the macro x as a string literal: JG_STRINGIFY(MAX_DEPTH) is "512". */
#define JG_STRINGIFY(x) JG_STRINGIFY_(x)
#define JG_STRINGIFY_(x) #x
/* Appends the string literal lit. */
#define jg_buf_put_lit(b, lit) jg_buf_put((b), "" lit, JG_LIT_LEN(lit))

/* Go's strconv.Quote (fmt %q) of s, quotes included. */
void jg_buf_go_quote(jg_buf *b, const char *s, size_t n);

/* Go's encoding/json string encoding of s (HTML-safe: < > & as \u003c \u003e \u0026, U+2028/9
 * escaped, invalid UTF-8 as \ufffd), quotes included. Also what jobguard writes in its responses.
 */
void jg_buf_json_string(jg_buf *b, const char *s, size_t n);

/* Every cut jobguard makes to a value or a message ends in client-go's truncateBody marker,
 * naming its unit: `[truncated N bytes]` (or errors, items), N counting what was left out; the
 * cut itself is at a UTF-8 character boundary (docs/limits.md). */
void jg_buf_put_truncated(jg_buf *b, size_t n, const char *unit); /* "[truncated N units]" */

/* Fixed-size text (log fields, error messages): s[0..n) copied into dst (cap bytes, NUL
 * included); when it does not fit, its first bytes and ` [truncated N bytes]`. Returns the length
 * written. */
size_t jg_copy_cut(char *dst, size_t cap, const char *s, size_t n);
/* vsnprintf into dst with the same marker instead of a silent cut. */
void jg_vformat_cut(char *dst, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void jg_format_cut(char *dst, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
