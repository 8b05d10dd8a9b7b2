/* verdict: Kubernetes field errors (type, field path, bad value, detail) and their rendering,
 * exactly as apimachinery's field.Error.Error()/ErrorBody() and errors.NewInvalid (docs/rules.md
 * §2.6). Each constructor renders at once into the list's text buffer. */
#ifndef JOBGUARD_VERDICT_H
#define JOBGUARD_VERDICT_H

#include "jobguard/buf.h"
#include "jobguard/view.h"

enum jg_err_type {
    JG_ERR_INVALID,   /* "Invalid value", cause reason FieldValueInvalid */
    JG_ERR_REQUIRED,  /* "Required value", FieldValueRequired */
    JG_ERR_TOO_LONG,  /* "Too long", FieldValueTooLong */
    JG_ERR_DUPLICATE, /* "Duplicate value", FieldValueDuplicate */
};

struct jg_field_error {
    int rule; /* enum jg_rule_id */
    enum jg_err_type type;
    size_t field_off, field_len; /* into jg_errors.text */
    size_t body_off, body_len;   /* "Invalid value: 2: detail" */
};

struct jg_errors {
    struct jg_field_error *v;
    size_t n, cap;
    jg_buf text;    /* rendered fields and bodies */
    jg_buf scratch; /* for callers composing a dynamic detail */
    bool oom;
};

void jg_errors_init(struct jg_errors *e);
void jg_errors_free(struct jg_errors *e);
void jg_errors_reset(struct jg_errors *e);

void jg_err_required(struct jg_errors *e, int rule, const char *field, const char *detail);
void jg_err_too_long(struct jg_errors *e, int rule, const char *field, int max_bytes);
void jg_err_invalid_omit(struct jg_errors *e, int rule, const char *field, const char *detail);
void jg_err_invalid_int(struct jg_errors *e, int rule, const char *field, int64_t v,
                        const char *detail);
/* BadValue a Go string: rendered with %q. */
void jg_err_invalid_gostr(struct jg_errors *e, int rule, const char *field, jg_str v,
                          const char *detail);
/* BadValue a *string (or a named string type): rendered as JSON, `null` when unset. */
void jg_err_invalid_jsonstr(struct jg_errors *e, int rule, const char *field, jg_opt_str v,
                            const char *detail);
/* BadValue a *metav1.Time: JSON RFC 3339 UTC whole seconds, `null` when unset or zero. */
void jg_err_invalid_time(struct jg_errors *e, int rule, const char *field, jg_time v,
                         const char *detail);
/* BadValue the internal UncountedTerminatedPods struct (no json tags):
 * {"Succeeded":[..],"Failed":null}. */
void jg_err_invalid_uncounted(struct jg_errors *e, int rule, const char *field,
                              const jg_str_list *succeeded, const jg_str_list *failed,
                              const char *detail);
/* Duplicate of a named string type (types.UID): rendered as JSON. */
void jg_err_duplicate_json(struct jg_errors *e, int rule, const char *field, jg_str v);

static inline jg_str jg_err_field(const struct jg_errors *e, size_t i) {
    return (jg_str){e->text.data + e->v[i].field_off, e->v[i].field_len};
}
static inline jg_str jg_err_body(const struct jg_errors *e, size_t i) {
    return (jg_str){e->text.data + e->v[i].body_off, e->v[i].body_len};
}
const char *jg_err_reason(enum jg_err_type t); /* FieldValueInvalid, ... */

/* errors.NewInvalid's message: `<Kind>.<group> "<name>" is invalid: <aggregate>`, where the
 * aggregate is the single distinct error string or `[e1, e2, ...]` with duplicates dropped. */
void jg_render_message(const struct jg_errors *e, const char *kind, const char *group, jg_str name,
                       jg_buf *out);

/* RFC 3339 UTC whole seconds, as metav1.Time marshals ("2006-01-02T15:04:05Z"). */
void jg_buf_put_time(jg_buf *b, int64_t sec);

#endif
