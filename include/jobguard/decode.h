/* decode: the only module that reads request JSON. Fills a jg_review or says precisely why not. */
#ifndef JOBGUARD_DECODE_H
#define JOBGUARD_DECODE_H

#include "jobguard/view.h"

/* Limits, each with its reason. */
#define JG_MAX_BODY_BYTES                                                                          \
    (7u * 1024u * 1024u)       /* controller-runtime's maxRequestSize: 2×3 MB objects + 1 MB */
#define JG_MAX_JSON_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH, stack safety */

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

/* Builds a review from raw objects (what `jobguard check --old/--new` has): `new_json` alone is a
 * CREATE; with `old_json` an UPDATE of `sub_resource` ("" or "status"). The target (Job or
 * CronJob) comes from the new object's kind (Job when absent). */
enum jg_decode_status jg_decode_objects(const char *old_json, size_t old_len, const char *new_json,
                                        size_t new_len, const char *sub_resource, jg_review *out,
                                        jg_decode_error *err);

void jg_review_free(jg_review *r);

/* RFC 3339 as Go's time.Parse(time.RFC3339, s) accepts it (fractional seconds and offsets
 * allowed). Returns false when unparsable. */
bool jg_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec);

#endif
