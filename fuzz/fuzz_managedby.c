/* libFuzzer target: the spec.managedBy format and length check (docs/rules.md §2.2, §2.3).
 *
 * The whole input is the value (exact-size heap copy, so over-reads are ASan reports). The
 * engine's character-class passes are compared with an independent oracle: POSIX extended
 * regexes built from the very patterns upstream quotes in its messages. Asserted:
 *  - valid (no error) ⇔ the oracle says valid; valid ⇒ contains '/' and length ≤ 63;
 *  - the exact list of errors (rule, type) the oracle predicts, in upstream order;
 *  - every error is at the given field, and the rendered message is non-empty. */
#include "jobguard/rules.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static const char field[] = "spec.managedBy";
static regex_t host_re, path_re;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* C locale (never changed here): [a-z] is ASCII a..z, every other byte is just a byte. */
    if (regcomp(&host_re, "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                REG_EXTENDED | REG_NOSUB) ||
        regcomp(&path_re, "^[-A-Za-z0-9/._~%!$&'()*+,;=:]+$", REG_EXTENDED | REG_NOSUB))
        abort();
    return 0;
}

/* Full match of s[0..n) (n > 0); a NUL byte matches neither class. */
static bool matches(const regex_t *re, const char *s, size_t n) {
    if (memchr(s, '\0', n)) return false;
    char *z = strndup(s, n);
    CHECK(z != NULL);
    bool m = regexec(re, z, 0, NULL, 0) == 0;
    free(z);
    return m;
}

struct expect {
    int rule;
    enum jg_err_type type;
};

static size_t oracle(const char *v, size_t n, struct expect *e) {
    size_t k = 0;
    if (n == 0) {
        e[k++] = (struct expect){JG_R_MANAGED_BY_FORMAT, JG_ERR_REQUIRED};
    } else {
        const char *slash = memchr(v, '/', n);
        size_t hn = slash ? (size_t)(slash - v) : n;
        if (!slash || hn == 0 || hn + 1 == n) {
            e[k++] = (struct expect){JG_R_MANAGED_BY_FORMAT, JG_ERR_INVALID};
        } else {
            if (hn > 253) e[k++] = (struct expect){JG_R_MANAGED_BY_FORMAT, JG_ERR_INVALID};
            if (!matches(&host_re, v, hn))
                e[k++] = (struct expect){JG_R_MANAGED_BY_FORMAT, JG_ERR_INVALID};
            if (!matches(&path_re, slash + 1, n - hn - 1))
                e[k++] = (struct expect){JG_R_MANAGED_BY_FORMAT, JG_ERR_INVALID};
        }
    }
    if (n > 63) e[k++] = (struct expect){JG_R_MANAGED_BY_LENGTH, JG_ERR_TOO_LONG};
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *v = malloc(size ? size : 1);
    CHECK(v != NULL);
    if (size) memcpy(v, data, size);

    struct jg_errors errs;
    jg_errors_init(&errs);
    jg_check_managed_by((jg_str){v, size}, field, &errs);
    CHECK(!errs.oom);

    struct expect want[8];
    size_t nwant = oracle(v, size, want);
    if (errs.n != nwant) {
        fprintf(stderr, "fuzz_managedby: %zu errors, oracle expects %zu\n", errs.n, nwant);
        for (size_t i = 0; i < errs.n; i++) {
            jg_str b = jg_err_body(&errs, i);
            fprintf(stderr, "  %.*s\n", (int)b.n, b.p);
        }
        abort();
    }
    if (errs.n == 0) CHECK(memchr(v, '/', size) != NULL && size <= 63);
    for (size_t i = 0; i < errs.n; i++) {
        CHECK(errs.v[i].rule == want[i].rule && errs.v[i].type == want[i].type);
        CHECK(jg_str_eq_lit(jg_err_field(&errs, i), field));
        CHECK(jg_err_body(&errs, i).n > 0);
    }
    if (errs.n) {
        jg_buf msg = JG_BUF_INIT;
        jg_render_message(&errs, "Job", "batch", (jg_str){"j", 1}, &msg);
        CHECK(!msg.oom && msg.len > 0);
        jg_buf_free(&msg);
    }
    jg_errors_free(&errs);
    free(v);
    return 0;
}
