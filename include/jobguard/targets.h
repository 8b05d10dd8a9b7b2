/* targets: the workload kinds jobguard knows, one const row per kind (docs/targets.md): batch/v1
 * Job, CronJob and the batch CRDs. A policy file's `targets` row with the same group and kind
 * replaces a built-in row (docs/policy.md). */
#ifndef JOBGUARD_TARGETS_H
#define JOBGUARD_TARGETS_H

#include "jobguard/compiled.h"

extern const struct jg_policy_target jg_builtin_targets[];
extern const size_t jg_builtin_target_count;

/* The row for group/kind in effect under p (NULL p = built-ins only): the policy's own row if it
 * has one, else the built-in row, else NULL. */
const struct jg_policy_target *jg_target_find(const struct jg_policy *p, const char *group,
                                              const char *kind);

/* True when p has a row replacing built-in row i. */
bool jg_target_builtin_replaced(const struct jg_policy *p, size_t i);

/* The row deciding a request for `name` of `group` at `version` under p (NULL p = built-ins
 * only): `name` is a resource (plural) or, with by_kind, a kind. Policy rows come first, then the
 * built-in rows they do not replace; among the matching rows the first that lists `version`, else
 * the first match (a version the row does not list is still that kind: the webhook registration
 * decides which versions are sent). MPIJob's two built-in rows differ by version. NULL when no row
 * names it. */
const struct jg_policy_target *jg_target_route(const struct jg_policy *p, jg_str group,
                                               jg_str version, jg_str name, bool by_kind);

#endif
