/* Field errors and their Kubernetes rendering (docs/rules.md §2.6). */
#include "jobguard/verdict.h"

#include "jobguard/alloc.h"

#include <string.h>
#include <time.h>

void jg_errors_init(struct jg_errors *e) {
    memset(e, 0, sizeof *e);
}

void jg_errors_free(struct jg_errors *e) {
    jg_free(e->v);
    jg_buf_free(&e->text);
    jg_buf_free(&e->scratch);
    memset(e, 0, sizeof *e);
}

void jg_errors_reset(struct jg_errors *e) {
    e->n = 0;
    e->oom = false;
    jg_buf_reset(&e->text);
    jg_buf_reset(&e->scratch);
}

static const char *type_text(enum jg_err_type t) {
    switch (t) {
    case JG_ERR_INVALID:
        return "Invalid value";
    case JG_ERR_REQUIRED:
        return "Required value";
    case JG_ERR_TOO_LONG:
        return "Too long";
    case JG_ERR_DUPLICATE:
        return "Duplicate value";
    }
    return "Internal error";
}

const char *jg_err_reason(enum jg_err_type t) {
    switch (t) {
    case JG_ERR_INVALID:
        return "FieldValueInvalid";
    case JG_ERR_REQUIRED:
        return "FieldValueRequired";
    case JG_ERR_TOO_LONG:
        return "FieldValueTooLong";
    case JG_ERR_DUPLICATE:
        return "FieldValueDuplicate";
    }
    return "InternalError";
}

/* Starts an error: appends the field and the type text; the caller appends the value and then
 * calls finish(). Returns NULL when out of memory. */
static struct jg_field_error *begin(struct jg_errors *e, int rule, enum jg_err_type type,
                                    const char *field) {
    if (e->oom) return NULL;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        struct jg_field_error *v = jg_realloc(e->v, cap * sizeof *v);
        if (!v) {
            e->oom = true;
            return NULL;
        }
        e->v = v;
        e->cap = cap;
    }
    struct jg_field_error *fe = &e->v[e->n];
    fe->rule = rule;
    fe->type = type;
    fe->field_off = e->text.len;
    jg_buf_puts(&e->text, field);
    fe->field_len = e->text.len - fe->field_off;
    fe->body_off = e->text.len;
    jg_buf_puts(&e->text, type_text(type));
    return fe;
}

static void finish(struct jg_errors *e, struct jg_field_error *fe, const char *detail) {
    if (detail && *detail) {
        jg_buf_put(&e->text, ": ", 2);
        jg_buf_puts(&e->text, detail);
    }
    if (e->text.oom) {
        e->oom = true;
        return;
    }
    fe->body_len = e->text.len - fe->body_off;
    e->n++;
}

void jg_err_required(struct jg_errors *e, int rule, const char *field, const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_REQUIRED, field);
    if (fe) finish(e, fe, detail);
}

void jg_err_too_long(struct jg_errors *e, int rule, const char *field, int max_bytes) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_TOO_LONG, field);
    if (!fe) return;
    /* apimachinery ≥ v0.32: TooLong(field, <value omitted>, max) */
    jg_buf_printf(&e->text, ": may not be more than %d bytes", max_bytes);
    finish(e, fe, NULL);
}

void jg_err_invalid_omit(struct jg_errors *e, int rule, const char *field, const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (fe) finish(e, fe, detail);
}

void jg_err_invalid_int(struct jg_errors *e, int rule, const char *field, int64_t v,
                        const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    jg_buf_put(&e->text, ": ", 2);
    jg_buf_put_i64(&e->text, v);
    finish(e, fe, detail);
}

void jg_err_invalid_gostr(struct jg_errors *e, int rule, const char *field, jg_str v,
                          const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    jg_buf_put(&e->text, ": ", 2);
    jg_buf_go_quote(&e->text, v.p, v.n);
    finish(e, fe, detail);
}

void jg_err_invalid_jsonstr(struct jg_errors *e, int rule, const char *field, jg_opt_str v,
                            const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    jg_buf_put(&e->text, ": ", 2);
    if (v.set)
        jg_buf_json_string(&e->text, v.s.p, v.s.n);
    else
        jg_buf_puts(&e->text, "null");
    finish(e, fe, detail);
}

void jg_buf_put_time(jg_buf *b, int64_t sec) {
    /* Civil-from-days (Howard Hinnant), valid for the whole int64 range of interest. */
    int64_t days = sec / 86400, rem = sec % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2) y++;
    jg_buf_printf(b, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)y, (long long)m,
                  (long long)d, (long long)(rem / 3600), (long long)(rem / 60 % 60),
                  (long long)(rem % 60));
}

/* Go's zero time.Time (0001-01-01T00:00:00Z) in Unix seconds: metav1.Time marshals it as null. */
#define GO_ZERO_TIME_UNIX (-62135596800LL)

void jg_err_invalid_time(struct jg_errors *e, int rule, const char *field, jg_time v,
                         const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    jg_buf_put(&e->text, ": ", 2);
    if (!v.set || (v.sec == GO_ZERO_TIME_UNIX && v.nsec == 0)) {
        jg_buf_puts(&e->text, "null");
    } else {
        jg_buf_putc(&e->text, '"');
        jg_buf_put_time(&e->text, v.sec); /* metav1.Time drops sub-second precision */
        jg_buf_putc(&e->text, '"');
    }
    finish(e, fe, detail);
}

static void put_json_list(jg_buf *b, const jg_str_list *l) {
    if (!l->set) {
        jg_buf_puts(b, "null");
        return;
    }
    jg_buf_putc(b, '[');
    for (size_t i = 0; i < l->n; i++) {
        if (i) jg_buf_putc(b, ',');
        jg_buf_json_string(b, l->items[i].p, l->items[i].n);
    }
    jg_buf_putc(b, ']');
}

void jg_err_invalid_uncounted(struct jg_errors *e, int rule, const char *field,
                              const jg_str_list *succeeded, const jg_str_list *failed,
                              const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    jg_buf_puts(&e->text, ": {\"Succeeded\":");
    put_json_list(&e->text, succeeded);
    jg_buf_puts(&e->text, ",\"Failed\":");
    put_json_list(&e->text, failed);
    jg_buf_putc(&e->text, '}');
    finish(e, fe, detail);
}

void jg_err_duplicate_json(struct jg_errors *e, int rule, const char *field, jg_str v) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_DUPLICATE, field);
    if (!fe) return;
    jg_buf_put(&e->text, ": ", 2);
    jg_buf_json_string(&e->text, v.p, v.n);
    finish(e, fe, NULL);
}

/* field.Error.Error(): "<field>: <body>"; compared for the aggregate's de-duplication. */
static bool same_error(const struct jg_errors *e, size_t a, size_t b) {
    return jg_str_eq(jg_err_field(e, a), jg_err_field(e, b)) &&
           jg_str_eq(jg_err_body(e, a), jg_err_body(e, b));
}

static void put_error(const struct jg_errors *e, size_t i, jg_buf *out) {
    jg_str f = jg_err_field(e, i), body = jg_err_body(e, i);
    jg_buf_put(out, f.p, f.n);
    jg_buf_put(out, ": ", 2);
    jg_buf_put(out, body.p, body.n);
}

static uint64_t error_hash(const struct jg_errors *e, size_t i) {
    /* FNV-1a over "<field>: <body>" */
    uint64_t h = 1469598103934665603ULL;
    jg_str parts[2] = {jg_err_field(e, i), jg_err_body(e, i)};
    for (int k = 0; k < 2; k++) {
        for (size_t j = 0; j < parts[k].n; j++)
            h = (h ^ (unsigned char)parts[k].p[j]) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
    }
    return h;
}

/* Marks dup[i] = true when error i repeats an earlier one (aggregate de-duplication). Hashes, so
 * that a request with thousands of uncounted UIDs costs linear time. Returns false on OOM. */
static bool mark_duplicates(const struct jg_errors *e, bool *dup) {
    size_t cap = 16;
    while (cap < e->n * 2)
        cap *= 2;
    size_t *slots = jg_malloc(cap * sizeof *slots); /* index + 1; 0 = empty */
    if (!slots) return false;
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < e->n; i++) {
        dup[i] = false;
        for (size_t s = error_hash(e, i) & (cap - 1);; s = (s + 1) & (cap - 1)) {
            if (slots[s] == 0) {
                slots[s] = i + 1;
                break;
            }
            if (same_error(e, i, slots[s] - 1)) {
                dup[i] = true;
                break;
            }
        }
    }
    jg_free(slots);
    return true;
}

void jg_render_message(const struct jg_errors *e, const char *kind, const char *group, jg_str name,
                       jg_buf *out) {
    jg_buf_puts(out, kind);
    jg_buf_putc(out, '.');
    jg_buf_puts(out, group);
    jg_buf_putc(out, ' ');
    jg_buf_go_quote(out, name.p, name.n);
    jg_buf_puts(out, " is invalid");
    if (e->n == 0) return;
    bool *dup = jg_malloc(e->n * sizeof *dup);
    if (!dup || !mark_duplicates(e, dup)) {
        jg_free(dup);
        out->oom = true;
        return;
    }
    jg_buf_put(out, ": ", 2);
    size_t distinct = 0;
    for (size_t i = 0; i < e->n; i++)
        distinct += !dup[i];
    if (distinct == 1) {
        put_error(e, 0, out);
    } else {
        jg_buf_putc(out, '[');
        for (size_t i = 0, k = 0; i < e->n; i++) {
            if (dup[i]) continue;
            if (k++) jg_buf_put(out, ", ", 2);
            put_error(e, i, out);
        }
        jg_buf_putc(out, ']');
    }
    jg_free(dup);
}
