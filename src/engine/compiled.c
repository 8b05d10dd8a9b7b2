/* compiled: a policy snapshot's lookups, built from its lists with match.c's sets and globs
 * (include/jobguard/compiled.h). */
#include "jobguard/compiled.h"

bool jg_policy_build_lookups(struct jg_policy *p) {
    jg_policy_free_lookups(p);
    bool ok = jg_strset_build(&p->exempt_set, p->status_writer_exempt.v, p->status_writer_exempt.n);
    for (size_t i = 0; ok && i < p->n_controllers; i++) {
        struct jg_policy_controller *c = &p->controllers[i];
        ok = jg_nsmatch_build(&c->ns_match, c->namespaces.v, c->namespaces.n) &&
             jg_strset_build(&c->writer_user_set, c->writer_users.v, c->writer_users.n) &&
             jg_strset_build(&c->writer_group_set, c->writer_groups.v, c->writer_groups.n);
    }
    if (!ok) jg_policy_free_lookups(p);
    return ok;
}

void jg_policy_free_lookups(struct jg_policy *p) {
    jg_strset_free(&p->exempt_set);
    for (size_t i = 0; i < p->n_controllers; i++) {
        struct jg_policy_controller *c = &p->controllers[i];
        jg_nsmatch_free(&c->ns_match);
        jg_strset_free(&c->writer_user_set);
        jg_strset_free(&c->writer_group_set);
    }
}
