/* spec.managedBy format and length (docs/rules.md §2.2, §2.3): IsDomainPrefixedPath with
 * character-class tables and single passes, full-string semantics (no regex library). */
#include "jobguard/names.h"
#include "jobguard/rules.h"

#include <string.h>

#define MAX_MANAGED_BY_LENGTH 63  /* maxManagedByLength in pkg/apis/batch/validation */
#define DNS1123_SUBDOMAIN_MAX 253 /* validation.DNS1123SubdomainMaxLength */

const char jg_subdomain_detail[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char jg_path_detail[] =
    "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";

static bool is_lower_alnum(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* as a full match: dot-separated
 * non-empty labels of [-a-z0-9] that start and end alphanumeric. No per-label length limit. */
bool jg_is_dns1123_subdomain(jg_str h) {
    if (h.n == 0) return false;
    size_t label_start = 0;
    for (size_t i = 0; i <= h.n; i++) {
        if (i == h.n || h.p[i] == '.') {
            if (i == label_start) return false;
            if (!is_lower_alnum((unsigned char)h.p[label_start]) ||
                !is_lower_alnum((unsigned char)h.p[i - 1]))
                return false;
            label_start = i + 1;
        } else if (!is_lower_alnum((unsigned char)h.p[i]) && h.p[i] != '-') {
            return false;
        }
    }
    return true;
}

/* The HTTP path class [A-Za-z0-9/\-._~%!$&'()*+,;=:] */
static bool is_path_char(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c != 0 && strchr("/-._~%!$&'()*+,;=:", c) != NULL);
}

static bool is_http_path(jg_str p) {
    if (p.n == 0) return false;
    for (size_t i = 0; i < p.n; i++)
        if (!is_path_char((unsigned char)p.p[i])) return false;
    return true;
}

void jg_check_managed_by(jg_str v, const char *field, struct jg_errors *out) {
    /* §2.2 IsDomainPrefixedPath */
    if (v.n == 0) {
        jg_err_required(out, JG_R_MANAGED_BY_FORMAT, field, "");
    } else {
        const char *slash = memchr(v.p, '/', v.n);
        jg_str host = {v.p, slash ? (size_t)(slash - v.p) : v.n};
        jg_str path = {slash ? slash + 1 : v.p + v.n, slash ? v.n - host.n - 1 : 0};
        if (!slash || host.n == 0 || path.n == 0) {
            jg_err_invalid_gostr(out, JG_R_MANAGED_BY_FORMAT, field, v,
                                 "must be a domain-prefixed path (such as \"acme.io/foo\")");
        } else {
            if (host.n > DNS1123_SUBDOMAIN_MAX)
                jg_err_invalid_gostr(out, JG_R_MANAGED_BY_FORMAT, field, host,
                                     "must be no more than 253 characters");
            if (!jg_is_dns1123_subdomain(host))
                jg_err_invalid_gostr(out, JG_R_MANAGED_BY_FORMAT, field, host, jg_subdomain_detail);
            if (!is_http_path(path))
                jg_err_invalid_gostr(out, JG_R_MANAGED_BY_FORMAT, field, path, jg_path_detail);
        }
    }
    /* §2.3: bytes, not characters */
    if (v.n > MAX_MANAGED_BY_LENGTH)
        jg_err_too_long(out, JG_R_MANAGED_BY_LENGTH, field, MAX_MANAGED_BY_LENGTH);
}
