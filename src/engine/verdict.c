/* Field errors and their Kubernetes rendering (docs/rules.md §2.6). */
#include "jobguard/verdict.h"

#include "jobguard/alloc.h"
#include "jobguard/rules.h"
#include "jobguard/utf8.h"

#include <string.h>
#include <time.h>

void jg_errors_init(struct jg_errors *e) {
    e->v = NULL;
    e->n = e->cap = 0;
    e->text = (jg_buf)JG_BUF_INIT;
    e->scratch = (jg_buf)JG_BUF_INIT;
    e->omitted = 0;
    memset(e->omitted_by_rule, 0, sizeof e->omitted_by_rule);
    e->rules = 0;
    e->only = UINT64_MAX;
    e->oom = false;
}

/* One more error of `rule` left out. */
static void count_omitted(struct jg_errors *e, int rule) {
    e->omitted++;
    e->omitted_by_rule[rule]++;
}

void jg_errors_free(struct jg_errors *e) {
    jg_free(e->v);
    jg_buf_free(&e->text);
    jg_buf_free(&e->scratch);
    jg_errors_init(e);
}

void jg_errors_reset(struct jg_errors *e) {
    e->n = 0;
    e->omitted = 0;
    memset(e->omitted_by_rule, 0, sizeof e->omitted_by_rule);
    e->rules = 0;
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
    case JG_ERR_NOT_SUPPORTED:
        return "Unsupported value";
    case JG_ERR_FIELD_FORBIDDEN:
        return "Forbidden";
    case JG_ERR_FORBIDDEN:
        return "";
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
    case JG_ERR_NOT_SUPPORTED:
        return "FieldValueNotSupported";
    case JG_ERR_FIELD_FORBIDDEN:
        return "FieldValueForbidden";
    case JG_ERR_FORBIDDEN:
        return "Forbidden";
    }
    return "InternalError";
}

/* Starts an error: appends the field and the type text; the caller appends the value and then
 * calls finish(). Returns NULL when out of memory. */
static struct jg_field_error *begin(struct jg_errors *e, int rule, enum jg_err_type type,
                                    const char *field) {
    if (!(e->only & (UINT64_C(1) << rule))) return NULL;
    e->rules |= UINT64_C(1) << rule;
    if (e->oom) return NULL;
    if (e->omitted || e->n >= JG_MAX_CAUSES) { /* once one is left out, so are all later ones */
        count_omitted(e, rule);
        return NULL;
    }
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
    fe->value_off = e->text.len;
    fe->value_len = 0;
    return fe;
}

/* ": " and then the bad value, whose bytes value_end marks (jg_err_value). */
static void value_begin(struct jg_errors *e, struct jg_field_error *fe) {
    jg_buf_put_lit(&e->text, ": ");
    fe->value_off = e->text.len;
}
static void value_end(struct jg_errors *e, struct jg_field_error *fe) {
    fe->value_len = e->text.oom ? 0 : e->text.len - fe->value_off;
}

/* " [truncated N units]" after a cut value, nothing when nothing was cut (buf.h). */
static void put_truncated(jg_buf *b, size_t n, const char *unit) {
    if (!n) return;
    jg_buf_putc(b, ' ');
    jg_buf_put_truncated(b, n, unit);
}

static void finish(struct jg_errors *e, struct jg_field_error *fe, const char *detail) {
    if (detail && *detail) {
        size_t n = strlen(detail), k = jg_utf8_cut(detail, n, JG_MAX_VALUE_BYTES);
        jg_buf_put_lit(&e->text, ": ");
        jg_buf_put(&e->text, detail, k);
        put_truncated(&e->text, n - k, "byte");
    }
    if (e->text.oom) {
        e->oom = true;
        return;
    }
    if (e->n > 0 && e->text.len > JG_MAX_ERROR_TEXT) { /* the first error is always kept */
        e->text.len = fe->field_off;
        e->text.data[e->text.len] = '\0';
        count_omitted(e, fe->rule);
        return;
    }
    fe->body_len = e->text.len - fe->body_off;
    e->n++;
}

typedef void (*quote_fn)(jg_buf *b, const char *s, size_t n);

/* A bad value quoted by `q`: at most JG_MAX_VALUE_BYTES of it, then the truncation marker. */
static void put_value(jg_buf *b, const char *s, size_t n, quote_fn q) {
    size_t k = jg_utf8_cut(s, n, JG_MAX_VALUE_BYTES);
    q(b, s, k);
    put_truncated(b, n - k, "byte");
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
    value_begin(e, fe);
    jg_buf_put_i64(&e->text, v);
    value_end(e, fe);
    finish(e, fe, detail);
}

void jg_err_invalid_gostr(struct jg_errors *e, int rule, const char *field, jg_str v,
                          const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    value_begin(e, fe);
    put_value(&e->text, v.p, v.n, jg_buf_go_quote);
    value_end(e, fe);
    finish(e, fe, detail);
}

void jg_err_invalid_jsonstr(struct jg_errors *e, int rule, const char *field, jg_opt_str v,
                            const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    value_begin(e, fe);
    if (v.set)
        put_value(&e->text, v.s.p, v.s.n, jg_buf_json_string);
    else
        jg_buf_puts(&e->text, "null");
    value_end(e, fe);
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
    value_begin(e, fe);
    if (!v.set || (v.sec == GO_ZERO_TIME_UNIX && v.nsec == 0)) {
        jg_buf_puts(&e->text, "null");
    } else {
        jg_buf_putc(&e->text, '"');
        jg_buf_put_time(&e->text, v.sec); /* metav1.Time drops sub-second precision */
        jg_buf_putc(&e->text, '"');
    }
    value_end(e, fe);
    finish(e, fe, detail);
}

/* A JSON list of strings; `budget` (bytes of the value, quotes and commas counted) is shared by
 * the lists of one value: items past it are counted in the marker, a long item is cut. */
static void put_json_list(jg_buf *b, const jg_str_list *l, size_t *budget) {
    if (!l->set) {
        jg_buf_puts(b, "null");
        return;
    }
    jg_buf_putc(b, '[');
    size_t i = 0;
    for (; i < l->n; i++) {
        if (*budget == 0) break;
        jg_str it = l->items[i];
        size_t k = jg_utf8_cut(it.p, it.n, *budget);
        if (i) jg_buf_putc(b, ',');
        jg_buf_json_string(b, it.p, k);
        put_truncated(b, it.n - k, "byte");
        size_t used = k + 3; /* two quotes and a comma */
        *budget = k < it.n || used >= *budget ? 0 : *budget - used;
    }
    put_truncated(b, l->n - i, "item");
    jg_buf_putc(b, ']');
}

void jg_err_invalid_uncounted(struct jg_errors *e, int rule, const char *field,
                              const jg_str_list *succeeded, const jg_str_list *failed,
                              const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_INVALID, field);
    if (!fe) return;
    size_t budget = JG_MAX_VALUE_BYTES;
    value_begin(e, fe);
    jg_buf_puts(&e->text, "{\"Succeeded\":");
    put_json_list(&e->text, succeeded, &budget);
    jg_buf_puts(&e->text, ",\"Failed\":");
    put_json_list(&e->text, failed, &budget);
    jg_buf_putc(&e->text, '}');
    value_end(e, fe);
    finish(e, fe, detail);
}

void jg_err_duplicate_json(struct jg_errors *e, int rule, const char *field, jg_str v) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_DUPLICATE, field);
    if (!fe) return;
    value_begin(e, fe);
    put_value(&e->text, v.p, v.n, jg_buf_json_string);
    value_end(e, fe);
    finish(e, fe, NULL);
}

void jg_err_not_supported(struct jg_errors *e, int rule, const char *field, jg_str v,
                          const jg_str *valid, size_t n) {
    jg_err_not_supported_note(e, rule, field, v, valid, n, (jg_str){"", 0});
}

void jg_err_not_supported_note(struct jg_errors *e, int rule, const char *field, jg_str v,
                               const jg_str *valid, size_t n, jg_str note) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_NOT_SUPPORTED, field);
    if (!fe) return;
    value_begin(e, fe);
    put_value(&e->text, v.p, v.n, jg_buf_go_quote);
    value_end(e, fe);
    jg_buf_reset(&e->scratch);
    if (n) jg_buf_puts(&e->scratch, "supported values: ");
    for (size_t i = 0; i < n && e->scratch.len <= JG_MAX_VALUE_BYTES; i++) {
        if (i) jg_buf_put_lit(&e->scratch, ", ");
        jg_buf_go_quote(&e->scratch, valid[i].p, valid[i].n);
    }
    if (note.n) {
        if (e->scratch.len) jg_buf_put_lit(&e->scratch, "; ");
        jg_buf_put(&e->scratch, note.p, note.n);
    }
    if (e->scratch.oom) {
        e->oom = true;
        return;
    }
    finish(e, fe, e->scratch.data);
}

void jg_err_field_forbidden(struct jg_errors *e, int rule, const char *field, const char *detail) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_FIELD_FORBIDDEN, field);
    if (fe) finish(e, fe, detail);
}

void jg_err_forbidden(struct jg_errors *e, int rule, const char *reason) {
    struct jg_field_error *fe = begin(e, rule, JG_ERR_FORBIDDEN, "");
    if (!fe) return;
    size_t n = strlen(reason), k = jg_utf8_cut(reason, n, JG_MAX_VALUE_BYTES);
    jg_buf_put(&e->text, reason, k); /* no type text: the body is the reason alone */
    put_truncated(&e->text, n - k, "byte");
    finish(e, fe, NULL);
}

size_t jg_errors_find_forbidden(const struct jg_errors *e) {
    size_t i = 0;
    while (i < e->n && e->v[i].type != JG_ERR_FORBIDDEN)
        i++;
    return i;
}

void jg_render_forbidden(const struct jg_errors *e, size_t i, const char *resource,
                         const char *group, jg_str name, jg_buf *out) {
    jg_str body = jg_err_body(e, i);
    /* schema.GroupResource.String(): the resource alone for the core group */
    jg_buf_printf(out, "%s%s%s ", resource, group[0] ? "." : "", group);
    jg_buf_go_quote(out, name.p, name.n);
    jg_buf_puts(out, " is forbidden: ");
    jg_buf_put(out, body.p, body.n);
}

/* field.Error.Error(): "<field>: <body>"; compared for the aggregate's de-duplication. */
static bool same_error(const struct jg_errors *e, size_t a, size_t b) {
    return jg_str_eq(jg_err_field(e, a), jg_err_field(e, b)) &&
           jg_str_eq(jg_err_body(e, a), jg_err_body(e, b));
}

/* "<field>: <body>"; a Forbidden has no field: its body alone. */
static void put_error(const struct jg_errors *e, size_t i, jg_buf *out) {
    jg_str f = jg_err_field(e, i), body = jg_err_body(e, i);
    if (f.n) {
        jg_buf_put(out, f.p, f.n);
        jg_buf_put_lit(out, ": ");
    }
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

/* The aggregate of the kept errors whose rule is in `rules` ("e1" or "[e1, e2]", duplicates
 * dropped); `dup` from mark_duplicates. Returns how many were put. */
static size_t put_aggregate(const struct jg_errors *e, const bool *dup, uint64_t rules,
                            jg_buf *out) {
    size_t distinct = 0, first = 0;
    for (size_t i = 0; i < e->n; i++)
        if (!dup[i] && (rules & (UINT64_C(1) << e->v[i].rule)) && distinct++ == 0) first = i;
    if (distinct == 1) {
        put_error(e, first, out);
    } else if (distinct > 1) {
        jg_buf_putc(out, '[');
        for (size_t i = 0, k = 0; i < e->n; i++) {
            if (dup[i] || !(rules & (UINT64_C(1) << e->v[i].rule))) continue;
            if (k++) jg_buf_put_lit(out, ", ");
            put_error(e, i, out);
        }
        jg_buf_putc(out, ']');
    }
    return distinct;
}

/* dup[] for e's kept errors, or NULL (out->oom set) when out of memory. */
static bool *duplicates(const struct jg_errors *e, jg_buf *out) {
    bool *dup = jg_malloc(e->n * sizeof *dup);
    if (!dup || !mark_duplicates(e, dup)) {
        jg_free(dup);
        out->oom = true;
        return NULL;
    }
    return dup;
}

void jg_render_message(const struct jg_errors *e, const char *kind, const char *group, jg_str name,
                       jg_buf *out) {
    jg_buf_puts(out, kind);
    if (group[0]) { /* schema.GroupKind.String(): the kind alone for the core group */
        jg_buf_putc(out, '.');
        jg_buf_puts(out, group);
    }
    jg_buf_putc(out, ' ');
    jg_buf_go_quote(out, name.p, name.n);
    jg_buf_puts(out, " is invalid");
    if (e->n == 0) return;
    bool *dup = duplicates(e, out);
    if (!dup) return;
    jg_buf_put_lit(out, ": ");
    put_aggregate(e, dup, UINT64_MAX, out);
    jg_free(dup);
    put_truncated(out, e->omitted, "error");
}

void jg_render_audit_value(const struct jg_errors *e, int rule, jg_buf *out) {
    /* room for " [truncated N bytes]" and " [truncated N errors]", N up to 20 digits */
    enum { BYTES_NOTE = 32, ERRORS_NOTE = 48 };
    size_t start = out->len, left_out = jg_errors_omitted_by(e, rule);
    if (e->n) {
        bool *dup = duplicates(e, out);
        if (!dup) return;
        put_aggregate(e, dup, UINT64_C(1) << rule, out);
        jg_free(dup);
    }
    if (out->oom) return;
    size_t n = out->len - start, room = JG_MAX_AUDIT_VALUE_BYTES - (left_out ? ERRORS_NOTE : 0);
    if (n > room) {
        size_t k = jg_utf8_cut(out->data + start, n, room - BYTES_NOTE);
        out->len = start + k;
        out->data[out->len] = '\0';
        put_truncated(out, n - k, "byte");
    }
    /* this rule's own errors left out of the list, not the whole list's count */
    if (left_out && out->len > start) jg_buf_putc(out, ' ');
    if (left_out) jg_buf_put_truncated(out, left_out, "error");
}

/* What a warning starts with: who warns, which rule, and that deny mode refuses it
 * (docs/modes.md "Warnings"). */
static void put_warning_prefix(jg_buf *out, int rule) {
    jg_buf_puts(out, "jobguard (");
    jg_buf_puts(out, jg_rules[rule].name);
    jg_buf_puts(out, ", warn mode; denied in deny mode): ");
}

static size_t warning_prefix_len(int rule) {
    return sizeof "jobguard (, warn mode; denied in deny mode): " - 1 + strlen(jg_rules[rule].name);
}

void jg_render_warnings(const struct jg_errors *e, jg_buf *out) {
    static const char ellipsis[] = "...";
    enum { NOTE_RESERVE = 64 }; /* room for the "more warnings omitted" note */
    if (e->n == 0 && e->omitted == 0) return;
    bool *dup = e->n ? duplicates(e, out) : NULL;
    if (e->n && !dup) return;
    /* `full` stops the rendering (once one warning does not fit, no later one is written, so
     * they stay in order); `left_out` counts exactly what the note stands for: the warnings that
     * did not fit and the errors the list itself left out. */
    size_t total = 0, left_out = e->omitted;
    bool full = false;
    for (size_t i = 0; i < e->n; i++) {
        if (dup[i]) continue;
        jg_str f = jg_err_field(e, i), b = jg_err_body(e, i);
        size_t len = warning_prefix_len(e->v[i].rule) + (f.n ? f.n + 2 : 0) + b.n;
        if (len > JG_MAX_WARNING_BYTES) len = JG_MAX_WARNING_BYTES;
        if (full || total + len > JG_MAX_WARNINGS_TOTAL - NOTE_RESERVE) {
            full = true;
            left_out++;
            continue;
        }
        size_t start = out->len;
        put_warning_prefix(out, e->v[i].rule);
        put_error(e, i, out);
        if (out->oom) break;
        size_t n = out->len - start;
        if (n > JG_MAX_WARNING_BYTES) {
            size_t k = jg_utf8_cut(out->data + start, n, JG_MAX_WARNING_BYTES - 3);
            out->len = start + k;
            jg_buf_put(out, ellipsis, 3);
            n = k + 3;
        }
        total += n;
        jg_buf_putc(out, '\n');
    }
    jg_free(dup);
    if (left_out)
        jg_buf_printf(out, "jobguard: %zu more warning%s omitted\n", left_out,
                      left_out == 1 ? "" : "s");
}

void jg_put_omitted_note(const struct jg_errors *e, jg_buf *out) {
    jg_buf_put_truncated(out, e->omitted, "error");
}
