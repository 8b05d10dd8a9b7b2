/* names: Kubernetes name syntaxes shared by the managedBy check and the policy reader. */
#ifndef JOBGUARD_NAMES_H
#define JOBGUARD_NAMES_H

#include "jobguard/view.h"

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* as a full match (no length
 * limit: callers apply theirs). */
bool jg_is_dns1123_subdomain(jg_str s);

#endif
