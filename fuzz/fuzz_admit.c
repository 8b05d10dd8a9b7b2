/* libFuzzer target: one AdmissionReview body through jg_admit (decode -> rules -> encode).
 *
 * Besides "no crash, no sanitizer report" it asserts what a caller relies on:
 *  - the verdict and outcome.code agree (0 / 422 / 400 / 500);
 *  - no JG_VERDICT_ERROR: allocations never fail here, so a 500 would be a lie;
 *  - the response is strict JSON (parsed with jansson, here only) shaped like an AdmissionReview
 *    response whose `allowed` and `status.code` match the verdict;
 *  - a 422 carries at least one cause, and as many as outcome.n_errors;
 *  - a second run on a reused response buffer and outcome gives the same bytes (some inputs);
 *  - a denial decided again with every rule in warn, audit or mixed modes (docs/modes.md) is
 *    allowed unless a deny-mode rule fired, its warnings and annotations within their bounds, each
 *    annotation keyed by a rule that fired in audit mode.
 * Inputs whose size has bit 2 set are decided under fuzz_policy(): an allow-list whose controllers
 * have namespace globs of every kind and status writers (403 is then a denial too). */
#include "jobguard/admit.h"
#include "jobguard/policy.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static int expected_code(enum jg_verdict v) {
    switch (v) {
    case JG_VERDICT_ALLOWED:
        return 0;
    case JG_VERDICT_DENIED:
        return 422;
    case JG_VERDICT_BAD_REQUEST:
        return 400;
    case JG_VERDICT_ERROR:
        return 500;
    }
    return -1;
}

static void check_response(const jg_buf *response, const struct jg_outcome *o) {
    CHECK(!response->oom);
    CHECK(response->data != NULL);
    CHECK(strlen(response->data) == response->len); /* encoder escapes NUL: no raw NUL inside */

    json_error_t je;
    /* A uid with NUL is echoed as \u0000: valid JSON that jansson accepts only on request. */
    json_t *root =
        json_loadb(response->data, response->len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!root) {
        fprintf(stderr, "fuzz_admit: response is not JSON (%s at %d:%d):\n%s\n", je.text, je.line,
                je.column, response->data);
        abort();
    }
    CHECK(json_is_object(root));
    CHECK(json_is_string(json_object_get(root, "apiVersion")));
    CHECK(json_is_string(json_object_get(root, "kind")));
    json_t *resp = json_object_get(root, "response");
    CHECK(json_is_object(resp));
    CHECK(json_is_string(json_object_get(resp, "uid")));
    json_t *allowed = json_object_get(resp, "allowed");
    CHECK(json_is_boolean(allowed));
    CHECK(json_is_true(allowed) == (o->verdict == JG_VERDICT_ALLOWED));
    json_t *status = json_object_get(resp, "status");
    if (o->verdict == JG_VERDICT_ALLOWED) {
        CHECK(status == NULL);
    } else {
        CHECK(json_is_object(status));
        CHECK(json_integer_value(json_object_get(status, "code")) == o->code);
        CHECK(json_is_string(json_object_get(status, "message")));
        CHECK(json_string_length(json_object_get(status, "message")) > 0);
    }
    if (o->verdict == JG_VERDICT_DENIED && o->code == 422) {
        json_t *causes = json_object_get(json_object_get(status, "details"), "causes");
        CHECK(json_is_array(causes));
        CHECK(json_array_size(causes) >= 1);
        CHECK(json_array_size(causes) == o->n_errors);
        size_t i;
        json_t *c;
        json_array_foreach(causes, i, c) {
            CHECK(json_is_string(json_object_get(c, "reason")));
            CHECK(json_is_string(json_object_get(c, "field")));
            CHECK(json_is_string(json_object_get(c, "message")));
        }
        CHECK(o->rules != 0);
        CHECK(o->causes.len > 0 && !o->causes.oom);
    }
    json_decref(root);
}

/* warnings: strings within JG_MAX_WARNING_BYTES each and JG_MAX_WARNINGS_TOTAL in all;
 * auditAnnotations: rule IDs of o->rules_audit, values within JG_MAX_AUDIT_VALUE_BYTES. */
static void check_notes(const jg_buf *response, const struct jg_outcome *o) {
    json_t *root = json_loadb(response->data, response->len, JSON_ALLOW_NUL, NULL);
    CHECK(root != NULL);
    json_t *resp = json_object_get(root, "response");
    json_t *w = json_object_get(resp, "warnings");
    CHECK((w != NULL) == (o->rules_warn != 0));
    size_t i, total = 0;
    json_t *it;
    json_array_foreach(w, i, it) {
        CHECK(json_is_string(it));
        CHECK(json_string_length(it) > 0 && json_string_length(it) <= JG_MAX_WARNING_BYTES);
        total += json_string_length(it);
    }
    CHECK(total <= JG_MAX_WARNINGS_TOTAL);
    json_t *a = json_object_get(resp, "auditAnnotations");
    CHECK((a != NULL) == (o->rules_audit != 0));
    const char *key;
    json_object_foreach(a, key, it) {
        const struct jg_rule *r = jg_rule_find(key);
        CHECK(r != NULL && (o->rules_audit & (UINT64_C(1) << r->id)));
        CHECK(json_is_string(it) && json_string_length(it) <= JG_MAX_AUDIT_VALUE_BYTES);
    }
    json_decref(root);
}

/* The same review with every rule in warn, in audit, or in deny/warn/audit by rule ID. */
static void check_modes(const uint8_t *data, size_t size, const struct jg_config *base,
                        uint64_t fired) {
    struct jg_config cfg = *base;
    int pick = (int)((size >> 1) % 3);
    for (int i = 0; i < JG_RULE_COUNT; i++)
        cfg.mode[i] = (unsigned char)(pick == 0 ? JG_MODE_WARN : pick == 1 ? JG_MODE_AUDIT : i % 3);
    jg_buf response = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    enum jg_verdict v = jg_admit((const char *)data, size, &cfg, &response, &o);
    CHECK((o.rules | o.rules_warn | o.rules_audit) == fired);
    CHECK((v == JG_VERDICT_DENIED) == (o.rules != 0));
    check_response(&response, &o);
    check_notes(&response, &o);
    jg_buf_free(&response);
    jg_outcome_free(&o);
}

/* Literal, prefix, suffix, "*" and general globs, a controller without any, status writers. */
static const struct jg_policy *fuzz_policy(void) {
    static const char json[] =
        "{\"allowUnlistedControllers\":false,\"statusWriterExemptGroups\":[\"system:masters\"],"
        "\"controllers\":[{\"name\":\"kueue.x-k8s.io/multikueue\",\"namespaces\":[\"team-a\","
        "\"team-*\",\"*-prod\",\"ml-[!x]?\",\"*a*b*\"],\"statusWriters\":{\"users\":["
        "\"system:serviceaccount:kueue-system:kueue\"],\"groups\":[\"kueue-admins\"]}},"
        "{\"name\":\"acme.io/foo\"},{\"name\":\"my-custom-controller\",\"namespaces\":[\"*\"]}]}";
    static struct jg_policy *p;
    if (!p) {
        char err[512];
        p = jg_policy_load_buffer("fuzz-policy", json, sizeof json - 1, err, sizeof err);
        if (!p) {
            fprintf(stderr, "fuzz_policy: %s\n", err);
            abort();
        }
    }
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Both wordings (docs/rules.md §6); which one is a cheap function of the input. */
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    if (size & 1) cfg.parity = JG_PARITY_1_36;
    if (size & 4) jg_policy_apply(fuzz_policy(), &cfg);

    jg_buf response = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    enum jg_verdict v = jg_admit((const char *)data, size, &cfg, &response, &o);

    CHECK(v == o.verdict);
    CHECK(o.code == expected_code(v) || (cfg.policy && v == JG_VERDICT_DENIED && o.code == 403));
    CHECK(v != JG_VERDICT_ERROR);
    CHECK(strlen(o.uid) < sizeof o.uid && strlen(o.name) < sizeof o.name);
    check_response(&response, &o);

    jg_buf names = JG_BUF_INIT;
    jg_outcome_put_rule_names(&o, &names);
    CHECK(!names.oom);
    CHECK((names.len > 0) == (o.rules != 0));
    jg_buf_free(&names);

    /* Reuse the buffers as the server does (one per connection): same input, same bytes. */
    if ((size & 7) == 0) {
        char *first = malloc(response.len + 1);
        CHECK(first != NULL);
        memcpy(first, response.data, response.len + 1);
        size_t first_len = response.len;
        enum jg_verdict v2 = jg_admit((const char *)data, size, &cfg, &response, &o);
        CHECK(v2 == v);
        CHECK(response.len == first_len && memcmp(response.data, first, first_len) == 0);
        free(first);
    }

    if (v == JG_VERDICT_DENIED) check_modes(data, size, &cfg, o.rules);

    jg_buf_free(&response);
    jg_outcome_free(&o);
    return 0;
}
