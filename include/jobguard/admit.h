/* admit: the one entry point shared by the CLI and the server: AdmissionReview bytes in,
 * response AdmissionReview bytes out (decode -> rules -> verdict -> encode). */
#ifndef JOBGUARD_ADMIT_H
#define JOBGUARD_ADMIT_H

#include "jobguard/buf.h"
#include "jobguard/decode.h"
#include "jobguard/rules.h"

/* The longest user name an outcome (and so a log line) holds whole: a service account's
 * `system:serviceaccount:<namespace>:<name>` is at most 22 + 63 + 1 + 253 = 339 bytes, and the
 * policy's user names are at most 512 (docs/policy.md "Limits"). */
#define JG_OUTCOME_USER_BYTES 512

enum jg_verdict {
    JG_VERDICT_ALLOWED,     /* allowed: true */
    JG_VERDICT_DENIED,      /* allowed: false by deny-mode rules: status.code 422 Invalid, or
                             * 403 Forbidden (Policy-StatusWriters) */
    JG_VERDICT_BAD_REQUEST, /* allowed: false, status.code 400: input not decodable */
    JG_VERDICT_ERROR,       /* allowed: false, status.code 500: out of memory */
};

/* What the transport needs for logs and metrics, copied out. A request string longer than its
 * field keeps its first bytes and ends in ` [truncated N bytes]` (jg_copy_cut), so a log never
 * names a different user or object than the request did. */
struct jg_outcome {
    enum jg_verdict verdict;
    int code; /* response status.code: 0 when allowed, else 422 / 403 / 400 / 500 */
    bool dry_run;
    char uid[128];       /* Kubernetes sends a 36-byte UUID */
    char namespace_[64]; /* a DNS label: 63 bytes */
    char name[254];      /* a DNS subdomain: 253 bytes */
    char user[JG_OUTCOME_USER_BYTES + 1];
    char operation[16];    /* "CREATE", ... ; "" when undecodable */
    char resource[64];     /* request.resource.resource, e.g. "jobs" */
    char sub_resource[32]; /* "" or "status" */
    char kind[64];       /* the target's kind: "Job", "CronJob", "JobSet", ... ("Job" for others) */
    uint64_t rules;      /* bit (1 << enum jg_rule_id) for every deny-mode rule that fired */
    uint64_t rules_warn; /* ... every warn-mode rule that fired */
    uint64_t rules_audit; /* ... every audit-mode rule that fired */
    size_t n_errors;      /* deny-mode errors, duplicates and omitted ones (verdict.h) included */
    jg_buf message;       /* status.message of a denial or error; owned */
    jg_buf causes; /* denial: one "<field>: <body>\n" line per cause, then "[truncated N errors]\n"
                    * when some were omitted; 403: the reason line; owned */
    jg_buf warnings;        /* the response's warnings, one per line; owned */
    struct jg_errors audit; /* the audit-mode errors, for the `admission audit` log line; owned */
};

void jg_outcome_init(struct jg_outcome *o);
void jg_outcome_free(struct jg_outcome *o);

/* Decides one AdmissionReview. `response` is reset and receives the response JSON; `out` (may be
 * NULL) receives the outcome. Never crashes on any input; on allocation failure the response is a
 * small 500 AdmissionReview, or, if even that cannot be allocated, `response->oom` is set and the
 * caller sends jg_oom_response instead. Thread-safe (no shared state besides the allocator hooks).
 */
enum jg_verdict jg_admit(const char *body, size_t len, const struct jg_config *cfg,
                         jg_buf *response, struct jg_outcome *out);

extern const char jg_oom_response[];

/* The same for an already decoded review (used by `jobguard check --old/--new`). */
enum jg_verdict jg_admit_review(const jg_review *review, const struct jg_config *cfg,
                                jg_buf *response, struct jg_outcome *out);

/* Rule IDs of the bits in `rules`, for logs: appends `"ID1","ID2"` (JSON strings, comma-separated).
 */
void jg_outcome_put_rule_names(const struct jg_outcome *o, jg_buf *out);
/* The same for any rule set (e.g. rules_warn). */
void jg_put_rule_names(uint64_t rules, jg_buf *out);

#endif
