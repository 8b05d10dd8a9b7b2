/* compiled: the policy as the engine reads it (docs/policy.md): the rows, lists and modes the
 * loader (policy.h) fills from the file, and the lookups built over them once per snapshot. The
 * engine owns this model; it never reads the file. Nothing here is changed after the loader
 * returns, so one snapshot decides a request from start to end. */
#ifndef JOBGUARD_COMPILED_H
#define JOBGUARD_COMPILED_H

#include "jobguard/match.h"
#include "jobguard/rules.h"

#include <stdbool.h>
#include <stddef.h>

struct jg_strv {
    const char **v; /* NUL-terminated strings; owned by a loaded policy, literals in built-ins */
    size_t n;
};

struct jg_policy_nested {
    const char *path;           /* dotted, "[*]" for every element of a list */
    const char *reserved_value; /* the nested kind's own value; "" = the copy must be absent */
    /* One entry per "[*]" of path, outermost first: the field that keys the list's elements
     * (its listMapKey, e.g. "name" for JobSet's replicatedJobs), so that an UPDATE matches a
     * copy with the stored one by key; "" = matched by element index (docs/targets.md).
     * n == 0 = every list of the path by index. */
    struct jg_strv list_keys;
};

/* One workload kind that delegates through a managedBy field. */
struct jg_policy_target {
    const char *group; /* "" for the core group */
    struct jg_strv versions;
    const char *kind;
    const char *resource;        /* plural, e.g. "jobsets" */
    const char *managed_by_path; /* dotted, e.g. "spec.runPolicy.managedBy" */
    const char *reserved_value;  /* the project's own controller, e.g.
                              "jobset.sigs.k8s.io/jobset-controller" */
    struct jg_policy_nested *nested;
    size_t n_nested;
    bool check_format;         /* format and 63-byte length checks (default true) */
    bool delegation_supported; /* false: Target-DelegationUnsupported applies (default true) */
};

struct jg_policy_controller {
    const char *name;            /* a managedBy value */
    size_t name_len;             /* strlen(name), for the request path */
    struct jg_strv namespaces;   /* name globs; empty (n == 0) = every namespace */
    bool has_status_writers;     /* "statusWriters" given: the binding applies to this controller */
    struct jg_strv writer_users; /* incl. "system:serviceaccount:NS:NAME" */
    struct jg_strv writer_groups;
    /* The lists above as the rules look them up (jg_policy_build_lookups) */
    struct jg_nsmatch ns_match;
    struct jg_strset writer_user_set, writer_group_set;
};

struct jg_policy {
    struct jg_policy_target *targets; /* the file's rows only; built-ins live in the target table */
    size_t n_targets;
    struct jg_policy_controller *controllers;
    size_t n_controllers;
    bool allow_unlisted_controllers;     /* default true */
    struct jg_strv status_writer_exempt; /* default ["system:masters"] */
    struct jg_strset exempt_set;         /* status_writer_exempt, looked up */
    unsigned char mode[JG_RULE_MAX];     /* per rule ID (enum jg_mode); "*" fills the rest */
    char sha256[65];                     /* hex digest of the file's bytes; "" for no file */
    bool yaml;                           /* read as YAML (a cut file can still be valid) */
};

/* Builds every lookup of a policy from its lists (the loader does; a policy built by hand in a
 * test must too, again after changing a list) and frees them. false: out of memory (the policy's
 * lookups are then freed). */
bool jg_policy_build_lookups(struct jg_policy *p);
void jg_policy_free_lookups(struct jg_policy *p);

#endif
