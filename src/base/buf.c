#include "jobguard/buf.h"

#include "jobguard/alloc.h"
#include "jobguard/utf8.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char hexdigits[] = "0123456789abcdef";

void jg_buf_free(jg_buf *b) {
    jg_free(b->data);
    *b = (jg_buf)JG_BUF_INIT;
}

void jg_buf_reset(jg_buf *b) {
    b->len = 0;
    b->oom = false;
    if (b->data) b->data[0] = '\0';
}

bool jg_buf_reserve(jg_buf *b, size_t extra) {
    if (b->oom) return false;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = jg_realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void jg_buf_put(jg_buf *b, const char *s, size_t n) {
    if (!jg_buf_reserve(b, n)) return;
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void jg_buf_puts(jg_buf *b, const char *s) {
    jg_buf_put(b, s, strlen(s));
}

void jg_buf_putc(jg_buf *b, char c) {
    jg_buf_put(b, &c, 1);
}

void jg_buf_printf(jg_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !jg_buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void jg_buf_put_i64(jg_buf *b, int64_t v) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    jg_buf_put(b, tmp, (size_t)n);
}

/* Go's unicode.IsPrint for non-ASCII runes: letters, marks, numbers, punctuation and symbols.
 * Approximated by excluding the categories that are never printable (C1 controls, non-ASCII
 * spaces, line/paragraph separators, the common format characters, private use and
 * noncharacters); unassigned code points are treated as printable. */
static bool go_is_print_nonascii(uint32_t r) {
    if (r <= 0x9F) return false;                /* C1 controls */
    if (r == 0xA0 || r == 0xAD) return false;   /* NBSP (Zs), soft hyphen (Cf) */
    if (r >= 0x600 && r <= 0x605) return false; /* Arabic number signs (Cf) */
    if (r == 0x61C || r == 0x6DD || r == 0x70F) return false;
    if (r == 0x1680 || r == 0x180E) return false;
    if (r >= 0x2000 && r <= 0x200F) return false; /* spaces, ZW*, LRM/RLM */
    if (r >= 0x2028 && r <= 0x202F) return false; /* LS, PS, bidi embeddings, NNBSP */
    if (r >= 0x205F && r <= 0x206F) return false; /* MMSP, invisible operators, bidi */
    if (r == 0x3000 || r == 0xFEFF) return false;
    if (r >= 0xE000 && r <= 0xF8FF) return false;   /* private use */
    if (r >= 0xFDD0 && r <= 0xFDEF) return false;   /* noncharacters */
    if (r >= 0xFFF9 && r <= 0xFFFB) return false;   /* interlinear annotation (Cf) */
    if ((r & 0xFFFE) == 0xFFFE) return false;       /* U+xxFFFE, U+xxFFFF */
    if (r >= 0xE0000 && r <= 0xE007F) return false; /* tags (Cf) */
    if (r >= 0xF0000) return false;                 /* supplementary private use */
    return true;
}

/* The one-letter escape of a control character: \b \f \n \r \t in both Go %q and JSON, plus
 * \a and \v in Go. 0 when there is none. */
static char short_escape(uint32_t r, bool go) {
    switch (r) {
    case '\b':
        return 'b';
    case '\f':
        return 'f';
    case '\n':
        return 'n';
    case '\r':
        return 'r';
    case '\t':
        return 't';
    case '\a':
        return go ? 'a' : 0;
    case '\v':
        return go ? 'v' : 0;
    }
    return 0;
}

void jg_buf_go_quote(jg_buf *b, const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    if (!jg_buf_reserve(b, n + 2)) return;
    jg_buf_putc(b, '"');
    size_t i = 0;
    while (i < n) {
        /* Copy the longest run that needs no escaping in one go. */
        size_t j = i;
        while (j < n && s[j] >= 0x20 && s[j] < 0x7F && s[j] != '"' && s[j] != '\\')
            j++;
        if (j > i) {
            jg_buf_put(b, str + i, j - i);
            i = j;
            continue;
        }
        uint32_t r;
        size_t w = jg_utf8_decode(s + i, n - i, &r);
        if (w == 0) {
            char e[4] = {'\\', 'x', hexdigits[s[i] >> 4], hexdigits[s[i] & 15]};
            jg_buf_put(b, e, 4);
            i++;
            continue;
        }
        if (r == '"' || r == '\\') {
            char e[2] = {'\\', (char)r};
            jg_buf_put(b, e, 2);
        } else if (r >= 0x80 && go_is_print_nonascii(r)) {
            jg_buf_put(b, str + i, w);
        } else {
            char e = short_escape(r, true);
            if (e) {
                char esc[2] = {'\\', e};
                jg_buf_put(b, esc, 2);
            } else if (r < 0x20 || r == 0x7F) {
                char x[4] = {'\\', 'x', hexdigits[r >> 4], hexdigits[r & 15]};
                jg_buf_put(b, x, 4);
            } else if (r < 0x10000) {
                jg_buf_printf(b, "\\u%04x", (unsigned)r);
            } else {
                jg_buf_printf(b, "\\U%08x", (unsigned)r);
            }
        }
        i += w;
    }
    jg_buf_putc(b, '"');
}

void jg_buf_json_string(jg_buf *b, const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    if (!jg_buf_reserve(b, n + 2)) return;
    jg_buf_putc(b, '"');
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\' && s[j] != '<' &&
               s[j] != '>' && s[j] != '&')
            j++;
        if (j > i) {
            jg_buf_put(b, str + i, j - i);
            i = j;
            continue;
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            char e = c == '"' || c == '\\' ? (char)c : short_escape(c, false);
            if (e) {
                char esc[2] = {'\\', e};
                jg_buf_put(b, esc, 2);
            } else {
                char u[6] = {'\\', 'u', '0', '0', hexdigits[c >> 4], hexdigits[c & 15]};
                jg_buf_put(b, u, 6);
            }
            i++;
            continue;
        }
        uint32_t r;
        size_t w = jg_utf8_decode(s + i, n - i, &r);
        if (w == 0) {
            jg_buf_put_lit(b, "\\ufffd");
            i++;
        } else if (r == 0x2028 || r == 0x2029) {
            jg_buf_printf(b, "\\u%04x", (unsigned)r);
            i += w;
        } else {
            jg_buf_put(b, str + i, w);
            i += w;
        }
    }
    jg_buf_putc(b, '"');
}

void jg_buf_put_truncated(jg_buf *b, size_t n, const char *unit) {
    jg_buf_printf(b, "[truncated %zu %s%s]", n, unit, n == 1 ? "" : "s");
}

/* Ends dst[0..len), the first bytes of a text of `full` bytes, with the marker within cap. */
static size_t mark_cut(char *dst, size_t cap, size_t len, size_t full) {
    char marker[48];
    /* the longest marker, for N = full; a shorter cut only shortens N */
    int m = snprintf(marker, sizeof marker, " [truncated %zu bytes]", full);
    size_t room = cap - 1 > (size_t)m ? cap - 1 - (size_t)m : 0;
    size_t k = len > room ? jg_utf8_cut(dst, len, room) : len;
    m = snprintf(marker, sizeof marker, " [truncated %zu bytes]", full - k);
    size_t w = k + (size_t)m < cap - 1 ? (size_t)m : cap - 1 - k;
    memcpy(dst + k, marker, w);
    dst[k + w] = '\0';
    return k + w;
}

size_t jg_copy_cut(char *dst, size_t cap, const char *s, size_t n) {
    if (cap == 0) return 0;
    if (n < cap) {
        if (n) memcpy(dst, s, n);
        dst[n] = '\0';
        return n;
    }
    memcpy(dst, s, cap - 1);
    return mark_cut(dst, cap, cap - 1, n);
}

void jg_vformat_cut(char *dst, size_t cap, const char *fmt, va_list ap) {
    if (cap == 0) return;
    int n = vsnprintf(dst, cap, fmt, ap);
    if (n < 0) {
        dst[0] = '\0';
        return;
    }
    if ((size_t)n >= cap) mark_cut(dst, cap, cap - 1, (size_t)n);
}

void jg_format_cut(char *dst, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    jg_vformat_cut(dst, cap, fmt, ap);
    va_end(ap);
}
