/* values: the policy of a Helm values file (`.policy`) and the digest the chart computes of it. */
#ifndef JOBGUARD_VALUES_H
#define JOBGUARD_VALUES_H

#include "jobguard/policy.h"

#include <stdbool.h>

/* The `.policy` of a Helm values file (YAML or JSON), read as the chart writes it for the server
 * (`toJson .Values.policy`): its sha256 is that file's. NULL with *absent set when .policy is
 * absent, null or {} (the chart installs no policy file); NULL with the reason in err otherwise. */
struct jg_policy *jg_policy_load_values(const char *file, bool *absent, char *err, size_t errlen);

/* sha256 (hex) of a policy file's tree as Helm's toJson writes it (file NULL: no policy, "{}"):
 * the digest the chart computes of its `.Values.policy` (`toJson | sha256sum`). */
bool jg_policy_chart_sha256(const char *file, char out[65], char *err, size_t errlen);

#endif
