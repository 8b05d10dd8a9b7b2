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

/* Output bounds. Kubernetes has none; these bind only far beyond any status the Job controller
 * writes (at most 500 UIDs per uncounted list), so that no request within the 7 MiB body limit can
 * make a response, a log line or the memory behind them grow without bound (README "Limits"). */
#define JG_MAX_CAUSES 2000           /* errors kept; later ones are counted, not rendered */
#define JG_MAX_ERROR_TEXT (1u << 20) /* bytes of "<field>: <body>" over all kept errors */
#define JG_MAX_VALUE_BYTES 65536     /* bytes of one bad value (or detail) quoted in a body */

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
    size_t omitted; /* errors beyond JG_MAX_CAUSES or JG_MAX_ERROR_TEXT: counted only */
    uint64_t rules; /* bit (1 << rule) of every error, omitted ones included */
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
 * aggregate is the single distinct error string or `[e1, e2, ...]` with duplicates dropped; when
 * errors were omitted, followed by ` [truncated N errors]` (jg_put_omitted_note). */
void jg_render_message(const struct jg_errors *e, const char *kind, const char *group, jg_str name,
                       jg_buf *out);

/* "[truncated N errors]" (N = e->omitted): the note that ends the message and the causes. */
void jg_put_omitted_note(const struct jg_errors *e, jg_buf *out);

/* RFC 3339 UTC whole seconds, as metav1.Time marshals ("2006-01-02T15:04:05Z"). */
void jg_buf_put_time(jg_buf *b, int64_t sec);

#endif
