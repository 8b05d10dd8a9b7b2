/* libFuzzer target: the policy file reader (src/policy/policy.c, docs/policy.md).
 *
 * The whole input is the file (exact-size heap copy). Asserted:
 *  - refused ⇒ one line naming the file first, and NULL; accepted ⇒ no message needed;
 *  - accepted ⇒ the snapshot holds what the reader promises: limits respected, every controller
 *    name a valid managedBy value unless a row in effect leaves the format unchecked, unique; every
 * string non-empty where required; modes in range; sha256 is 64 lowercase hex digits;
 * jg_policy_apply keeps --disable-rule rules off;
 *  - the same bytes load the same way twice (no hidden state). */
#include "jobguard/policy.h"
#include "jobguard/targets.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static const char name[] = "fuzz.json";

static void check_policy(const struct jg_policy *p) {
    CHECK(strlen(p->sha256) == 64);
    for (size_t i = 0; i < 64; i++)
        CHECK((p->sha256[i] >= '0' && p->sha256[i] <= '9') ||
              (p->sha256[i] >= 'a' && p->sha256[i] <= 'f'));
    CHECK(p->n_targets <= 64 && p->n_controllers <= 1024);
    for (size_t i = 0; i < p->n_targets; i++) {
        const struct jg_policy_target *t = &p->targets[i];
        CHECK(t->group && t->kind[0] && t->resource[0] && t->managed_by_path[0]);
        CHECK(t->versions.n >= 1 && t->versions.n <= 16 && t->n_nested <= 16);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(p->targets[j].group, t->group) || strcmp(p->targets[j].kind, t->kind));
    }
    /* a name that fails the managedBy format is accepted only while some row in effect leaves the
     * format unchecked (Tekton's free-form values, docs/policy.md) */
    bool free_form = false;
    for (size_t i = 0; i < p->n_targets; i++)
        free_form |= !p->targets[i].check_format;
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        free_form |= !jg_builtin_targets[i].check_format && !jg_target_builtin_replaced(p, i);
    for (size_t i = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *k = &p->controllers[i];
        struct jg_errors e;
        jg_errors_init(&e);
        jg_check_managed_by((jg_str){k->name, strlen(k->name)}, "name", &e);
        CHECK(e.n == 0 || free_form);
        CHECK(strlen(k->name) >= 1 && strlen(k->name) <= 253);
        jg_errors_free(&e);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(p->controllers[j].name, k->name) != 0);
        for (size_t j = 0; j < k->namespaces.n; j++)
            CHECK(k->namespaces.v[j][0] != '\0');
    }
    for (size_t i = 0; i < sizeof p->mode; i++)
        CHECK(p->mode[i] < JG_MODE_COUNT);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    cfg.disabled = UINT64_C(1) << JG_R_MANAGED_BY_FORMAT;
    jg_policy_apply(p, &cfg);
    CHECK(cfg.policy == p && jg_rule_mode(&cfg, JG_R_MANAGED_BY_FORMAT) == JG_MODE_OFF);
    for (size_t i = 0; i < sizeof cfg.mode; i++)
        CHECK(cfg.mode[i] < JG_MODE_COUNT); /* every rule has a mode from the file */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    char err[1024] = "", err2[1024] = "";
    struct jg_policy *p = jg_policy_load_buffer(name, buf, size, err, sizeof err);
    struct jg_policy *q = jg_policy_load_buffer(name, buf, size, err2, sizeof err2);
    CHECK((p == NULL) == (q == NULL));
    if (p) {
        check_policy(p);
        CHECK(strcmp(p->sha256, q->sha256) == 0 && p->n_controllers == q->n_controllers);
    } else {
        CHECK(strncmp(err, name, strlen(name)) == 0 && strchr(err, '\n') == NULL);
        CHECK(strcmp(err, err2) == 0);
    }
    jg_policy_free(p);
    jg_policy_free(q);
    free(buf);
    return 0;
}
