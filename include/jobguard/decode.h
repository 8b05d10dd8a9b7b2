/* decode: the only module that reads request JSON. Fills a jg_review or says precisely why not. */
#ifndef JOBGUARD_DECODE_H
#define JOBGUARD_DECODE_H

#include "jobguard/view.h"

/* Limits, each with its reason. */
#define JG_MAX_BODY_BYTES                                                                          \
    (7u * 1024u * 1024u)          /* controller-runtime's maxRequestSize: 2×3 MB objects + 1 MB */
#define JG_MAX_JSON_DEPTH 2048    /* jansson's JSON_PARSER_MAX_DEPTH, stack safety */
#define JG_MAX_NAMESPACE_BYTES 63 /* a namespace is a DNS label; the API server sends no longer */

/* The message refusing a namespace longer than JG_MAX_NAMESPACE_BYTES: field, limit, length. */
#define JG_NAMESPACE_TOO_LONG_FMT                                                                  \
    "%s: must be no more than %d bytes (a namespace is a DNS label), got %zu"

typedef struct jg_review {
    struct jg_request req;
    void *priv; /* decoder-owned memory the slices point into */
} jg_review;

enum jg_decode_status {
    JG_DECODE_OK = 0,
    JG_DECODE_BAD_REQUEST, /* input is not a usable AdmissionReview / Job: answer 400 */
    JG_DECODE_NO_MEMORY,   /* allocation failed: answer 500 */
};

typedef struct jg_decode_error {
    enum jg_decode_status status;
    char message[512];
} jg_decode_error;

/* Decodes an AdmissionReview (admission.k8s.io/v1 or v1beta1). On failure out->req.uid and
 * api_version are still filled when they could be read, so the answer can echo them. Always call
 * jg_review_free, whatever the result. */
enum jg_decode_status jg_decode_review(const char *body, size_t len, jg_review *out,
                                       jg_decode_error *err);

struct jg_policy;

/* The structural pass's level (docs/decoder.md). jg_scanner_force names one for every body, small
 * ones too: "scalar", "portable", "sse2" or "avx2" (a level the CPU or build lacks falls back to
 * the best it has); NULL returns to the automatic choice; any other name: false, nothing changed.
 * Call it before decoding starts. The engine reads no environment: the CLI passes
 * JOBGUARD_SCANNER here, the tests and benches their own choice. */
bool jg_scanner_force(const char *level);
/* The level bodies of 6 KiB and more are read with now (forced, else the CPU's best). */
const char *jg_scanner_level_name(void);

/* The same, with the policy whose target rows route CRD requests (NULL: the built-in rows). The
 * request's objects are decoded only for a target (a row of the table); `jg_decode_review` is
 * this with no policy. */
enum jg_decode_status jg_decode_review_policy(const char *body, size_t len,
                                              const struct jg_policy *policy, jg_review *out,
                                              jg_decode_error *err);

/* What `check` and `scan` say of a raw object besides its review. The slices point into the
 * object or into memory owned by the review (valid until jg_review_free). */
struct jg_object_meta {
    jg_opt_str api_version, kind; /* the new object's own, as written */
    jg_opt_str uid;               /* its metadata.uid (a stored object has one) */
    bool not_target; /* refused only because its kind is no target (scan counts it as skipped) */
};

struct jg_decode_objects_opts {
    const struct jg_policy *policy; /* target rows (NULL: built-in only) */
    const char *kind;     /* "Kind" or "Kind.group": which target, when the object cannot say */
    const char *resource; /* "plural" or "plural.group": the same by resource (wins over kind) */
    struct jg_object_meta *meta; /* NULL, or receives the new object's meta, also on refusal */
};

/* Builds a review from raw objects (what `jobguard check --old/--new` has): `new_json` alone is a
 * CREATE; with `old_json` an UPDATE of `sub_resource` ("" or "status"). The target comes from
 * opts->resource or opts->kind, else from the new object's apiVersion and kind; an object without
 * them is refused (`Object 'Kind' is missing`, as kubectl says), and so is a kind that is no
 * target, with the reason. `opts` may be NULL. */
enum jg_decode_status jg_decode_objects(const char *old_json, size_t old_len, const char *new_json,
                                        size_t new_len, const char *sub_resource,
                                        const struct jg_decode_objects_opts *opts, jg_review *out,
                                        jg_decode_error *err);

void jg_review_free(jg_review *r);

/* RFC 3339 as Go's time.Parse(time.RFC3339, s) accepts it (fractional seconds and offsets
 * allowed). Returns false when unparsable. */
bool jg_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec);

#endif
