/* The reference decoder: AdmissionReview bytes -> the same jg_review view as src/engine/decode/,
 * written independently on top of jansson (a whole-document tree, then a walk over it). Test and
 * fuzz code only, never linked into the server: it exists to check the request path's scanner (see
 * refdiff.h and docs/server.md, "The reference decoder"). */
#ifndef JOBGUARD_TESTS_REFDECODE_H
#define JOBGUARD_TESTS_REFDECODE_H

#include "jobguard/decode.h"

#include <jansson.h>

/* jansson's limits the comparator (refdiff.c) works around, told to the reference: */
struct ref_bignum {
    long long stand_in; /* an in-range integer written in place of ... */
    char text[48];      /* ... this out-of-int64 integer (first 40 bytes, NUL-terminated) */
};

struct jg_policy;

struct ref_options {
    char marker; /* keys starting with this byte repeat the key after it (0: none) */
    const struct ref_bignum *bignums;
    size_t n_bignums;
    /* Whose target rows route a CRD request (NULL: the built-in rows only), as the policy given
     * to jg_decode_review_policy. */
    const struct jg_policy *policy;
};

enum ref_status {
    REF_OK,          /* view filled */
    REF_BAD_REQUEST, /* a usable JSON document that is not a usable AdmissionReview: message */
    REF_DUPLICATE,   /* a repeated key where the decoder reads it (a marker key, see above) */
    REF_NOT_JSON,    /* jansson refused the bytes: json_error */
};

struct ref_result {
    enum ref_status status;
    char message[512];
    json_error_t json_error;
};

struct ref_review {
    jg_review review; /* review.req is the view; review.priv is unused */
    json_t *root;     /* the strings of the view point into it */
    jg_str *lists[5]; /* uncounted arrays (object and oldObject, succeeded and failed), groups */
    size_t n_lists;
    void **owned; /* CRD targets: nested arrays and their field paths (freed with the review) */
    size_t n_owned;
};

/* Decodes `body`; `opt` may be NULL. Always call ref_review_free. On REF_BAD_REQUEST and
 * REF_DUPLICATE, review.req.uid and api_version hold what the scanner would echo. */
enum ref_status ref_decode_review(const char *body, size_t len, const struct ref_options *opt,
                                  struct ref_review *out, struct ref_result *res);

void ref_review_free(struct ref_review *r);

/* jansson flags used, for the comparator's own loads. */
#define REF_JSON_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES)

#endif
