/* verdict: Kubernetes field errors (type, field path, bad value, detail) and their rendering,
 * exactly as apimachinery's field.Error.Error()/ErrorBody() and errors.NewInvalid (docs/rules.md
 * §2.6). Each constructor renders at once into the list's text buffer. */
#ifndef JOBGUARD_VERDICT_H
#define JOBGUARD_VERDICT_H

#include "jobguard/buf.h"
#include "jobguard/view.h"

enum jg_err_type {
    JG_ERR_INVALID,         /* "Invalid value", cause reason FieldValueInvalid */
    JG_ERR_REQUIRED,        /* "Required value", FieldValueRequired */
    JG_ERR_TOO_LONG,        /* "Too long", FieldValueTooLong */
    JG_ERR_DUPLICATE,       /* "Duplicate value", FieldValueDuplicate */
    JG_ERR_NOT_SUPPORTED,   /* "Unsupported value", FieldValueNotSupported */
    JG_ERR_FIELD_FORBIDDEN, /* field.Forbidden: "Forbidden: <detail>", FieldValueForbidden */
    /* Not a field error: the request is refused with 403 Forbidden (errors.NewForbidden). The
     * field is empty and the body is the reason alone, e.g. `User "u" cannot update ...`. */
    JG_ERR_FORBIDDEN,
};

/* Output bounds. Kubernetes has none; these bind only far beyond any status the Job controller
 * writes (at most 500 UIDs per uncounted list), so that no request within the 7 MiB body limit can
 * make a response, a log line or the memory behind them grow without bound (docs/limits.md). */
#define JG_MAX_CAUSES 2000           /* errors kept; later ones are counted, not rendered */
#define JG_MAX_ERROR_TEXT (1u << 20) /* bytes of "<field>: <body>" over all kept errors */
#define JG_MAX_VALUE_BYTES 65536     /* bytes of one bad value (or detail) quoted in a body */

/* Warn and audit modes (docs/modes.md). Kubernetes asks for warnings of at most 120 characters
 * if possible, may truncate those over 256 and ignores them past 4096 characters in all. */
#define JG_MAX_WARNING_BYTES 256       /* one warning; longer ones end in "..." */
#define JG_MAX_WARNINGS_TOTAL 4096     /* all warnings of one response, the last note included */
#define JG_MAX_AUDIT_VALUE_BYTES 10240 /* one audit annotation value (VAP truncates at 10 KiB) */

struct jg_field_error {
    int rule; /* enum jg_rule_id */
    enum jg_err_type type;
    size_t field_off, field_len; /* into jg_errors.text */
    size_t body_off, body_len;   /* "Invalid value: 2: detail" */
    size_t value_off, value_len; /* the bad value as the body renders it ("2", "\"x\""); len 0:
                                  * the error has none (Required, Too long, Forbidden, ...) */
};

struct jg_errors {
    struct jg_field_error *v;
    size_t n, cap;
    jg_buf text;    /* rendered fields and bodies */
    jg_buf scratch; /* for callers composing a dynamic detail */
    size_t omitted; /* errors beyond JG_MAX_CAUSES or JG_MAX_ERROR_TEXT: counted only */
    /* the same per rule (index enum jg_rule_id), for audit values: read with jg_errors_omitted_by.
     * Cleared whenever a list starts, five times per request: a bit per rule saying which entries
     * are set instead saved 736 instructions per review: 1.5 % of a 3.9 KB one, 0.6 % of 16.7 KB */
    size_t omitted_by_rule[64];
    uint64_t rules; /* bit (1 << rule) of every error, omitted ones included */
    /* Rules recorded (bit (1 << rule)); errors of the others are dropped unseen, uncounted.
     * jg_errors_init sets every bit; the engine runs one list per mode (rules.h). */
    uint64_t only;
    bool oom;
};

void jg_errors_init(struct jg_errors *e);
/* Errors of `rule` left out (counted only). */
static inline size_t jg_errors_omitted_by(const struct jg_errors *e, int rule) {
    return e->omitted_by_rule[rule];
}
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
/* field.NotSupported of a Go string: `Unsupported value: "x": supported values: "a", "b"`, the
 * values %q-quoted in the order given (callers sort them); with n == 0 no detail at all, as
 * apimachinery renders an empty list. The list is cut at JG_MAX_VALUE_BYTES like a detail. */
void jg_err_not_supported(struct jg_errors *e, int rule, const char *field, jg_str v,
                          const jg_str *valid, size_t n);
/* The same with jobguard's own note after the list, `; <note>` (nothing when note is empty):
 * Kubernetes' text stays the prefix (docs/rules.md §11.1). */
void jg_err_not_supported_note(struct jg_errors *e, int rule, const char *field, jg_str v,
                               const jg_str *valid, size_t n, jg_str note);
/* field.Forbidden(field, detail): `<field>: Forbidden: <detail>` (a 422 cause, unlike the
 * request-level Forbidden below). */
void jg_err_field_forbidden(struct jg_errors *e, int rule, const char *field, const char *detail);
/* A request-level Forbidden (403): `reason` is what follows `<resource>.<group> "<name>" is
 * forbidden: ` in the status message (jg_render_forbidden). */
void jg_err_forbidden(struct jg_errors *e, int rule, const char *reason);

static inline jg_str jg_err_field(const struct jg_errors *e, size_t i) {
    return (jg_str){e->text.data + e->v[i].field_off, e->v[i].field_len};
}
static inline jg_str jg_err_body(const struct jg_errors *e, size_t i) {
    return (jg_str){e->text.data + e->v[i].body_off, e->v[i].body_len};
}
static inline jg_str jg_err_value(const struct jg_errors *e, size_t i) {
    return (jg_str){e->text.data + e->v[i].value_off, e->v[i].value_len};
}
const char *jg_err_reason(enum jg_err_type t); /* FieldValueInvalid, ... */

/* errors.NewInvalid's message: `<Kind>.<group> "<name>" is invalid: <aggregate>`, where the
 * aggregate is the single distinct error string or `[e1, e2, ...]` with duplicates dropped; when
 * errors were omitted, followed by ` [truncated N errors]` (jg_put_omitted_note). */
void jg_render_message(const struct jg_errors *e, const char *kind, const char *group, jg_str name,
                       jg_buf *out);

/* The warnings for the errors of `e` (docs/modes.md): one line each, `jobguard (<rule ID>, warn
 * mode; denied in deny mode): <field>: <body>` (the body alone for a Forbidden), duplicates
 * dropped, each at most JG_MAX_WARNING_BYTES, all together at most JG_MAX_WARNINGS_TOTAL; the
 * warnings that fit are written in order, and those past it (and the errors left out of the list)
 * are counted in one last `jobguard: N more warnings omitted`. Appends each followed by '\n' (no
 * warning contains one). */
void jg_render_warnings(const struct jg_errors *e, jg_buf *out);

/* The audit annotation value for the errors of `rule` in `e`: the aggregate as in the denial
 * message (`e1` or `[e1, e2]`), cut at JG_MAX_AUDIT_VALUE_BYTES, then ` [truncated N errors]` when
 * N errors of this rule were left out of the list (the marker alone when all were). Appends
 * nothing when the rule has no error. */
void jg_render_audit_value(const struct jg_errors *e, int rule, jg_buf *out);

/* errors.NewForbidden's message: `<resource>.<group> "<name>" is forbidden: <reason>` for error
 * i (a JG_ERR_FORBIDDEN). */
void jg_render_forbidden(const struct jg_errors *e, size_t i, const char *resource,
                         const char *group, jg_str name, jg_buf *out);

/* Index of the first JG_ERR_FORBIDDEN error, or e->n when there is none. */
size_t jg_errors_find_forbidden(const struct jg_errors *e);

/* "[truncated N errors]" (N = e->omitted): the note that ends the message and the causes. */
void jg_put_omitted_note(const struct jg_errors *e, jg_buf *out);

/* RFC 3339 UTC whole seconds, as metav1.Time marshals ("2006-01-02T15:04:05Z"). */
void jg_buf_put_time(jg_buf *b, int64_t sec);

#endif
