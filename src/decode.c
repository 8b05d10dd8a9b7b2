/* decode: AdmissionReview JSON -> jg_review (docs/rules.md §9 field map). The only module that
 * reads request JSON.
 *
 * One strict, validating pass over the body (RFC 8259: grammar, UTF-8, escapes, numbers, nesting
 * depth, no trailing data) that materialises only what the rules read. Everything else
 * (managedFields, annotations, the pod template, ...) is validated and skipped without
 * allocating; strings without escapes are zero-copy slices of the body. See docs/decoder.md for
 * why: a whole-document tree costs more than the TLS connection that carries it.
 *
 * What kube-apiserver would do with bad input (see docs/server.md, "Bad input"): objects with wrong field
 * types, out-of-range integers or unparsable times fail its own decoding with 400 before any
 * webhook is called, so jobguard answers them with allowed:false and status.code 400 too.
 * JSON null is Go's nil/zero value and counts as absent, as in Go. Syntax errors take precedence
 * over every other complaint, then apiVersion/kind, then the first field problem. */
#include "jobguard/decode.h"

#include "jobguard/alloc.h"
#include "jobguard/policy.h"
#include "jobguard/targets.h"
#include "utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef enum jg_decode_status status_t;

/* Memory the view points into, besides the body: unescaped strings and uncounted UID arrays. */
struct decoded {
    void **owned;
    size_t n_owned, cap_owned;
};

struct scanner {
    const char *start, *p, *end;
    int depth;
    struct decoded *d; /* owner of unescaped strings; NULL when only validating */
    jg_decode_error *err;
    const char *what; /* names the input in syntax errors */
};

#define TRY(x)                                                                                     \
    do {                                                                                           \
        status_t s_ = (x);                                                                         \
        if (s_ != JG_DECODE_OK) return s_;                                                         \
    } while (0)

/* ---- errors ---- */

static status_t fail(jg_decode_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static status_t fail(jg_decode_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = JG_DECODE_BAD_REQUEST;
    return JG_DECODE_BAD_REQUEST;
}

static status_t fail_oom(jg_decode_error *err) {
    snprintf(err->message, sizeof err->message, "out of memory while decoding the request");
    err->status = JG_DECODE_NO_MEMORY;
    return JG_DECODE_NO_MEMORY;
}

/* A syntax error at the scanner's position, with 1-based line and column. */
static status_t syntax(struct scanner *sc, const char *what) {
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
    return fail(sc->err, "%s: invalid JSON at line %d, column %d (%s%s): %s", sc->what, line,
                (int)(sc->p - line_start) + 1, near, shown, what);
}

static bool own(struct decoded *d, void *p) {
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

/* Nesting limit, as jansson's JSON_PARSER_MAX_DEPTH: bounds the recursion of skip_value. */
#define MAX_DEPTH JG_MAX_JSON_DEPTH

static void ws(struct scanner *sc) {
    /* one comparison in the common case: compact JSON has no whitespace */
    while (sc->p < sc->end && (unsigned char)*sc->p <= ' ' &&
           (*sc->p == ' ' || *sc->p == '\n' || *sc->p == '\r' || *sc->p == '\t'))
        sc->p++;
}

static bool literal(struct scanner *sc, const char *lit, size_t n) {
    if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, lit, n) != 0) return false;
    sc->p += n;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex4(const char *p, uint32_t *v) {
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
#if defined(__SSE2__)
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

/* Scans a string at the cursor (which is at '"'). With `out`, yields its value: a slice of the
 * body when it has no escapes, else an unescaped copy owned by the review. */
static status_t string_at(struct scanner *sc, jg_str *out, bool *had_escape) {
    const char *s = ++sc->p; /* past '"' */
    bool escaped = false;
    for (;;) {
        sc->p = plain_run(sc->p, sc->end);
        if (sc->p >= sc->end) return syntax(sc, "unterminated string");
        unsigned char c = (unsigned char)*sc->p;
        if (c == '"') break;
        if (c < 0x20) return syntax(sc, "control character in a string (must be escaped)");
        if (c == '\\') {
            escaped = true;
            if (sc->end - sc->p < 2) return syntax(sc, "unterminated string");
            char e = sc->p[1];
            if (e == 'u') {
                uint32_t u, lo;
                if (sc->end - sc->p < 6 || !hex4(sc->p + 2, &u))
                    return syntax(sc, "invalid \\u escape (4 hex digits expected)");
                sc->p += 6;
                if (u >= 0xDC00 && u <= 0xDFFF)
                    return syntax(sc, "lone low surrogate in \\u escape");
                if (u >= 0xD800 && u <= 0xDBFF) {
                    if (sc->end - sc->p < 6 || sc->p[0] != '\\' || sc->p[1] != 'u' ||
                        !hex4(sc->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return syntax(sc, "high surrogate not followed by a low surrogate");
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
                return syntax(sc, "invalid escape in a string");
            }
            continue;
        }
        uint32_t r;
        size_t w = jg_utf8_decode((const unsigned char *)sc->p, (size_t)(sc->end - sc->p), &r);
        if (w == 0) return syntax(sc, "invalid UTF-8 in a string");
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
    if (!buf || !own(sc->d, buf)) {
        jg_free(buf);
        return fail_oom(sc->err);
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
            hex4(q, &u);
            q += 4;
            if (u >= 0xD800 && u <= 0xDBFF) {
                hex4(q + 2, &lo);
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

static status_t string(struct scanner *sc, jg_str *out) {
    return string_at(sc, out, NULL);
}

enum num_kind { NUM_INT, NUM_BIG_INT, NUM_REAL };

/* A number per the JSON grammar. Integers that fit int64 are returned in *v. */
static status_t number(struct scanner *sc, enum num_kind *kind, int64_t *v) {
    bool neg = false;
    if (sc->p < sc->end && *sc->p == '-') {
        neg = true;
        sc->p++;
    }
    if (sc->p >= sc->end || *sc->p < '0' || *sc->p > '9') return syntax(sc, "invalid number");
    uint64_t acc = 0;
    bool big = false;
    if (*sc->p == '0') {
        sc->p++;
        if (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
            return syntax(sc, "invalid number (leading zero)");
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
            return syntax(sc, "invalid number (digit expected after '.')");
        while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
            sc->p++;
        *kind = NUM_REAL;
    }
    if (sc->p < sc->end && (*sc->p == 'e' || *sc->p == 'E')) {
        sc->p++;
        if (sc->p < sc->end && (*sc->p == '+' || *sc->p == '-')) sc->p++;
        if (sc->p >= sc->end || *sc->p < '0' || *sc->p > '9')
            return syntax(sc, "invalid number (digit expected in exponent)");
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

static status_t skip_value(struct scanner *sc);

/* Objects and arrays: `open` consumes the bracket; `next` returns 1 when a member/element is
 * at the cursor (for objects the key is read and ':' consumed), 0 at the closing bracket. */
struct agg {
    bool first;
};

static status_t enter(struct scanner *sc, struct agg *a) {
    if (++sc->depth > MAX_DEPTH) return syntax(sc, "nesting deeper than 2048 levels");
    sc->p++; /* past the bracket */
    a->first = true;
    return JG_DECODE_OK;
}

/* Escaped keys (rare) are unescaped into a buffer of KEY_MAX bytes to be compared. Every key the
 * decoder reads fits: Job's are short, and a target row's field names are at most 256 bytes (a
 * policy path is at most 256). A key whose unescaped form does not fit gets a length no name has
 * (KEY_TOO_LONG), so it matches nothing rather than a name it starts with. Skipped objects never
 * unescape their keys (skip_value passes no buffer), which keeps the recursion's frames small. */
#define KEY_MAX 264
#define KEY_TOO_LONG ((size_t)KEY_MAX)

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
            return syntax(sc, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
        sc->p++;
        ws(sc);
    }
    a->first = false;
    *more = 1;
    return JG_DECODE_OK;
}

static status_t obj_next(struct scanner *sc, struct agg *a, jg_str *key, char *keybuf,
                         int *more) {
    TRY(agg_next(sc, a, '}', more));
    if (!*more) return JG_DECODE_OK;
    if (sc->p >= sc->end || *sc->p != '"') return syntax(sc, "string key expected");
    /* Keys are only compared: an escaped key (rare) is unescaped into keybuf, truncated, since
     * a long key cannot match any the decoder reads. */
    const char *ks = sc->p + 1;
    bool escaped;
    TRY(string_at(sc, NULL, &escaped));
    const char *ke = sc->p - 1;
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
                hex4(q + 2, &u);
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
    ws(sc);
    if (sc->p >= sc->end || *sc->p != ':') return syntax(sc, "':' expected after an object key");
    sc->p++;
    ws(sc);
    *more = 1;
    return JG_DECODE_OK;
}

static status_t arr_next(struct scanner *sc, struct agg *a, int *more) {
    return agg_next(sc, a, ']', more);
}

/* Validates and skips one value. Recursion is bounded by MAX_DEPTH. */
static status_t skip_value(struct scanner *sc) {
    ws(sc);
    if (sc->p >= sc->end) return syntax(sc, "value expected");
    struct agg a;
    int more = 0;
    switch (*sc->p) {
    case '{': {
        TRY(enter(sc, &a));
        jg_str key;
        for (;;) {
            TRY(obj_next(sc, &a, &key, NULL, &more));
            if (!more) return JG_DECODE_OK;
            TRY(skip_value(sc));
        }
    }
    case '[':
        TRY(enter(sc, &a));
        for (;;) {
            TRY(arr_next(sc, &a, &more));
            if (!more) return JG_DECODE_OK;
            TRY(skip_value(sc));
        }
    case '"':
        return string(sc, NULL);
    case 't':
        return literal(sc, "true", 4) ? JG_DECODE_OK : syntax(sc, "invalid literal");
    case 'f':
        return literal(sc, "false", 5) ? JG_DECODE_OK : syntax(sc, "invalid literal");
    case 'n':
        return literal(sc, "null", 4) ? JG_DECODE_OK : syntax(sc, "invalid literal");
    default: {
        enum num_kind k = NUM_INT;
        int64_t v;
        return number(sc, &k, &v);
    }
    }
}

/* Whether the whole input is one valid JSON value (used to give syntax errors precedence). */
static status_t validate_document(const char *body, size_t len, const char *what,
                                  jg_decode_error *err) {
    struct scanner sc = {body, body, body + len, 0, NULL, err, what};
    ws(&sc);
    if (sc.p >= sc.end) return fail(err, "%s: empty input", what);
    TRY(skip_value(&sc));
    ws(&sc);
    if (sc.p != sc.end) return syntax(&sc, "end of input expected after the JSON value");
    return JG_DECODE_OK;
}

/* Field paths for messages ("request.object.status"): built on every member visited, so plain
 * copies rather than snprintf. Truncated to fit; real paths are far shorter. */
#define PATH_MAX_LEN 160

static void join_path(char out[PATH_MAX_LEN], const char *base, const char *child) {
    size_t b = strnlen(base, 100), c = strnlen(child, PATH_MAX_LEN - 102);
    memcpy(out, base, b);
    out[b] = '.';
    memcpy(out + b + 1, child, c);
    out[b + 1 + c] = '\0';
}

/* ---- typed readers: the cursor is at a member value ---- */

static const char *type_name(struct scanner *sc) {
    switch (sc->p < sc->end ? *sc->p : 0) {
    case '{':
        return "an object";
    case '[':
        return "an array";
    case '"':
        return "a string";
    case 't':
    case 'f':
        return "a boolean";
    case 'n':
        return "null";
    default: {
        struct scanner probe = *sc;
        enum num_kind k = NUM_INT;
        int64_t v;
        jg_decode_error e;
        probe.err = &e;
        if (number(&probe, &k, &v) != JG_DECODE_OK) return "a value";
        return k == NUM_REAL ? "a non-integer number" : "an integer";
    }
    }
}

static bool is_null(struct scanner *sc) {
    return literal(sc, "null", 4);
}

static status_t wrong_type(struct scanner *sc, const char *path, const char *key,
                           const char *want) {
    return fail(sc->err, "%s.%s: must be %s, got %s", path, key, want, type_name(sc));
}

static status_t rd_str(struct scanner *sc, const char *path, const char *key, jg_opt_str *out) {
    out->set = false;
    out->s = (jg_str){"", 0};
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '"') return wrong_type(sc, path, key, "a string");
    out->set = true;
    return string(sc, &out->s);
}

static status_t rd_i32(struct scanner *sc, const char *path, const char *key, jg_opt_i32 *out) {
    out->set = false;
    out->v = 0;
    if (is_null(sc)) return JG_DECODE_OK;
    char c = *sc->p;
    if (c != '-' && (c < '0' || c > '9')) return wrong_type(sc, path, key, "an integer (int32)");
    const char *s = sc->p;
    enum num_kind k = NUM_INT;
    int64_t v = 0;
    TRY(number(sc, &k, &v));
    if (k == NUM_REAL) {
        sc->p = s;
        return wrong_type(sc, path, key, "an integer (int32)");
    }
    if (k == NUM_BIG_INT || v < INT32_MIN || v > INT32_MAX)
        return fail(sc->err, "%s.%s: %.*s is outside the int32 range", path, key,
                    (int)(sc->p - s > 40 ? 40 : sc->p - s), s);
    out->set = true;
    out->v = (int32_t)v;
    return JG_DECODE_OK;
}

static status_t rd_bool(struct scanner *sc, const char *path, const char *key, bool *out) {
    *out = false;
    if (is_null(sc)) return JG_DECODE_OK;
    if (literal(sc, "true", 4)) {
        *out = true;
        return JG_DECODE_OK;
    }
    if (literal(sc, "false", 5)) return JG_DECODE_OK;
    return wrong_type(sc, path, key, "a boolean");
}

static status_t rd_time(struct scanner *sc, const char *path, const char *key, jg_time *out) {
    *out = (jg_time){0};
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '"') return wrong_type(sc, path, key, "an RFC 3339 time string");
    jg_str s;
    TRY(string(sc, &s));
    if (!jg_parse_rfc3339(s.p, s.n, &out->sec, &out->nsec))
        return fail(sc->err, "%s.%s: %.*s%s is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)",
                    path, key, (int)(s.n > 64 ? 64 : s.n), s.p, s.n > 64 ? "..." : "");
    out->set = true;
    return JG_DECODE_OK;
}

/* Opens an object member: *present=false for null. */
static status_t rd_object(struct scanner *sc, const char *path, const char *key, struct agg *a,
                          bool *present) {
    *present = false;
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '{') return wrong_type(sc, path, key, "an object");
    *present = true;
    return enter(sc, a);
}

/* Index of `key` in `names`, or -1. A repeat of a key the decoder reads is refused: a
 * parser-differential guard (Go keeps the last, other tools the first). */
static int known(struct scanner *sc, jg_str key, const char *const *names, int n, uint32_t *seen,
                 status_t *st) {
    for (int i = 0; i < n; i++) {
        if (!jg_str_eq_lit(key, names[i])) continue;
        if (*seen & (1u << i)) {
            *st = syntax(sc, "duplicate object key");
            return -1;
        }
        *seen |= 1u << i;
        return i;
    }
    return -1;
}

/* Walks the members of the object just opened, calling `member(ctx, index)` for known keys and
 * skipping the rest. */
typedef status_t (*member_fn)(struct scanner *sc, void *ctx, int which);

static status_t members(struct scanner *sc, struct agg *a, const char *const *names, int n,
                        member_fn fn, void *ctx) {
    uint32_t seen = 0;
    for (;;) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        TRY(obj_next(sc, a, &key, kb, &more));
        if (!more) return JG_DECODE_OK;
        status_t st = JG_DECODE_OK;
        int which = known(sc, key, names, n, &seen, &st);
        TRY(st);
        if (which < 0) {
            TRY(skip_value(sc));
        } else {
            if (sc->p >= sc->end) return syntax(sc, "value expected");
            TRY(fn(sc, ctx, which));
        }
    }
}

/* ---- Job fields ---- */

static int cond_type(jg_str t) {
    static const char *const names[JG_COND_COUNT] = {
        [JG_COND_COMPLETE] = "Complete",
        [JG_COND_FAILED] = "Failed",
        [JG_COND_FAILURE_TARGET] = "FailureTarget",
        [JG_COND_SUCCESS_CRITERIA_MET] = "SuccessCriteriaMet",
        [JG_COND_SUSPENDED] = "Suspended",
    };
    for (int i = 0; i < JG_COND_COUNT; i++)
        if (jg_str_eq_lit(t, names[i])) return i;
    return -1;
}

struct cond_ctx {
    const char *path;
    jg_opt_str type, status;
};

static status_t condition_member(struct scanner *sc, void *ctx, int which) {
    struct cond_ctx *c = ctx;
    return which == 0 ? rd_str(sc, c->path, "type", &c->type)
                      : rd_str(sc, c->path, "status", &c->status);
}

static status_t rd_conditions(struct scanner *sc, const char *path, struct jg_job_status *st) {
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '[') return wrong_type(sc, path, "conditions", "an array");
    struct agg a;
    TRY(enter(sc, &a));
    static const char *const names[] = {"type", "status"};
    for (size_t i = 0;; i++) {
        int more = 0;
        TRY(arr_next(sc, &a, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return syntax(sc, "value expected");
        if (is_null(sc)) continue;
        char cpath[PATH_MAX_LEN], idx[24];
        snprintf(idx, sizeof idx, "conditions[%zu]", i);
        join_path(cpath, path, idx);
        if (*sc->p != '{')
            return fail(sc->err, "%s: must be an object, got %s", cpath, type_name(sc));
        struct agg o;
        TRY(enter(sc, &o));
        struct cond_ctx c = {cpath, {0}, {0}};
        TRY(members(sc, &o, names, 2, condition_member, &c));
        int t = cond_type(c.type.s);
        if (t < 0) continue;
        /* Matching is case-sensitive: "true" is not True (§3.0, edge case 68). */
        if (jg_str_eq_lit(c.status.s, "True")) st->cond_true |= JG_COND_BIT(t);
        if (jg_str_eq_lit(c.status.s, "False")) st->cond_false |= JG_COND_BIT(t);
    }
}

static status_t rd_str_list_items(struct scanner *sc, const char *path, const char *key,
                                  jg_str_list *out, size_t *cap) {
    struct agg a;
    TRY(enter(sc, &a));
    for (;;) {
        int more = 0;
        TRY(arr_next(sc, &a, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return syntax(sc, "value expected");
        jg_str v = {"", 0};
        if (!is_null(sc)) { /* Go decodes null into a string element as "" */
            if (*sc->p != '"')
                return fail(sc->err, "%s.%s[%zu]: must be a string, got %s", path, key, out->n,
                            type_name(sc));
            TRY(string(sc, &v));
        }
        if (out->n == *cap) {
            *cap = *cap ? *cap * 2 : 4;
            jg_str *items = jg_realloc(out->items, *cap * sizeof *items);
            if (!items) return fail_oom(sc->err);
            out->items = items;
        }
        out->items[out->n++] = v;
    }
}

static status_t rd_str_list(struct scanner *sc, const char *path, const char *key,
                            jg_str_list *out) {
    *out = (jg_str_list){0};
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '[') return wrong_type(sc, path, key, "an array of strings");
    out->set = true;
    size_t cap = 0;
    status_t st = rd_str_list_items(sc, path, key, out, &cap);
    if (st == JG_DECODE_OK && out->items && !own(sc->d, out->items)) st = fail_oom(sc->err);
    if (st != JG_DECODE_OK) {
        jg_free(out->items);
        out->items = NULL;
        out->n = 0;
    }
    return st;
}

struct uncounted_ctx {
    const char *path;
    struct jg_job_status *st;
};

static status_t uncounted_member(struct scanner *sc, void *ctx, int which) {
    struct uncounted_ctx *u = ctx;
    return which == 0 ? rd_str_list(sc, u->path, "succeeded", &u->st->uncounted_succeeded)
                      : rd_str_list(sc, u->path, "failed", &u->st->uncounted_failed);
}

struct status_ctx {
    const char *path;
    struct jg_job_status *st;
};

enum {
    ST_CONDITIONS,
    ST_START,
    ST_COMPLETION,
    ST_ACTIVE,
    ST_SUCCEEDED,
    ST_FAILED,
    ST_READY,
    ST_TERMINATING,
    ST_COMPLETED_INDEXES,
    ST_FAILED_INDEXES,
    ST_UNCOUNTED,
    ST_COUNT
};
static const char *const status_names[ST_COUNT] = {
    "conditions",
    "startTime",
    "completionTime",
    "active",
    "succeeded",
    "failed",
    "ready",
    "terminating",
    "completedIndexes",
    "failedIndexes",
    "uncountedTerminatedPods",
};

static status_t status_member(struct scanner *sc, void *ctx, int which) {
    struct status_ctx *c = ctx;
    struct jg_job_status *st = c->st;
    const char *path = c->path, *key = status_names[which];
    jg_opt_i32 i;
    jg_opt_str s;
    switch (which) {
    case ST_CONDITIONS:
        return rd_conditions(sc, path, st);
    case ST_START:
        return rd_time(sc, path, key, &st->start_time);
    case ST_COMPLETION:
        return rd_time(sc, path, key, &st->completion_time);
    case ST_ACTIVE:
        TRY(rd_i32(sc, path, key, &i));
        st->active = i.v;
        return JG_DECODE_OK;
    case ST_SUCCEEDED:
        TRY(rd_i32(sc, path, key, &i));
        st->succeeded = i.v;
        return JG_DECODE_OK;
    case ST_FAILED:
        TRY(rd_i32(sc, path, key, &i));
        st->failed = i.v;
        return JG_DECODE_OK;
    case ST_READY:
        return rd_i32(sc, path, key, &st->ready);
    case ST_TERMINATING:
        return rd_i32(sc, path, key, &st->terminating);
    case ST_COMPLETED_INDEXES:
        TRY(rd_str(sc, path, key, &s));
        st->completed_indexes = s.s;
        return JG_DECODE_OK;
    case ST_FAILED_INDEXES:
        return rd_str(sc, path, key, &st->failed_indexes);
    default: {
        struct agg a;
        bool present;
        TRY(rd_object(sc, path, key, &a, &present));
        if (!present) return JG_DECODE_OK;
        char upath[PATH_MAX_LEN];
        join_path(upath, path, "uncountedTerminatedPods");
        st->uncounted_set = true;
        static const char *const names[] = {"succeeded", "failed"};
        struct uncounted_ctx u = {upath, st};
        return members(sc, &a, names, 2, uncounted_member, &u);
    }
    }
}

struct spec_ctx {
    const char *path;
    struct jg_job_spec *sp;
};

enum {
    SP_MANAGED_BY,
    SP_COMPLETIONS,
    SP_PARALLELISM,
    SP_BLPI,
    SP_MODE,
    SP_SUSPEND,
    SP_POLICY,
    SP_COUNT
};
static const char *const spec_names[SP_COUNT] = {
    "managedBy",      "completions", "parallelism",   "backoffLimitPerIndex",
    "completionMode", "suspend",     "successPolicy",
};

static status_t spec_member(struct scanner *sc, void *ctx, int which) {
    struct spec_ctx *c = ctx;
    struct jg_job_spec *sp = c->sp;
    const char *path = c->path, *key = spec_names[which];
    jg_opt_str mode;
    switch (which) {
    case SP_MANAGED_BY:
        return rd_str(sc, path, key, &sp->managed_by);
    case SP_COMPLETIONS:
        return rd_i32(sc, path, key, &sp->completions);
    case SP_PARALLELISM:
        return rd_i32(sc, path, key, &sp->parallelism);
    case SP_BLPI:
        return rd_i32(sc, path, key, &sp->backoff_limit_per_index);
    case SP_MODE:
        TRY(rd_str(sc, path, key, &mode));
        sp->indexed = jg_str_eq_lit(mode.s, "Indexed");
        return JG_DECODE_OK;
    case SP_SUSPEND:
        return rd_bool(sc, path, key, &sp->suspend);
    default:
        if (is_null(sc)) return JG_DECODE_OK;
        if (*sc->p != '{') return wrong_type(sc, path, key, "an object");
        sp->has_success_policy = true;
        return skip_value(sc);
    }
}

/* CronJob: spec.jobTemplate.spec.managedBy only. */
struct cron_ctx {
    const char *path;
    struct jg_job_spec *sp;
    int level; /* 0: spec, 1: jobTemplate, 2: jobTemplate.spec */
};

static status_t cron_member(struct scanner *sc, void *ctx, int which) {
    struct cron_ctx *c = ctx;
    (void)which;
    if (c->level == 2) return rd_str(sc, c->path, "managedBy", &c->sp->managed_by);
    static const char *const keys[] = {"jobTemplate", "spec"};
    struct agg a;
    bool present;
    TRY(rd_object(sc, c->path, keys[c->level], &a, &present));
    if (!present) return JG_DECODE_OK;
    char sub[PATH_MAX_LEN];
    join_path(sub, c->path, keys[c->level]);
    struct cron_ctx next = {sub, c->sp, c->level + 1};
    const char *name = c->level == 0 ? "spec" : "managedBy";
    return members(sc, &a, &name, 1, cron_member, &next);
}

struct object_ctx {
    const char *path;
    enum jg_target target;
    struct jg_job *job;
};

enum { OB_KIND, OB_METADATA, OB_SPEC, OB_STATUS, OB_COUNT };
static const char *const object_names[OB_COUNT] = {"kind", "metadata", "spec", "status"};

static status_t name_member(struct scanner *sc, void *ctx, int which) {
    struct object_ctx *c = ctx;
    (void)which;
    char path[PATH_MAX_LEN];
    join_path(path, c->path, "metadata");
    jg_opt_str name;
    TRY(rd_str(sc, path, "name", &name));
    c->job->name = name.s;
    return JG_DECODE_OK;
}

static status_t object_member(struct scanner *sc, void *ctx, int which) {
    struct object_ctx *c = ctx;
    const char *path = c->path;
    struct agg a;
    bool present;
    char sub[PATH_MAX_LEN];
    if (which == OB_STATUS && c->target == JG_TARGET_CRONJOB) return skip_value(sc); /* unread */
    if (which == OB_KIND) {
        jg_opt_str kind;
        TRY(rd_str(sc, path, "kind", &kind));
        const char *want = c->target == JG_TARGET_CRONJOB ? "CronJob" : "Job";
        if (kind.set && !jg_str_eq_lit(kind.s, want))
            return fail(sc->err, "%s.kind: expected \"%s\", got \"%.*s\"", path, want,
                        (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        return JG_DECODE_OK;
    }
    TRY(rd_object(sc, path, object_names[which], &a, &present));
    if (!present) return JG_DECODE_OK;
    join_path(sub, path, object_names[which]);
    if (which == OB_METADATA) {
        static const char *const names[] = {"name"};
        return members(sc, &a, names, 1, name_member, c);
    }
    if (which == OB_SPEC && c->target == JG_TARGET_CRONJOB) {
        static const char *const names[] = {"jobTemplate"};
        struct cron_ctx cc = {sub, &c->job->spec, 0};
        return members(sc, &a, names, 1, cron_member, &cc);
    }
    if (which == OB_SPEC) {
        struct spec_ctx sc_ = {sub, &c->job->spec};
        return members(sc, &a, spec_names, SP_COUNT, spec_member, &sc_);
    }
    struct status_ctx st = {sub, &c->job->status};
    return members(sc, &a, status_names, ST_COUNT, status_member, &st);
}

/* ---- CRD targets: the row's paths (docs/targets.md) ---- */

/* Paths are walked together, one cursor each: cursor 0 is metadata.name, 1 the row's
 * managedByPath, 2.. its nested paths. At every level only the members some cursor names are read;
 * the rest is validated and skipped. policy.c refuses rows whose paths disagree on whether a field
 * is a string, an object or a list, so the cursors matching one key always agree. */
#define CRD_CURSORS (2 + 16)
#define CRD_FIELD_MAX 1024 /* 256-byte paths plus element indexes */

struct cursor {
    const char *seg; /* the rest of the path, from this level's field name */
    int id;
    unsigned lists; /* "[*]" passed so far: the index into the nested path's list_keys */
};

struct crd_walk {
    const struct jg_policy_target *row;
    struct jg_job *job;
    const char *what; /* "request.object" */
    char field[CRD_FIELD_MAX]; /* the path of the current level, with element indexes */
    size_t field_len;
    /* Rows whose nested paths key a list (by_key): the match of the current level (view.h: one
     * part per list element on the way) and how many of those elements have no key. */
    bool by_key;
    jg_buf match;
    unsigned no_key;
    /* nested copies: offsets into `text` until the walk ends (text may move); a match offset
     * is stored plus one, 0 for none */
    struct jg_nested_value *nested;
    size_t n_nested, cap_nested;
    jg_buf text;
};

/* Length of the field name at the start of seg, and what follows it: 0 the string itself (end
 * of path), '.' an object, '[' a list ("[*]."). */
static size_t seg_name(const char *seg, char *next) {
    size_t n = strcspn(seg, ".[");
    *next = seg[n] == '\0' ? 0 : seg[n];
    return n;
}

/* One list element of the current level's match (view.h): "=<key length>:<key>" for an element
 * of a keyed list, "[<index>]" for any other. Written by hand: this runs for every element. */
static void match_push(struct crd_walk *w, long index, const char *key_name, jg_str key) {
    char num[24];
    size_t n = sizeof num;
    uint64_t v = key_name ? key.n : (uint64_t)index;
    do
        num[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    jg_buf_putc(&w->match, key_name ? '=' : '[');
    jg_buf_put(&w->match, num + n, sizeof num - n);
    jg_buf_putc(&w->match, key_name ? ':' : ']');
    if (key_name) jg_buf_put(&w->match, key.p, key.n);
}

static bool field_push(struct crd_walk *w, const char *name, size_t n, long index) {
    char idx[24] = "";
    if (index >= 0) snprintf(idx, sizeof idx, "[%ld]", index);
    size_t need = (w->field_len ? 1 : 0) + n + strlen(idx);
    if (w->field_len + need >= sizeof w->field) return false;
    if (w->field_len) w->field[w->field_len++] = '.';
    memcpy(w->field + w->field_len, name, n);
    w->field_len += n;
    memcpy(w->field + w->field_len, idx, strlen(idx) + 1);
    w->field_len += strlen(idx);
    return true;
}

/* "request.object.<field>" for messages. */
static void crd_path(const struct crd_walk *w, char out[PATH_MAX_LEN + CRD_FIELD_MAX]) {
    snprintf(out, PATH_MAX_LEN + CRD_FIELD_MAX, "%s%s%.*s", w->what, w->field_len ? "." : "",
             (int)w->field_len, w->field);
}

/* Refusals naming member `key` of the current level ("request.object.spec.x: must be ..."): the
 * path is only built when a request is refused, not for every member the walk reads. */
static status_t crd_wrong_type(struct scanner *sc, const struct crd_walk *w, jg_str key,
                               const char *want) {
    char path[PATH_MAX_LEN + CRD_FIELD_MAX];
    crd_path(w, path);
    char k[CRD_FIELD_MAX]; /* a row's field name can be longer than any key of Job's */
    snprintf(k, sizeof k, "%.*s", (int)key.n, key.p);
    return wrong_type(sc, path, k, want);
}

static status_t crd_too_long(struct scanner *sc, const struct crd_walk *w, jg_str key) {
    char path[PATH_MAX_LEN + CRD_FIELD_MAX];
    crd_path(w, path);
    return fail(sc->err, "%s.%.*s: path too long", path, (int)key.n, key.p);
}

static status_t crd_leaf(struct scanner *sc, struct crd_walk *w, const struct cursor *c, size_t n,
                         jg_str key) {
    jg_opt_str v = {false, {"", 0}}; /* null: absent, as rd_str reads it */
    if (!is_null(sc)) {
        if (*sc->p != '"') return crd_wrong_type(sc, w, key, "a string");
        v.set = true;
        TRY(string(sc, &v.s));
    }
    for (size_t i = 0; i < n; i++) {
        if (c[i].id == 0) {
            w->job->name = v.s;
        } else if (c[i].id == 1) {
            w->job->spec.managed_by = v;
        } else if (v.set) {
            if (w->n_nested == w->cap_nested) {
                size_t cap = w->cap_nested ? w->cap_nested * 2 : 4;
                struct jg_nested_value *nv = jg_realloc(w->nested, cap * sizeof *nv);
                if (!nv) return fail_oom(sc->err);
                w->nested = nv;
                w->cap_nested = cap;
            }
            /* the field is kept as an offset into w->text until the walk ends */
            size_t off = w->text.len;
            jg_buf_put(&w->text, w->field, w->field_len);
            if (w->field_len) jg_buf_putc(&w->text, '.');
            jg_buf_put(&w->text, key.p, key.n);
            size_t n = w->text.len - off;
            jg_buf_putc(&w->text, '\0'); /* a C string: the rules pass it as a field path */
            /* the match: the field itself, unless the row keys a list */
            size_t moff = off, mn = n;
            if (w->by_key && !w->no_key) {
                moff = w->text.len;
                jg_buf_put(&w->text, w->match.data, w->match.len);
                mn = w->match.len;
            }
            if (w->text.oom || w->match.oom) return fail_oom(sc->err);
            w->nested[w->n_nested++] = (struct jg_nested_value){
                .which = (unsigned)(c[i].id - 2),
                .field = {(const char *)(uintptr_t)off, n},
                .value = v.s,
                .match = {(const char *)(uintptr_t)(w->no_key ? 0 : moff + 1), mn}};
        }
    }
    return JG_DECODE_OK;
}

static status_t crd_object(struct scanner *sc, struct crd_walk *w, const struct cursor *cur,
                           size_t ncur, bool top, const char *list_key);

/* The key of the list the cursors `c` enter (at "name[*]"): the list key their nested paths give
 * it (policy.c makes the paths sharing a list agree), NULL when its elements go by index. */
static const char *crd_list_key(const struct crd_walk *w, const struct cursor *c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (c[i].id < 2) continue;
        const struct jg_strv *k = &w->row->nested[c[i].id - 2].list_keys;
        if (c[i].lists < k->n && k->v[c[i].lists][0]) return k->v[c[i].lists];
    }
    return NULL;
}

/* The string member `name` of the object at the cursor, read ahead without moving the cursor:
 * JSON objects from the API server have their keys sorted, so a list key such as "name" is met
 * early. key->p stays NULL when the member is absent, null or not a string, or when the object
 * is malformed (the walk that follows reports that, as without a key). */
static status_t peek_key(struct scanner *sc, const char *name, jg_str *out) {
    const char *p = sc->p;
    int depth = sc->depth;
    struct agg a;
    status_t st = enter(sc, &a);
    while (st == JG_DECODE_OK) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        st = obj_next(sc, &a, &key, kb, &more);
        if (st != JG_DECODE_OK || !more || sc->p >= sc->end) break;
        if (jg_str_eq_lit(key, name)) {
            if (*sc->p == '"') st = string(sc, out);
            break;
        }
        st = skip_value(sc);
    }
    sc->p = p;
    sc->depth = depth;
    if (st == JG_DECODE_NO_MEMORY) return st;
    if (st != JG_DECODE_OK) {
        *out = (jg_str){NULL, 0};
        sc->err->status = JG_DECODE_OK;
        sc->err->message[0] = '\0';
    }
    return JG_DECODE_OK;
}

/* The member `key` (at the cursor), named by the cursors `c` (all agreeing on its shape). */
static status_t crd_member(struct scanner *sc, struct crd_walk *w, struct cursor *c, size_t n,
                           jg_str key) {
    char next;
    size_t len = seg_name(c[0].seg, &next);
    if (next == 0) return crd_leaf(sc, w, c, n, key);
    size_t saved = w->field_len, msaved = w->match.len; /* only elements change the match */
    const char *list_key = next == '[' ? crd_list_key(w, c, n) : NULL;
    for (size_t i = 0; i < n; i++) { /* past "name." or "name[*]." */
        c[i].seg += len + (next == '.' ? 1 : 4);
        c[i].lists += next == '[';
    }
    if (is_null(sc)) return JG_DECODE_OK;
    if (next == '.') {
        if (*sc->p != '{') return crd_wrong_type(sc, w, key, "an object");
        if (!field_push(w, key.p, key.n, -1)) return crd_too_long(sc, w, key);
        TRY(crd_object(sc, w, c, n, false, NULL));
        w->field_len = saved;
        return JG_DECODE_OK;
    }
    if (*sc->p != '[') return crd_wrong_type(sc, w, key, "an array");
    struct agg a;
    TRY(enter(sc, &a));
    for (long i = 0;; i++) {
        int more = 0;
        TRY(arr_next(sc, &a, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return syntax(sc, "value expected");
        if (is_null(sc)) continue;
        if (!field_push(w, key.p, key.n, i)) return crd_too_long(sc, w, key);
        if (*sc->p != '{') {
            char ep[PATH_MAX_LEN + CRD_FIELD_MAX];
            crd_path(w, ep);
            return fail(sc->err, "%s: must be an object, got %s", ep, type_name(sc));
        }
        jg_str kv = {NULL, 0};
        if (list_key) TRY(peek_key(sc, list_key, &kv));
        bool missing = list_key && !kv.p;
        if (w->by_key) match_push(w, i, list_key, kv);
        w->no_key += missing;
        TRY(crd_object(sc, w, c, n, false, list_key));
        w->no_key -= missing;
        w->field_len = saved;
        w->field[saved] = '\0';
        w->match.len = msaved;
    }
}

/* An object (the cursor is at '{') whose members the cursors `cur` name. At the top, a `kind`
 * member no cursor names must be the row's kind. In an element of a keyed list, the key member
 * (read ahead by peek_key) may not repeat either. */
static status_t crd_object(struct scanner *sc, struct crd_walk *w, const struct cursor *cur,
                           size_t ncur, bool top, const char *list_key) {
    struct agg a;
    TRY(enter(sc, &a));
    uint32_t consumed = 0;
    bool key_seen = false;
    for (;;) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        TRY(obj_next(sc, &a, &key, kb, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return syntax(sc, "value expected");
        struct cursor c[CRD_CURSORS];
        size_t n = 0;
        uint32_t mine = 0;
        for (size_t i = 0; i < ncur; i++) {
            char next;
            size_t len = seg_name(cur[i].seg, &next);
            if (key.n == len && memcmp(key.p, cur[i].seg, len) == 0) {
                c[n++] = cur[i];
                mine |= 1u << i;
            }
        }
        if (n && (consumed & mine)) return syntax(sc, "duplicate object key");
        consumed |= mine;
        if (list_key && jg_str_eq_lit(key, list_key)) {
            if (key_seen) return syntax(sc, "duplicate object key");
            key_seen = true;
        }
        if (n) {
            TRY(crd_member(sc, w, c, n, key));
        } else if (top && jg_str_eq_lit(key, "status")) {
            if (w->job->status_json.set) return syntax(sc, "duplicate object key");
            const char *start = sc->p; /* at the value: obj_next skipped the blanks before it */
            TRY(skip_value(sc));
            w->job->status_json = (jg_opt_str){true, {start, (size_t)(sc->p - start)}};
        } else if (top && jg_str_eq_lit(key, "kind")) {
            jg_opt_str kind;
            TRY(rd_str(sc, w->what, "kind", &kind));
            if (kind.set && !jg_str_eq_lit(kind.s, w->row->kind))
                return fail(sc->err, "%s.kind: expected \"%s\", got \"%.*s\"", w->what,
                            w->row->kind, (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        } else {
            TRY(skip_value(sc));
        }
    }
}

/* One object of a CRD target at the cursor (an object, checked by the caller). */
static status_t rd_crd(struct scanner *sc, const char *what, const struct jg_policy_target *row,
                       struct jg_job *job) {
    struct crd_walk *w = jg_malloc(sizeof *w);
    if (!w) return fail_oom(sc->err);
    memset(w, 0, sizeof *w);
    w->row = row;
    w->job = job;
    w->what = what;
    w->text = (jg_buf)JG_BUF_INIT;
    w->match = (jg_buf)JG_BUF_INIT;
    struct cursor cur[CRD_CURSORS] = {{"metadata.name", 0, 0}, {row->managed_by_path, 1, 0}};
    size_t ncur = 2;
    for (size_t i = 0; i < row->n_nested && ncur < CRD_CURSORS; i++) {
        cur[ncur++] = (struct cursor){row->nested[i].path, (int)(2 + i), 0};
        for (size_t k = 0; k < row->nested[i].list_keys.n; k++)
            w->by_key |= row->nested[i].list_keys.v[k][0] != '\0';
    }
    job->present = true;
    status_t st = crd_object(sc, w, cur, ncur, true, NULL);
    if (st == JG_DECODE_OK && w->n_nested) {
        /* the review owns both; then the offsets become pointers */
        if (!own(sc->d, w->text.data)) {
            st = fail_oom(sc->err);
        } else {
            const char *text = w->text.data;
            w->text = (jg_buf)JG_BUF_INIT;
            if (!own(sc->d, w->nested)) {
                st = fail_oom(sc->err);
            } else {
                for (size_t i = 0; i < w->n_nested; i++) {
                    struct jg_nested_value *v = &w->nested[i];
                    uintptr_t m = (uintptr_t)v->match.p;
                    v->field.p = text + (uintptr_t)v->field.p;
                    v->match.p = m ? text + (m - 1) : NULL;
                }
                job->nested = w->nested;
                job->n_nested = w->n_nested;
                w->nested = NULL;
            }
        }
    }
    jg_free(w->nested);
    jg_buf_free(&w->text);
    jg_buf_free(&w->match);
    jg_free(w);
    return st;
}

/* One Job or CronJob object at the cursor (an object, checked by the caller). */
static status_t rd_job(struct scanner *sc, const char *path, enum jg_target target,
                       const struct jg_policy_target *row, struct jg_job *job) {
    if (target == JG_TARGET_CRD) return rd_crd(sc, path, row, job);
    struct agg a;
    TRY(enter(sc, &a));
    job->present = true;
    struct object_ctx c = {path, target, job};
    return members(sc, &a, object_names, OB_COUNT, object_member, &c);
}

/* ---- the AdmissionReview envelope ---- */

/* Routing by request.resource (or request.kind when resource is absent, by_kind): batch/v1 Job
 * and CronJob are the API server's own kinds and always their built-in rows; anything else is a
 * CRD target when the target table (the policy's rows, then the built-in ones) has a row for it. */
static enum jg_target route(const struct jg_policy *p, jg_str group, jg_str version, jg_str name,
                            bool by_kind, const struct jg_policy_target **row) {
    *row = NULL;
    if (jg_str_eq_lit(group, "batch")) {
        for (int i = 0; i < 2; i++) { /* rows 0 and 1: Job, CronJob (targets.c) */
            const struct jg_policy_target *t = &jg_builtin_targets[i];
            if (jg_str_eq_lit(name, by_kind ? t->kind : t->resource)) {
                *row = t;
                return i == 0 ? JG_TARGET_JOB : JG_TARGET_CRONJOB;
            }
        }
    }
    *row = jg_target_route(p, group, version, name, by_kind);
    return *row ? JG_TARGET_CRD : JG_TARGET_OTHER;
}

/* Whether the rules read the objects of this request; if not it is allowed untouched and the
 * objects are only validated as JSON (DELETE, CONNECT, other resources and subresources). */
static bool needs_objects(const struct jg_request *q) {
    if (q->operation != JG_OP_CREATE && q->operation != JG_OP_UPDATE) return false;
    if (q->target == JG_TARGET_JOB || q->target == JG_TARGET_CRD)
        return q->sub_resource.n == 0 || jg_str_eq_lit(q->sub_resource, "status");
    if (q->target == JG_TARGET_CRONJOB) return q->sub_resource.n == 0;
    return false;
}

/* Whether object (idx 0) or oldObject (1) is decoded: for a Job/CronJob CREATE/UPDATE
 * (oldObject: UPDATE only), whatever the subresource, so that member order never matters. */
static bool decodes_object(const struct jg_request *q, int idx) {
    if (q->target == JG_TARGET_OTHER) return false;
    return q->operation == JG_OP_UPDATE || (idx == 0 && q->operation == JG_OP_CREATE);
}

struct request_ctx {
    struct jg_request *q;
    const struct jg_policy *policy; /* its target rows route CRD requests */
    jg_opt_str uid, operation, group, resource, version, kgroup, kkind, kversion;
    bool has_resource, has_kind, routed;
    /* object/oldObject met before the routing fields were complete: decoded afterwards */
    const char *deferred[2];
    bool seen_object[2];
};

enum {
    RQ_UID,
    RQ_OPERATION,
    RQ_RESOURCE,
    RQ_KIND,
    RQ_SUBRESOURCE,
    RQ_NAME,
    RQ_NAMESPACE,
    RQ_USERINFO,
    RQ_DRYRUN,
    RQ_OBJECT,
    RQ_OLD_OBJECT,
    RQ_COUNT
};
static const char *const request_names[RQ_COUNT] = {
    "uid",       "operation", "resource", "kind",   "subResource", "name",
    "namespace", "userInfo",  "dryRun",   "object", "oldObject",
};

struct gvr_ctx {
    const char *path;
    const char *const *names;
    jg_opt_str *v[3];
};

static status_t gvr_member(struct scanner *sc, void *ctx, int which) {
    struct gvr_ctx *g = ctx;
    return rd_str(sc, g->path, g->names[which], g->v[which]);
}

static status_t user_member(struct scanner *sc, void *ctx, int which) {
    struct jg_request *q = ctx;
    if (which == 1) return rd_str_list(sc, "request.userInfo", "groups", &q->groups);
    jg_opt_str s;
    TRY(rd_str(sc, "request.userInfo", "username", &s));
    q->username = s.s;
    return JG_DECODE_OK;
}

static status_t rd_request_object(struct scanner *sc, struct request_ctx *c, int idx) {
    static const char *const paths[] = {"request.object", "request.oldObject"};
    struct jg_request *q = c->q;
    c->seen_object[idx] = !is_null(sc);
    if (!c->seen_object[idx]) return JG_DECODE_OK;
    if (!c->routed) { /* not yet known whether the rules read it: validate, decode later */
        c->deferred[idx] = sc->p;
        return skip_value(sc);
    }
    if (!decodes_object(q, idx)) return skip_value(sc);
    if (*sc->p != '{')
        return fail(sc->err, "%s: must be an object, got %s", paths[idx], type_name(sc));
    return rd_job(sc, paths[idx], q->target, q->row, idx ? &q->old_object : &q->object);
}

static void try_route(struct request_ctx *c, bool final) {
    /* kube-apiserver writes uid, kind, resource, subResource, ..., operation before object, so
     * in practice the objects are decoded in the same pass. A non-empty request.resource
     * decides alone; request.kind only once the whole request is read (a resource may follow). */
    if (c->routed || !c->operation.set || !(c->has_resource || c->has_kind)) return;
    if (!final && !(c->has_resource && c->resource.s.n)) return;
    struct jg_request *q = c->q;
    if (c->has_resource && c->resource.s.n)
        q->target = route(c->policy, c->group.s, c->version.s, c->resource.s, false, &q->row);
    else
        q->target = route(c->policy, c->kgroup.s, c->kversion.s, c->kkind.s, true, &q->row);
    c->routed = true;
}

static status_t request_member(struct scanner *sc, void *ctx, int which) {
    struct request_ctx *c = ctx;
    struct jg_request *q = c->q;
    jg_opt_str s;
    struct agg a;
    bool present;
    switch (which) {
    case RQ_UID:
        TRY(rd_str(sc, "request", "uid", &c->uid));
        q->uid = c->uid.s;
        return JG_DECODE_OK;
    case RQ_OPERATION:
        TRY(rd_str(sc, "request", "operation", &c->operation));
        if (!c->operation.set) return JG_DECODE_OK;
        if (jg_str_eq_lit(c->operation.s, "CREATE"))
            q->operation = JG_OP_CREATE;
        else if (jg_str_eq_lit(c->operation.s, "UPDATE"))
            q->operation = JG_OP_UPDATE;
        else if (jg_str_eq_lit(c->operation.s, "DELETE"))
            q->operation = JG_OP_DELETE;
        else if (jg_str_eq_lit(c->operation.s, "CONNECT"))
            q->operation = JG_OP_CONNECT;
        else
            return fail(sc->err,
                        "request.operation: unknown \"%.*s\" (CREATE, UPDATE, DELETE or CONNECT)",
                        (int)(c->operation.s.n > 32 ? 32 : c->operation.s.n), c->operation.s.p);
        try_route(c, false);
        return JG_DECODE_OK;
    case RQ_RESOURCE:
    case RQ_KIND: {
        bool res = which == RQ_RESOURCE;
        const char *path = res ? "request.resource" : "request.kind";
        TRY(rd_object(sc, "request", res ? "resource" : "kind", &a, &present));
        if (!present) return JG_DECODE_OK;
        static const char *const rnames[] = {"group", "version", "resource"};
        static const char *const knames[] = {"group", "version", "kind"};
        struct gvr_ctx g = {path,
                            res ? rnames : knames,
                            {res ? &c->group : &c->kgroup, res ? &c->version : &c->kversion,
                             res ? &c->resource : &c->kkind}};
        TRY(members(sc, &a, g.names, 3, gvr_member, &g));
        if (res) {
            c->has_resource = true;
            q->group = c->group.s;
            q->version = c->version.s;
            q->resource = c->resource.s;
        } else {
            c->has_kind = true;
        }
        try_route(c, false);
        return JG_DECODE_OK;
    }
    case RQ_SUBRESOURCE:
        TRY(rd_str(sc, "request", "subResource", &s));
        q->sub_resource = s.s;
        return JG_DECODE_OK;
    case RQ_NAME:
        TRY(rd_str(sc, "request", "name", &s));
        q->name = s.s;
        return JG_DECODE_OK;
    case RQ_NAMESPACE:
        TRY(rd_str(sc, "request", "namespace", &s));
        if (s.s.n > JG_MAX_NAMESPACE_BYTES) /* bounds the policy's namespace globs' work */
            return fail(sc->err, JG_NAMESPACE_TOO_LONG_FMT, "request.namespace",
                        JG_MAX_NAMESPACE_BYTES, s.s.n);
        q->namespace_ = s.s;
        return JG_DECODE_OK;
    case RQ_USERINFO: {
        TRY(rd_object(sc, "request", "userInfo", &a, &present));
        if (!present) return JG_DECODE_OK;
        static const char *const names[] = {"username", "groups"};
        return members(sc, &a, names, 2, user_member, q);
    }
    case RQ_DRYRUN:
        return rd_bool(sc, "request", "dryRun", &q->dry_run);
    case RQ_OBJECT:
        return rd_request_object(sc, c, 0);
    default:
        return rd_request_object(sc, c, 1);
    }
}

struct review_ctx {
    jg_opt_str api, kind;
    bool has_request;
    struct request_ctx req;
};

static status_t review_member(struct scanner *sc, void *ctx, int which) {
    struct review_ctx *r = ctx;
    if (which == 0) return rd_str(sc, "AdmissionReview", "apiVersion", &r->api);
    if (which == 1) return rd_str(sc, "AdmissionReview", "kind", &r->kind);
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '{') return fail(sc->err, "request: must be an object, got %s", type_name(sc));
    r->has_request = true;
    struct agg a;
    TRY(enter(sc, &a));
    status_t st = members(sc, &a, request_names, RQ_COUNT, request_member, &r->req);
    return st;
}

/* apiVersion and kind of the envelope: checked first, whatever the member order. */
/* apiVersion and kind of the envelope, when present. Absent ones default to admission.k8s.io/v1
 * AdmissionReview, as controller-runtime's decoder defaults them from the target type. */
static status_t check_envelope(struct review_ctx *r, jg_decode_error *err) {
    if (r->api.set && !jg_str_eq_lit(r->api.s, "admission.k8s.io/v1") &&
        !jg_str_eq_lit(r->api.s, "admission.k8s.io/v1beta1"))
        return fail(err,
                    "apiVersion: unsupported \"%.*s\" (expected admission.k8s.io/v1 or "
                    "admission.k8s.io/v1beta1)",
                    (int)(r->api.s.n > 64 ? 64 : r->api.s.n), r->api.s.p);
    if (r->kind.set && !jg_str_eq_lit(r->kind.s, "AdmissionReview"))
        return fail(err, "kind: expected \"AdmissionReview\", got \"%.*s\"",
                    (int)(r->kind.s.n > 64 ? 64 : r->kind.s.n), r->kind.s.p);
    return JG_DECODE_OK;
}

/* After the envelope: what the request must hold, in the order the old tree decoder checked. */
static status_t check_request(struct scanner *sc, struct review_ctx *r) {
    struct request_ctx *c = &r->req;
    struct jg_request *q = c->q;
    jg_decode_error *err = sc->err;
    if (!r->has_request) return fail(err, "request: required");
    if (!c->uid.set || c->uid.s.n == 0) return fail(err, "request.uid: required");
    if (!c->operation.set) return fail(err, "request.operation: required");
    if (!c->has_resource && !c->has_kind) return fail(err, "request.resource: required");
    try_route(c, true);
    if (!q->resource.n && c->kkind.set) { /* label metrics by resource even when routed by kind */
        if (q->row) q->resource = (jg_str){q->row->resource, strlen(q->row->resource)};
        q->group = c->kgroup.s;
        q->version = c->kversion.s;
    }
    static const char *const paths[] = {"request.object", "request.oldObject"};
    for (int i = 0; i < 2; i++) {
        if (!decodes_object(q, i)) continue;
        if (!c->seen_object[i] && needs_objects(q))
            return i == 0 ? fail(err, "request.object: required for %s",
                                 jg_operation_name(q->operation))
                          : fail(err, "request.oldObject: required for UPDATE");
        if (!c->deferred[i]) continue;
        sc->p = c->deferred[i];
        sc->depth = 0;
        if (*sc->p != '{')
            return fail(err, "%s: must be an object, got %s", paths[i], type_name(sc));
        TRY(rd_job(sc, paths[i], q->target, q->row, i ? &q->old_object : &q->object));
    }
    return JG_DECODE_OK;
}

static struct decoded *new_decoded(jg_review *r, jg_decode_error *err) {
    r->priv = jg_malloc(sizeof(struct decoded));
    if (!r->priv) {
        fail_oom(err);
        return NULL;
    }
    memset(r->priv, 0, sizeof(struct decoded));
    return r->priv;
}

/* On a refusal: a syntax error anywhere wins, then the envelope. Cheap: only on the error path. */
static status_t precedence(const char *body, size_t len, struct review_ctx *r, struct decoded *d,
                           status_t st, jg_decode_error *err) {
    if (st == JG_DECODE_NO_MEMORY) return st;
    jg_decode_error syn;
    if (validate_document(body, len, "AdmissionReview", &syn) != JG_DECODE_OK) {
        *err = syn;
        return syn.status;
    }
    /* the envelope may come after the failing member: read the top level once more */
    jg_decode_error env;
    if (!r->api.set || !r->kind.set) {
        /* with the review's owner: an escaped apiVersion or kind is unescaped into it */
        struct scanner sc = {body, body, body + len, 0, d, &env, "AdmissionReview"};
        struct agg a;
        ws(&sc);
        if (*sc.p == '{' && enter(&sc, &a) == JG_DECODE_OK) {
            for (;;) {
                jg_str key;
                char kb[KEY_MAX];
                int more = 0;
                if (obj_next(&sc, &a, &key, kb, &more) != JG_DECODE_OK || !more) break;
                jg_opt_str *dst = jg_str_eq_lit(key, "apiVersion") ? &r->api
                                  : jg_str_eq_lit(key, "kind")     ? &r->kind
                                                                   : NULL;
                if (dst && *sc.p == '"' && !dst->set) {
                    dst->set = true;
                    string(&sc, &dst->s);
                } else if (skip_value(&sc) != JG_DECODE_OK) {
                    break;
                }
            }
        }
    }
    if (check_envelope(r, &env) != JG_DECODE_OK) {
        *err = env;
        return env.status;
    }
    return st;
}

enum jg_decode_status jg_decode_review(const char *body, size_t len, jg_review *out,
                                       jg_decode_error *err) {
    return jg_decode_review_policy(body, len, NULL, out, err);
}

enum jg_decode_status jg_decode_review_policy(const char *body, size_t len,
                                              const struct jg_policy *policy, jg_review *out,
                                              jg_decode_error *err) {
    memset(out, 0, sizeof *out);
    err->status = JG_DECODE_OK;
    err->message[0] = '\0';
    struct decoded *d = new_decoded(out, err);
    if (!d) return err->status;
    if (len > JG_MAX_BODY_BYTES)
        return fail(err, "request body is %zu bytes, over the %u-byte limit", len,
                    JG_MAX_BODY_BYTES);
    struct scanner sc = {body, body, body + len, 0, d, err, "AdmissionReview"};
    struct review_ctx r = {0};
    r.req.q = &out->req;
    r.req.policy = policy;
    ws(&sc);
    if (sc.p >= sc.end) return fail(err, "AdmissionReview: empty input");
    if (*sc.p != '{') {
        status_t st = validate_document(body, len, "AdmissionReview", err);
        if (st != JG_DECODE_OK) return st;
        return fail(err, "AdmissionReview: must be a JSON object, got %s", type_name(&sc));
    }
    struct agg a;
    static const char *const names[] = {"apiVersion", "kind", "request"};
    status_t st = enter(&sc, &a);
    if (st == JG_DECODE_OK) st = members(&sc, &a, names, 3, review_member, &r);
    if (st == JG_DECODE_OK) {
        ws(&sc);
        if (sc.p != sc.end) st = syntax(&sc, "end of input expected after the JSON value");
    }
    if (st == JG_DECODE_OK) st = check_envelope(&r, err);
    if (jg_str_eq_lit(r.api.s, "admission.k8s.io/v1beta1")) out->req.api_version = JG_API_V1BETA1;
    if (st == JG_DECODE_OK) st = check_request(&sc, &r);
    if (st != JG_DECODE_OK) {
        st = precedence(body, len, &r, d, st, err);
        if (jg_str_eq_lit(r.api.s, "admission.k8s.io/v1beta1"))
            out->req.api_version = JG_API_V1BETA1;
    }
    return st;
}

/* The top-level "apiVersion" and "kind" strings of a raw object (absent: unset). */
static status_t raw_type(struct scanner sc, jg_opt_str *api, jg_opt_str *kind) {
    struct agg a;
    *api = *kind = (jg_opt_str){0};
    TRY(enter(&sc, &a));
    for (;;) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        TRY(obj_next(&sc, &a, &key, kb, &more));
        if (!more) return JG_DECODE_OK;
        jg_opt_str *dst = jg_str_eq_lit(key, "apiVersion") ? api
                          : jg_str_eq_lit(key, "kind")     ? kind
                                                           : NULL;
        if (dst && *sc.p == '"') {
            dst->set = true;
            TRY(string(&sc, &dst->s));
        } else {
            TRY(skip_value(&sc));
        }
    }
}

/* "name.group" (kubectl's KIND.GROUP / RESOURCE.GROUP): the part before the first dot, and the
 * rest (unset when there is no dot). */
static void split_qualified(const char *s, jg_str *name, jg_opt_str *group) {
    const char *dot = strchr(s, '.');
    *name = (jg_str){s, dot ? (size_t)(dot - s) : strlen(s)};
    *group = dot ? (jg_opt_str){true, {dot + 1, strlen(dot + 1)}} : (jg_opt_str){0};
}

/* Which target the new object of `check --old/--new` is: --resource or --kind when given, else the
 * object's own apiVersion and kind, which it must then have (kubectl refuses such an object with
 * the same words: apimachinery's NewMissingKindErr and NewMissingVersionErr). */
static status_t raw_route(struct scanner sc, const struct jg_decode_objects_opts *o,
                          struct jg_request *q, jg_decode_error *err) {
    jg_opt_str api, kind;
    TRY(raw_type(sc, &api, &kind));
    if (o && o->meta) {
        o->meta->api_version = api;
        o->meta->kind = kind;
    }
    jg_str group = {"batch", 5}, version = {"v1", 2};
    if (api.set) {
        const char *slash = memchr(api.s.p, '/', api.s.n);
        group = slash ? (jg_str){api.s.p, (size_t)(slash - api.s.p)} : (jg_str){"", 0};
        version = slash ? (jg_str){slash + 1, api.s.n - (size_t)(slash - api.s.p) - 1} : api.s;
    }
    const char *flag = o && o->resource ? o->resource : o && o->kind ? o->kind : NULL;
    bool by_kind = !(o && o->resource);
    if (!flag && (!kind.set || !kind.s.n || !api.set || !api.s.n))
        return fail(err,
                    "%s: Object '%s' is missing (an object names its target with apiVersion and "
                    "kind)",
                    sc.what, !kind.set || !kind.s.n ? "Kind" : "apiVersion");
    jg_str name = kind.set ? kind.s : (jg_str){"Job", 3};
    if (flag) {
        jg_opt_str g;
        split_qualified(flag, &name, &g);
        if (g.set) group = g.s;
    }
    const struct jg_policy *p = o ? o->policy : NULL;
    q->target = route(p, group, version, name, by_kind, &q->row);
    if (q->target == JG_TARGET_OTHER) {
        if (!flag && jg_str_eq_lit(group, "batch")) { /* rd_job says what is wrong with it */
            q->target = JG_TARGET_JOB;
            q->row = &jg_builtin_targets[0];
        } else {
            if (o && o->meta) o->meta->not_target = true;
            return fail(err,
                        "new object: %s %.*s of group \"%.*s\" is not a target (see 'jobguard "
                        "rules'; a policy file's targets rows add kinds)",
                        by_kind ? "kind" : "resource", (int)(name.n > 64 ? 64 : name.n), name.p,
                        (int)(group.n > 253 ? 253 : group.n), group.p);
        }
    }
    q->group = (jg_str){q->row->group, strlen(q->row->group)};
    q->version = version;
    q->resource = (jg_str){q->row->resource, strlen(q->row->resource)};
    return JG_DECODE_OK;
}

/* A raw object for `check --old/--new`: one JSON object, nothing after it. */
static status_t rd_raw(const char *json, size_t len, const char *what, struct jg_request *q,
                       const struct jg_decode_objects_opts *o, struct jg_job *job, jg_str *ns,
                       struct decoded *d, jg_decode_error *err) {
    TRY(validate_document(json, len, what, err));
    struct scanner sc = {json, json, json + len, 0, d, err, what};
    ws(&sc);
    if (*sc.p != '{') return fail(err, "%s: must be a JSON object, got %s", what, type_name(&sc));
    /* the new object decides what to read (the old one is read the same way) */
    if (ns) TRY(raw_route(sc, o, q, err));
    TRY(rd_job(&sc, what, q->target, q->row, job));
    if (ns) { /* metadata.namespace, for the outcome */
        struct scanner m = {json, json, json + len, 0, d, err, what};
        ws(&m);
        struct agg a, b;
        TRY(enter(&m, &a));
        for (;;) {
            jg_str key;
            char kb[KEY_MAX];
            int more = 0;
            TRY(obj_next(&m, &a, &key, kb, &more));
            if (!more) break;
            if (!jg_str_eq_lit(key, "metadata") || *m.p != '{') {
                TRY(skip_value(&m));
                continue;
            }
            TRY(enter(&m, &b));
            for (;;) {
                TRY(obj_next(&m, &b, &key, kb, &more));
                if (!more) break;
                if (jg_str_eq_lit(key, "namespace") && *m.p == '"') {
                    TRY(string(&m, ns));
                    if (ns->n > JG_MAX_NAMESPACE_BYTES) {
                        char field[64];
                        snprintf(field, sizeof field, "%s: metadata.namespace", what);
                        return fail(err, JG_NAMESPACE_TOO_LONG_FMT, field, JG_MAX_NAMESPACE_BYTES,
                                    ns->n);
                    }
                } else if (o && o->meta && jg_str_eq_lit(key, "uid") && *m.p == '"') {
                    o->meta->uid.set = true;
                    TRY(string(&m, &o->meta->uid.s));
                } else
                    TRY(skip_value(&m));
            }
        }
    }
    return JG_DECODE_OK;
}

enum jg_decode_status jg_decode_objects(const char *old_json, size_t old_len, const char *new_json,
                                        size_t new_len, const char *sub_resource,
                                        const struct jg_decode_objects_opts *opts, jg_review *out,
                                        jg_decode_error *err) {
    memset(out, 0, sizeof *out);
    err->status = JG_DECODE_OK;
    err->message[0] = '\0';
    if (opts && opts->meta) memset(opts->meta, 0, sizeof *opts->meta);
    struct decoded *d = new_decoded(out, err);
    if (!d) return err->status;
    struct jg_request *q = &out->req;
    q->sub_resource =
        (jg_str){sub_resource ? sub_resource : "", sub_resource ? strlen(sub_resource) : 0};
    q->operation = old_json ? JG_OP_UPDATE : JG_OP_CREATE;
    if (q->sub_resource.n && !old_json)
        return fail(err, "--subresource %s needs --old: a subresource is only ever UPDATEd",
                    sub_resource);
    TRY(rd_raw(new_json, new_len, "new object", q, opts, &q->object, &q->namespace_, d, err));
    if (old_json) TRY(rd_raw(old_json, old_len, "old object", q, opts, &q->old_object, NULL, d, err));
    q->name = q->object.name;
    return JG_DECODE_OK;
}

void jg_review_free(jg_review *r) {
    struct decoded *d = r->priv;
    if (d) {
        for (size_t i = 0; i < d->n_owned; i++)
            jg_free(d->owned[i]);
        jg_free(d->owned);
        jg_free(d);
    }
    memset(r, 0, sizeof *r);
}

const char *jg_operation_name(enum jg_operation op) {
    switch (op) {
    case JG_OP_CREATE:
        return "CREATE";
    case JG_OP_UPDATE:
        return "UPDATE";
    case JG_OP_DELETE:
        return "DELETE";
    case JG_OP_CONNECT:
        return "CONNECT";
    }
    return "UNKNOWN";
}

const char *jg_api_version_name(enum jg_api_version v) {
    return v == JG_API_V1BETA1 ? "admission.k8s.io/v1beta1" : "admission.k8s.io/v1";
}

/* ---- RFC 3339, as Go's time.Parse(time.RFC3339, s) ---- */

static bool digits(const char *s, size_t n, int *out) {
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool leap(int y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool jg_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec) {
    int Y, M, D, h, m, sc;
    /* 2006-01-02T15:04:05 */
    if (n < 20) return false;
    if (!digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
        !digits(s + 8, 2, &D) || s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &m) || s[16] != ':' || !digits(s + 17, 2, &sc))
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (M < 1 || M > 12) return false;
    if (D < 1 || D > mdays[M - 1] + (M == 2 && leap(Y))) return false;
    if (h > 23 || m > 59 || sc > 59) return false;
    size_t i = 19;
    int32_t frac = 0;
    if (i < n && (s[i] == '.' || s[i] == ',')) { /* Go accepts a fraction the layout lacks */
        size_t start = ++i;
        int scale = 100000000;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (scale > 0) {
                frac += (s[i] - '0') * scale;
                scale /= 10;
            }
            i++;
        }
        if (i == start) return false;
    }
    int64_t offset = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh, om;
        if (!digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        offset = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != n) return false;
    *sec = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sc - offset;
    *nsec = frac;
    return true;
}
