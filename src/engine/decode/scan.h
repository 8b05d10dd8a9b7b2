#ifndef JOBGUARD_DECODE_SCAN_H
#define JOBGUARD_DECODE_SCAN_H
/* The decoder's lowest layer: a strict, validating JSON byte scanner (RFC 8259: grammar, UTF-8,
 * escapes, numbers, nesting depth). It moves a cursor over the body; the layers above
 * (fields.h: typed readers; job.c, crd.c, review.c: what the rules read) decide which members
 * to read and let the scanner validate and skip the rest without allocating. Internal to
 * src/engine/decode/. */
#include "index.h"
#include "jobguard/buf.h"
#include "jobguard/decode.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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
    const char *what;  /* names the input in syntax errors */
    struct sindex *ix; /* the body's structural index (index.h): valid, skip by it; or NULL */
};

#define TRY(x)                                                                                     \
    do {                                                                                           \
        status_t s_ = (x);                                                                         \
        if (s_ != JG_DECODE_OK) return s_;                                                         \
    } while (0)

/* Nesting limit, as jansson's JSON_PARSER_MAX_DEPTH: bounds the recursion of scan_skip. */
#define MAX_DEPTH JG_MAX_JSON_DEPTH

/* Escaped keys (rare) are unescaped into a buffer of KEY_MAX bytes to be compared. Every key the
 * decoder reads fits: Job's are short, and a target row's field names are at most 256 bytes (a
 * policy path is at most 256). A key whose unescaped form does not fit gets a length no name has
 * (KEY_TOO_LONG), so it matches nothing rather than a name it starts with. Skipped objects never
 * unescape their keys (skip_value passes no buffer), which keeps the recursion's frames small. */
#define KEY_MAX 264
#define KEY_TOO_LONG ((size_t)KEY_MAX)

/* ---- errors ---- */

/* A 400 with the formatted message. */
status_t scan_fail(jg_decode_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
status_t scan_oom(jg_decode_error *err);
/* A syntax error at the scanner's position, with 1-based line and column. */
status_t scan_syntax(struct scanner *sc, const char *what);
/* Hands p to the review's owner (freed with it); false when out of memory or there is no owner. */
bool scan_own(struct decoded *d, void *p);

/* ---- values ---- */

static inline void ws(struct scanner *sc) {
    /* one comparison in the common case: compact JSON has no whitespace */
    while (sc->p < sc->end && (unsigned char)*sc->p <= ' ' &&
           (*sc->p == ' ' || *sc->p == '\n' || *sc->p == '\r' || *sc->p == '\t'))
        sc->p++;
}

static inline bool literal(struct scanner *sc, const char *lit, size_t n) {
    if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, lit, n) != 0) return false;
    sc->p += n;
    return true;
}

static inline bool is_null(struct scanner *sc) {
    return literal(sc, "null", JG_LIT_LEN("null"));
}

/* A string at the cursor ('"'): its value, a slice of the body when it has no escapes, else an
 * unescaped copy owned by the review. */
status_t scan_string(struct scanner *sc, jg_str *out);

enum num_kind { NUM_INT, NUM_BIG_INT, NUM_REAL };
/* A number per the JSON grammar. Integers that fit int64 are returned in *v. */
status_t scan_number(struct scanner *sc, enum num_kind *kind, int64_t *v);

/* Objects and arrays: scan_enter consumes the bracket; scan_obj_next/scan_arr_next set *more to
 * 1 when a member/element is at the cursor (for objects the key is read and ':' consumed), 0 at
 * the closing bracket. */
struct agg {
    bool first;
};
status_t scan_enter(struct scanner *sc, struct agg *a);
status_t scan_obj_next(struct scanner *sc, struct agg *a, jg_str *key, char *keybuf, int *more);
status_t scan_arr_next(struct scanner *sc, struct agg *a, int *more);

/* Validates and skips one value. Recursion is bounded by MAX_DEPTH. */
status_t scan_skip(struct scanner *sc);

/* Whether the whole input is one valid JSON value (gives syntax errors precedence): the
 * structural pass (index.h) at the level in force, the byte scanner when it does not say valid. */
status_t scan_validate(const char *body, size_t len, const char *what, jg_decode_error *err);
/* The same at a given level (SCAN_SCALAR: the byte scanner alone); for tests. */
status_t scan_validate_at(const char *body, size_t len, const char *what, jg_decode_error *err,
                          enum scan_level level);

#endif
