#ifndef JOBGUARD_DECODE_FIELDS_H
#define JOBGUARD_DECODE_FIELDS_H
/* The decoder's typed readers: with the cursor at a member's value, read it as the Go type
 * kube-apiserver would decode it into (JSON null is Go's zero value: absent), or fail with the
 * member's path and what was there. Internal to src/engine/decode/. */
#include "jobguard/compiled.h"
#include "scan.h"

/* Field paths for messages ("request.object.status"): built on every member visited, so plain
 * copies rather than snprintf. Truncated to fit; real paths are far shorter. */
#define PATH_MAX_LEN 160
void rd_join_path(char out[PATH_MAX_LEN], const char *base, const char *child);

/* "an object", "a string", "an integer", ... for the value at the cursor. */
const char *rd_type_name(struct scanner *sc);
status_t rd_wrong_type(struct scanner *sc, const char *path, const char *key, const char *want);

status_t rd_str(struct scanner *sc, const char *path, const char *key, jg_opt_str *out);
status_t rd_i32(struct scanner *sc, const char *path, const char *key, jg_opt_i32 *out);
status_t rd_bool(struct scanner *sc, const char *path, const char *key, bool *out);
status_t rd_time(struct scanner *sc, const char *path, const char *key, jg_time *out);
/* An array of strings (null elements are ""), owned by the review. */
status_t rd_str_list(struct scanner *sc, const char *path, const char *key, jg_str_list *out);
/* Opens an object member: *present=false for null. */
status_t rd_object(struct scanner *sc, const char *path, const char *key, struct agg *a,
                   bool *present);

/* Walks the members of the object just opened, calling `fn(ctx, index)` for the keys in `names`
 * (at most 32; a repeat of one is refused as a duplicate key) and skipping the rest. */
typedef status_t (*member_fn)(struct scanner *sc, void *ctx, int which);
status_t rd_members(struct scanner *sc, struct agg *a, const char *const *names, int n,
                    member_fn fn, void *ctx);

/* One object of a target at the cursor (an object, checked by the caller): job.c reads Job and
 * CronJob, crd.c a CRD target by its policy row's paths. */
status_t rd_job(struct scanner *sc, const char *path, enum jg_target target,
                const struct jg_policy_target *row, struct jg_job *job);
status_t rd_crd(struct scanner *sc, const char *what, const struct jg_policy_target *row,
                struct jg_job *job);

#endif
