/* policy: the policy file (JSON, read with jansson) read into an immutable snapshot of the model
 * the engine reads (compiled.h; docs/policy.md). A load builds a whole new snapshot and validates
 * all of it; the server swaps one pointer, so a request is decided by exactly one snapshot from
 * start to end. Nothing is changed after jg_policy_load_* returns. */
#ifndef JOBGUARD_POLICY_H
#define JOBGUARD_POLICY_H

#include "jobguard/compiled.h"
#include "jobguard/rules.h"

#include <stdbool.h>
#include <stddef.h>

/* Reads and validates a policy. On failure returns NULL and writes into `err` one line naming the
 * file, the position (line:column, or the JSON path) and what is wrong. */
struct jg_policy *jg_policy_load_file(const char *path, char *err, size_t errcap);
struct jg_policy *jg_policy_load_buffer(const char *name, const char *json, size_t len, char *err,
                                        size_t errcap);
void jg_policy_free(struct jg_policy *p);

/* The sha256 (hex) of data, as the policy's digest is written ("" if OpenSSL fails). */
void jg_sha256_hex(const char *data, size_t len, char out[65]);

/* Fills every JG_MODE_UNSET entry of `cfg->mode` with the policy's mode (deny when `p` is NULL),
 * keeping the modes the flags set, and points `cfg->policy` at `p`. Rules in `cfg->disabled` stay
 * off whatever their mode. */
void jg_policy_apply(const struct jg_policy *p, struct jg_config *cfg);

#endif
