/* values: the policy as the Helm chart holds it (`.policy` of a values file) and the digest the
 * chart can compute itself: sha256 of `toJson .Values.policy`, the bytes the chart writes as the
 * policy file (docs/policy.md "--values", docs/vap.md "One source of truth"). */
#include "jobguard/values.h"

#include "jobguard/buf.h"
#include "jobguard/reader.h"
#include "jobguard/readfile.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES_BYTES ((size_t)16 << 20)

static int cmp_key(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A JSON string as Go's encoding/json writes it: <, >, & and U+2028/U+2029 escaped, \b \f \n \r
 * \t short, other control characters \u00XX (Go 1.22 and later, as Helm 3.14+ and 4 are built). */
static void go_string(jg_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    jg_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            jg_buf_puts(b, "\\\"");
            continue;
        case '\\':
            jg_buf_puts(b, "\\\\");
            continue;
        case '\b':
            jg_buf_puts(b, "\\b");
            continue;
        case '\f':
            jg_buf_puts(b, "\\f");
            continue;
        case '\n':
            jg_buf_puts(b, "\\n");
            continue;
        case '\r':
            jg_buf_puts(b, "\\r");
            continue;
        case '\t':
            jg_buf_puts(b, "\\t");
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            jg_buf_printf(b, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
        } else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
            jg_buf_puts(b, (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
            i += 2;
        } else {
            jg_buf_putc(b, (char)c);
        }
    }
    jg_buf_putc(b, '"');
}

/* A float64 as Go's encoding/json writes it: the shortest text that reads back the same, in
 * %f form from 1e-6 to 1e21, else %e with a two-digit exponent at least. */
static void go_number(jg_buf *b, double d) {
    if (d == 0) {
        jg_buf_puts(b, "0");
        return;
    }
    char t[64];
    double a = d < 0 ? -d : d;
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*e", prec - 1, d);
        if (strtod(t, NULL) == d) break;
    }
    if (a >= 1e-6 && a < 1e21) {
        /* the same digits in %f form: as many decimals as the digits need */
        int exp10 = atoi(strchr(t, 'e') + 1); /* the exponent of the shortest %e form */
        int decimals = prec - 1 - exp10;
        if (decimals < 0) decimals = 0;
        snprintf(t, sizeof t, "%.*f", decimals, d);
        jg_buf_puts(b, t);
        return;
    }
    /* Go: e+21, e-07 (at least two exponent digits, as C's %e) */
    jg_buf_puts(b, t);
}

/* Appends v as Go's encoding/json writes it (keys sorted, compact, HTML-safe). */
static bool go_json(const json_t *v, jg_buf *b) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) return false;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_key);
        jg_buf_putc(b, '{');
        bool ok = true;
        for (i = 0; ok && i < n; i++) {
            if (i) jg_buf_putc(b, ',');
            go_string(b, keys[i], strlen(keys[i]));
            jg_buf_putc(b, ':');
            ok = go_json(json_object_get(v, keys[i]), b);
        }
        free(keys);
        jg_buf_putc(b, '}');
        return ok;
    }
    case JSON_ARRAY: {
        jg_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) jg_buf_putc(b, ',');
            if (!go_json(json_array_get(v, i), b)) return false;
        }
        jg_buf_putc(b, ']');
        return true;
    }
    case JSON_STRING:
        go_string(b, json_string_value(v), json_string_length(v));
        return true;
    case JSON_INTEGER:
        go_number(b, (double)json_integer_value(v));
        return true;
    case JSON_REAL:
        go_number(b, json_real_value(v));
        return true;
    case JSON_TRUE:
        jg_buf_puts(b, "true");
        return true;
    case JSON_FALSE:
        jg_buf_puts(b, "false");
        return true;
    case JSON_NULL:
        jg_buf_puts(b, "null");
        return true;
    }
    return false;
}

/* The JSON tree of a JSON or YAML file (YAML converted as kubectl converts it). */
static json_t *read_tree(const char *file, char *err, size_t errlen) {
    jg_buf b = JG_BUF_INIT;
    if (!jg_read_regular_file(file, MAX_VALUES_BYTES, &b, err, errlen)) {
        jg_buf_free(&b);
        return NULL;
    }
    size_t jl;
    char *conv =
        jg_yaml_to_json(b.data ? b.data : "", b.len, file, JG_READER_MAX_DOC, &jl, err, errlen);
    jg_buf_free(&b);
    if (!conv) return NULL;
    json_error_t je;
    json_t *root = json_loadb(conv, jl, JSON_DECODE_ANY, &je);
    free(conv);
    if (!root) snprintf(err, errlen, "%s: %s", file, je.text);
    return root;
}

/* Loads the policy tree `pol` named `name`, its sha256 the chart's. */
static struct jg_policy *load_tree(const char *name, const json_t *pol, char *err, size_t errlen) {
    jg_buf g = JG_BUF_INIT;
    struct jg_policy *p = NULL;
    if (!go_json(pol, &g) || !g.data) {
        snprintf(err, errlen, "%s: out of memory", name);
    } else {
        p = jg_policy_load_buffer(name, g.data, g.len, err, errlen);
        if (p) jg_sha256_hex(g.data, g.len, p->sha256);
    }
    jg_buf_free(&g);
    return p;
}

struct jg_policy *jg_policy_load_values(const char *file, bool *absent, char *err, size_t errlen) {
    *absent = false;
    json_t *root = read_tree(file, err, errlen);
    if (!root) return NULL;
    json_t *pol = json_is_object(root) ? json_object_get(root, "policy") : NULL;
    struct jg_policy *p = NULL;
    if (!(json_is_object(root) || json_is_null(root))) {
        snprintf(err, errlen, "%s: a values file is a YAML mapping (got another kind of document)",
                 file);
    } else if (!pol || json_is_null(pol) || (json_is_object(pol) && json_object_size(pol) == 0)) {
        *absent = true; /* valid values: the chart installs no policy file and runs no check */
    } else if (!json_is_object(pol)) {
        snprintf(err, errlen, "%s: .policy must be an object (the policy file's members)", file);
    } else {
        char name[600];
        snprintf(name, sizeof name, "%s (.policy)", file);
        p = load_tree(name, pol, err, errlen);
    }
    json_decref(root);
    return p;
}

bool jg_policy_chart_sha256(const char *file, char out[65], char *err, size_t errlen) {
    json_t *root = file ? read_tree(file, err, errlen) : json_object();
    if (!root) return false;
    jg_buf g = JG_BUF_INIT;
    bool ok = go_json(root, &g) && g.data;
    if (ok)
        jg_sha256_hex(g.data, g.len, out);
    else
        snprintf(err, errlen, "%s: out of memory", file ? file : "policy");
    jg_buf_free(&g);
    json_decref(root);
    return ok;
}
