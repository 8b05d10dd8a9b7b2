/* decode/scan: the byte scanner (scan.h). Validates everything it passes over; materialises only
 * the strings a reader asks for. The bulk of a review is long plain strings, so plain_run looks at
 * 16 bytes at a time. */
#include "scan.h"

#include "jobguard/alloc.h"
#include "jobguard/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__) && !defined(JG_NO_SIMD)
#include <emmintrin.h>
#endif

/* ---- errors ---- */

status_t scan_fail(jg_decode_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = JG_DECODE_BAD_REQUEST;
    return JG_DECODE_BAD_REQUEST;
}

status_t scan_oom(jg_decode_error *err) {
    snprintf(err->message, sizeof err->message, "out of memory while decoding the request");
    err->status = JG_DECODE_NO_MEMORY;
    return JG_DECODE_NO_MEMORY;
}

/* A syntax error at the scanner's position, with 1-based line and column. */
status_t scan_syntax(struct scanner *sc, const char *what) {
    int line = 1;
    const char *line_start = sc->start;
    for (const char *q = sc->start; q < sc->p; q++)
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    const char *near = sc->p < sc->end ? "near byte " : "at end of input";
    char shown[16] = "";
    if (sc->p < sc->end) {
        unsigned char c = (unsigned char)*sc->p;
        if (c >= 0x20 && c < 0x7f && c != '\'')
            snprintf(shown, sizeof shown, "'%c'", c);
        else
            snprintf(shown, sizeof shown, "0x%02x", c);
    }
    return scan_fail(sc->err, "%s: invalid JSON at line %d, column %d (%s%s): %s", sc->what, line,
                     (int)(sc->p - line_start) + 1, near, shown, what);
}

bool scan_own(struct decoded *d, void *p) {
    if (!d) return false; /* a scanner without an owner cannot keep copies: reported as OOM */
    if (d->n_owned == d->cap_owned) {
        size_t cap = d->cap_owned ? d->cap_owned * 2 : 8;
        void **v = jg_realloc(d->owned, cap * sizeof *v);
        if (!v) return false;
        d->owned = v;
        d->cap_owned = cap;
    }
    d->owned[d->n_owned++] = p;
    return true;
}
/* ---- the scanner ---- */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool scan_hex4(const char *p, uint32_t *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return false;
        *v = *v << 4 | (uint32_t)h;
    }
    return true;
}

/* Bytes that end the fast path of a string: '"', '\\', controls, non-ASCII. */
static inline bool str_special(unsigned char c) {
    return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

/* Returns the first byte at or after p that is special (see str_special), or end. The bulk of a
 * review is long plain strings (managedFields, the last-applied annotation): 16 bytes at a time
 * with SSE2, else 8 with SWAR, then byte by byte. */
static const char *plain_run(const char *p, const char *end) {
#if defined(__SSE2__) && !defined(JG_NO_SIMD)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctrl = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl), ctrl));     /* v <= 0x1f */
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(hit, v)); /* | high bit set */
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
#else
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
        if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v) | v) & high) break;
        p += 8;
    }
#endif
    while (p < end && !str_special((unsigned char)*p))
        p++;
    return p;
}

/* scan_string_at for a string with an escape, a control byte or non-ASCII (or unterminated):
 * byte by byte from its opening quote. */
static __attribute__((noinline)) status_t string_slow(struct scanner *sc, jg_str *out,
                                                      bool *had_escape) {
    const char *s = ++sc->p; /* past '"' */
    bool escaped = false;
    for (;;) {
        sc->p = plain_run(sc->p, sc->end);
        if (sc->p >= sc->end) return scan_syntax(sc, "unterminated string");
        unsigned char c = (unsigned char)*sc->p;
        if (c == '"') break;
        if (c < 0x20) return scan_syntax(sc, "control character in a string (must be escaped)");
        if (c == '\\') {
            escaped = true;
            if (sc->end - sc->p < 2) return scan_syntax(sc, "unterminated string");
            char e = sc->p[1];
            if (e == 'u') {
                uint32_t u, lo;
                if (sc->end - sc->p < 6 || !scan_hex4(sc->p + 2, &u))
                    return scan_syntax(sc, "invalid \\u escape (4 hex digits expected)");
                sc->p += 6;
                if (u >= 0xDC00 && u <= 0xDFFF)
                    return scan_syntax(sc, "lone low surrogate in \\u escape");
                if (u >= 0xD800 && u <= 0xDBFF) {
                    if (sc->end - sc->p < 6 || sc->p[0] != '\\' || sc->p[1] != 'u' ||
                        !scan_hex4(sc->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return scan_syntax(sc, "high surrogate not followed by a low surrogate");
                    sc->p += 6;
                }
                continue;
            }
            switch (e) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                sc->p += 2;
                break;
            default:
                return scan_syntax(sc, "invalid escape in a string");
            }
            continue;
        }
        uint32_t r;
        size_t w = jg_utf8_decode((const unsigned char *)sc->p, (size_t)(sc->end - sc->p), &r);
        if (w == 0) return scan_syntax(sc, "invalid UTF-8 in a string");
        sc->p += w;
    }
    const char *e = sc->p++; /* past closing '"' */
    if (had_escape) *had_escape = escaped;
    if (!out) return JG_DECODE_OK;
    if (!escaped) {
        *out = (jg_str){s, (size_t)(e - s)};
        return JG_DECODE_OK;
    }
    /* Unescape (already validated); the result is never longer than the source. */
    char *buf = jg_malloc((size_t)(e - s) + 1);
    if (!buf || !scan_own(sc->d, buf)) {
        jg_free(buf);
        return scan_oom(sc->err);
    }
    size_t n = 0;
    for (const char *q = s; q < e;) {
        if (*q != '\\') {
            buf[n++] = *q++;
            continue;
        }
        char c = q[1];
        q += 2;
        switch (c) {
        case 'b':
            buf[n++] = '\b';
            break;
        case 'f':
            buf[n++] = '\f';
            break;
        case 'n':
            buf[n++] = '\n';
            break;
        case 'r':
            buf[n++] = '\r';
            break;
        case 't':
            buf[n++] = '\t';
            break;
        case 'u': {
            uint32_t u, lo;
            scan_hex4(q, &u);
            q += 4;
            if (u >= 0xD800 && u <= 0xDBFF) {
                scan_hex4(q + 2, &lo);
                q += 6;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (u < 0x80) {
                buf[n++] = (char)u;
            } else if (u < 0x800) {
                buf[n++] = (char)(0xC0 | u >> 6);
                buf[n++] = (char)(0x80 | (u & 0x3F));
            } else if (u < 0x10000) {
                buf[n++] = (char)(0xE0 | u >> 12);
                buf[n++] = (char)(0x80 | (u >> 6 & 0x3F));
                buf[n++] = (char)(0x80 | (u & 0x3F));
            } else {
                buf[n++] = (char)(0xF0 | u >> 18);
                buf[n++] = (char)(0x80 | (u >> 12 & 0x3F));
                buf[n++] = (char)(0x80 | (u >> 6 & 0x3F));
                buf[n++] = (char)(0x80 | (u & 0x3F));
            }
            break;
        }
        default:
            buf[n++] = c; /* " \ / */
        }
    }
    buf[n] = '\0';
    *out = (jg_str){buf, n};
    return JG_DECODE_OK;
}

/* Scans a string at the cursor (which is at '"'). With `out`, yields its value: a slice of the
 * body when it has no escapes, else an unescaped copy owned by the review. Most strings (keys,
 * names) are plain ASCII: one run to the closing quote, without string_slow's frame. */
static status_t scan_string_at(struct scanner *sc, jg_str *out, bool *had_escape) {
    const char *s = sc->p + 1, *e = plain_run(s, sc->end);
    if (__builtin_expect(e >= sc->end || *e != '"', 0)) return string_slow(sc, out, had_escape);
    sc->p = e + 1; /* past closing '"' */
    if (had_escape) *had_escape = false;
    if (out) *out = (jg_str){s, (size_t)(e - s)};
    return JG_DECODE_OK;
}

status_t scan_string(struct scanner *sc, jg_str *out) {
    return scan_string_at(sc, out, NULL);
}

/* A number per the JSON grammar. Integers that fit int64 are returned in *v. */
status_t scan_number(struct scanner *sc, enum num_kind *kind, int64_t *v) {
    bool neg = false;
    if (sc->p < sc->end && *sc->p == '-') {
        neg = true;
        sc->p++;
    }
    if (sc->p >= sc->end || *sc->p < '0' || *sc->p > '9') return scan_syntax(sc, "invalid number");
    uint64_t acc = 0;
    bool big = false;
    if (*sc->p == '0') {
        sc->p++;
        if (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
            return scan_syntax(sc, "invalid number (leading zero)");
    } else {
        while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9') {
            unsigned d = (unsigned)(*sc->p++ - '0');
            if (acc > (UINT64_MAX - d) / 10)
                big = true;
            else
                acc = acc * 10 + d;
        }
    }
    *kind = NUM_INT;
    if (sc->p < sc->end && *sc->p == '.') {
        sc->p++;
        if (sc->p >= sc->end || *sc->p < '0' || *sc->p > '9')
            return scan_syntax(sc, "invalid number (digit expected after '.')");
        while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
            sc->p++;
        *kind = NUM_REAL;
    }
    if (sc->p < sc->end && (*sc->p == 'e' || *sc->p == 'E')) {
        sc->p++;
        if (sc->p < sc->end && (*sc->p == '+' || *sc->p == '-')) sc->p++;
        if (sc->p >= sc->end || *sc->p < '0' || *sc->p > '9')
            return scan_syntax(sc, "invalid number (digit expected in exponent)");
        while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
            sc->p++;
        *kind = NUM_REAL;
    }
    if (*kind == NUM_INT) {
        if (big || acc > (uint64_t)INT64_MAX + neg)
            *kind = NUM_BIG_INT;
        else
            *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    }
    return JG_DECODE_OK;
}

status_t scan_enter(struct scanner *sc, struct agg *a) {
    if (++sc->depth > MAX_DEPTH) return scan_syntax(sc, "nesting deeper than 2048 levels");
    sc->p++; /* past the bracket */
    a->first = true;
    return JG_DECODE_OK;
}

/* The part objects and arrays share: the closing bracket (*more = 0), or the separator before
 * every member but the first (*more = 1). */
static status_t agg_next(struct scanner *sc, struct agg *a, char close, int *more) {
    ws(sc);
    if (sc->p < sc->end && *sc->p == close) {
        sc->p++;
        sc->depth--;
        *more = 0;
        return JG_DECODE_OK;
    }
    if (!a->first) {
        if (sc->p >= sc->end || *sc->p != ',')
            return scan_syntax(sc, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
        sc->p++;
        ws(sc);
    }
    a->first = false;
    *more = 1;
    return JG_DECODE_OK;
}

static inline const char *ws_at(const char *p, const char *end) {
    while (p < end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* agg_next and the key, with the cursor in a local (a member of every object the readers walk:
 * the hottest function of the byte scanner). The cursor is stored before every error. */
status_t scan_obj_next(struct scanner *sc, struct agg *a, jg_str *key, char *keybuf, int *more) {
    const char *p = ws_at(sc->p, sc->end), *end = sc->end;
    if (p < end && *p == '}') {
        sc->p = p + 1;
        sc->depth--;
        *more = 0;
        return JG_DECODE_OK;
    }
    if (!a->first) {
        if (p >= end || *p != ',') {
            sc->p = p;
            return scan_syntax(sc, "',' or '}' expected");
        }
        p = ws_at(p + 1, end);
    }
    a->first = false;
    *more = 1;
    if (p >= end || *p != '"') {
        sc->p = p;
        return scan_syntax(sc, "string key expected");
    }
    /* Keys are only compared: an escaped key (rare) is unescaped into keybuf, truncated, since
     * a long key cannot match any the decoder reads. */
    const char *ks = p + 1, *ke = plain_run(ks, end);
    bool escaped = false;
    if (__builtin_expect(ke < end && *ke == '"', 1)) { /* scan_string_at's fast path */
        p = ke + 1;
    } else {
        sc->p = p;
        TRY(string_slow(sc, NULL, &escaped));
        p = sc->p;
        ke = p - 1;
    }
    *key = (jg_str){ks, (size_t)(ke - ks)};
    if (escaped && keybuf) {
        size_t n = 0;
        const char *q = ks;
        while (q < ke && n < KEY_MAX - 4) {
            if (*q != '\\') {
                keybuf[n++] = *q++;
                continue;
            }
            if (q[1] == 'u') {
                uint32_t u;
                scan_hex4(q + 2, &u);
                q += 6;
                keybuf[n++] = u < 0x80 ? (char)u : '\x80'; /* non-ASCII never matches */
            } else {
                static const char from[] = "bfnrt\"\\/", to[] = "\b\f\n\r\t\"\\/";
                keybuf[n++] = to[strchr(from, q[1]) - from];
                q += 2;
            }
        }
        *key = (jg_str){keybuf, q < ke ? KEY_TOO_LONG : n};
    }
    p = ws_at(p, end);
    if (p >= end || *p != ':') {
        sc->p = p;
        return scan_syntax(sc, "':' expected after an object key");
    }
    sc->p = ws_at(p + 1, end);
    return JG_DECODE_OK;
}

status_t scan_arr_next(struct scanner *sc, struct agg *a, int *more) {
    return agg_next(sc, a, ']', more);
}

/* Validates and skips one value. Recursion is bounded by MAX_DEPTH. */
status_t scan_skip(struct scanner *sc) {
    ws(sc);
    if (sc->p >= sc->end) return scan_syntax(sc, "value expected");
    if (sc->ix) { /* validated already: containers and strings are skipped by the index */
        const char *to = *sc->p == '"'                    ? sindex_string_end(sc->ix, sc->p)
                         : *sc->p == '{' || *sc->p == '[' ? sindex_close(sc->ix, sc->p)
                                                          : NULL;
        if (to) {
            sc->p = to + 1;
            return JG_DECODE_OK;
        }
    }
    struct agg a;
    int more = 0;
    switch (*sc->p) {
    case '{': {
        TRY(scan_enter(sc, &a));
        jg_str key;
        for (;;) {
            TRY(scan_obj_next(sc, &a, &key, NULL, &more));
            if (!more) return JG_DECODE_OK;
            TRY(scan_skip(sc));
        }
    }
    case '[':
        TRY(scan_enter(sc, &a));
        for (;;) {
            TRY(scan_arr_next(sc, &a, &more));
            if (!more) return JG_DECODE_OK;
            TRY(scan_skip(sc));
        }
    case '"':
        return scan_string(sc, NULL);
    case 't':
        return literal(sc, "true", JG_LIT_LEN("true")) ? JG_DECODE_OK
                                                       : scan_syntax(sc, "invalid literal");
    case 'f':
        return literal(sc, "false", JG_LIT_LEN("false")) ? JG_DECODE_OK
                                                         : scan_syntax(sc, "invalid literal");
    case 'n':
        return literal(sc, "null", JG_LIT_LEN("null")) ? JG_DECODE_OK
                                                       : scan_syntax(sc, "invalid literal");
    default: {
        enum num_kind k = NUM_INT;
        int64_t v;
        return scan_number(sc, &k, &v);
    }
    }
}

/* Whether the whole input is one valid JSON value (used to give syntax errors precedence). */
status_t scan_validate(const char *body, size_t len, const char *what, jg_decode_error *err) {
    return scan_validate_at(body, len, what, err, scan_level_for(len));
}

status_t scan_validate_at(const char *body, size_t len, const char *what, jg_decode_error *err,
                          enum scan_level level) {
    struct sindex ix;
    if (sindex_build(&ix, body, len, level)) {
        sindex_free(&ix);
        return JG_DECODE_OK;
    }
    struct scanner sc = {body, body, body + len, 0, NULL, err, what, NULL};
    ws(&sc);
    if (sc.p >= sc.end) return scan_fail(err, "%s: empty input", what);
    TRY(scan_skip(&sc));
    ws(&sc);
    if (sc.p != sc.end) return scan_syntax(&sc, "end of input expected after the JSON value");
    return JG_DECODE_OK;
}

/* Field paths for messages ("request.object.status"): built on every member visited, so plain
 * copies rather than snprintf. Truncated to fit; real paths are far shorter. */
