/* policywatch: the policy snapshot the server decides with (docs/policy.md "Reloading").
 * A snapshot is the engine configuration with the policy applied; it is reference counted: the
 * request handler holds one from before jg_admit to after, the reload swaps the current one
 * under a mutex and drops its own reference, and the last holder frees it. So a request is
 * decided by exactly one policy, and a reload never frees a policy under a request. The file is
 * one of the file watcher's entries (watch.h), looked at after the certificate pair. */
#ifndef JOBGUARD_SERVER_POLICYWATCH_H
#define JOBGUARD_SERVER_POLICYWATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "jobguard/policy.h"

struct jg_snapshot {
    struct jg_config cfg;     /* what jg_admit reads; cfg.policy points at `policy` */
    struct jg_policy *policy; /* NULL without a policy file */
};

/* Builds the first snapshot from `base` (flags) and the file at path (NULL or "": none). On an
 * invalid file returns false with the file, position and problem in err. */
bool jg_policy_watch_init(const char *path, const struct jg_config *base, char *err, size_t n);

/* The current snapshot, held until jg_snapshot_release. Never NULL after init. */
const struct jg_snapshot *jg_snapshot_acquire(void);
void jg_snapshot_release(const struct jg_snapshot *s);

/* Reloads the file if it changed (force: whatever its stat says, as on SIGHUP). An invalid file
 * is refused, logged and counted; the current snapshot keeps serving. Watcher thread only.
 * Returns whether the file was read (so OpenSSL hashed it). */
bool jg_policy_check_reload(bool force);

/* Drops the current snapshot. Call once nothing can acquire any more. */
void jg_policy_watch_cleanup(void);

#endif
