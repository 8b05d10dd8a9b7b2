/* The shapes: jobs/status updates (and one CREATE) that grow along one dimension each. Every
 * shape is allowed (or denied by its own elements) until `spoil` changes its last element. */
#include "shapes.h"

#include <string.h>

#define T0 "\"2025-01-01T00:00:00Z\""
#define INDEX_MAX 2147483647 /* completions of the index shape: every int32 index is in range */

/* Members of an object, each written with a leading ',' (the object is already open). */
typedef void members_fn(jg_buf *b, size_t n, bool spoil);

static void review_begin(jg_buf *b, const char *operation, const char *sub_resource) {
    jg_buf_reset(b);
    jg_buf_printf(b,
                  "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"scale\",\"kind\":{\"group\":\"batch\",\"version\":"
                  "\"v1\",\"kind\":\"Job\"},\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
                  "\"resource\":\"jobs\"},\"subResource\":\"%s\",\"name\":\"j\",\"namespace\":"
                  "\"default\",\"operation\":\"%s\",\"userInfo\":{\"username\":\"bench\"},"
                  "\"object\":",
                  sub_resource, operation);
}

static void job_begin(jg_buf *b, const char *spec) {
    jg_buf_printf(b,
                  "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                  "\"namespace\":\"default\"},\"spec\":%s,\"status\":{\"startTime\":" T0,
                  spec);
}

/* A jobs/status update: old and new share spec and startTime; the new status adds members. */
static void status_update(jg_buf *b, const char *spec, members_fn *members, size_t n, bool spoil) {
    review_begin(b, "UPDATE", "status");
    job_begin(b, spec);
    members(b, n, spoil);
    jg_buf_puts(b, "}},\"oldObject\":");
    job_begin(b, spec);
    jg_buf_puts(b, "}}}}");
}

static const char plain_spec[] = "{\"completions\":1,\"parallelism\":1}";

/* Number writers without printf: a million elements are built in milliseconds. */
static void put_hex(jg_buf *b, size_t v, int digits) {
    char t[16];
    for (int i = digits - 1; i >= 0; i--, v >>= 4)
        t[i] = "0123456789abcdef"[v & 15];
    jg_buf_put(b, t, (size_t)digits);
}

static void put_dec(jg_buf *b, long long v) {
    char t[24];
    int i = sizeof t;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    do
        t[--i] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) t[--i] = '-';
    jg_buf_put(b, t + i, sizeof t - (size_t)i);
}

/* UID number i, 36 bytes like a real one: 00000000-0000-4000-8000-000000000000. With
 * escape_first, its first character is written as a \u escape (the decoder must unescape it). */
static void put_uid(jg_buf *b, size_t i, bool escape_first) {
    jg_buf_putc(b, '"');
    if (escape_first) {
        jg_buf_puts(b, "\\u00");
        put_hex(b, (unsigned char)"0123456789abcdef"[i >> 28 & 15], 2);
    } else {
        put_hex(b, i >> 28, 1);
    }
    put_hex(b, i, 7);
    jg_buf_puts(b, "-0000-4000-8000-");
    put_hex(b, i, 12);
    jg_buf_putc(b, '"');
}

/* n distinct UIDs, the first half succeeded, the rest failed. spoil: the last repeats the first
 * (Duplicate value at the last index of failed, found through the shared set). */
static void uncounted_distinct(jg_buf *b, size_t n, bool spoil) {
    size_t succeeded = n - n / 2;
    jg_buf_puts(b, ",\"uncountedTerminatedPods\":{\"succeeded\":[");
    for (size_t i = 0; i < n; i++) {
        if (i == succeeded)
            jg_buf_puts(b, "],\"failed\":[");
        else if (i)
            jg_buf_putc(b, ',');
        put_uid(b, spoil && i == n - 1 ? 0 : i, false);
    }
    jg_buf_puts(b, n == succeeded ? "],\"failed\":[]}" : "]}");
}

/* succeeded: uid0, uid0, uid1, uid1, ...: n/2 Duplicate values. spoil: the last is new. */
static void uncounted_pairs(jg_buf *b, size_t n, bool spoil) {
    jg_buf_puts(b, ",\"uncountedTerminatedPods\":{\"succeeded\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) jg_buf_putc(b, ',');
        put_uid(b, spoil && i == n - 1 ? n : i / 2, false);
    }
    jg_buf_puts(b, "]}");
}

/* succeeded: n copies of one UID (n - 1 Duplicate values): every sort key equal, the sort's
 * worst case. spoil: the last is new. */
static void uncounted_same(jg_buf *b, size_t n, bool spoil) {
    jg_buf_puts(b, ",\"uncountedTerminatedPods\":{\"succeeded\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) jg_buf_putc(b, ',');
        put_uid(b, spoil && i == n - 1 ? 1 : 0, false);
    }
    jg_buf_puts(b, "]}");
}

/* succeeded: n empty UIDs, one "must not be empty" each. spoil: the last is a UID. */
static void uncounted_empty(jg_buf *b, size_t n, bool spoil) {
    jg_buf_puts(b, ",\"uncountedTerminatedPods\":{\"succeeded\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) jg_buf_putc(b, ',');
        if (spoil && i == n - 1)
            put_uid(b, 0, false);
        else
            jg_buf_puts(b, "\"\"");
    }
    jg_buf_puts(b, "]}");
}

/* n distinct UIDs whose first character is a \u escape (each one unescaped into its own copy).
 * spoil: the last is the first UID written plainly, a Duplicate value once decoded. */
static void uncounted_escaped(jg_buf *b, size_t n, bool spoil) {
    jg_buf_puts(b, ",\"uncountedTerminatedPods\":{\"succeeded\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) jg_buf_putc(b, ',');
        put_uid(b, spoil && i == n - 1 ? 0 : i, !(spoil && i == n - 1));
    }
    jg_buf_puts(b, "]}");
}

/* n conditions of every type the rules read (and one they ignore), all False. spoil: the last is
 * Failed=True without FailureTarget. */
static void conditions(jg_buf *b, size_t n, bool spoil) {
    static const char *const types[] = {"Complete",           "Failed",    "FailureTarget",
                                        "SuccessCriteriaMet", "Suspended", "Progressing"};
    jg_buf_puts(b, ",\"conditions\":[");
    for (size_t i = 0; i < n; i++) {
        bool last = spoil && i == n - 1;
        jg_buf_puts(b, i ? ",{\"type\":\"" : "{\"type\":\"");
        jg_buf_puts(b, last ? "Failed" : types[i % 6]);
        jg_buf_puts(b, last ? "\",\"status\":\"True\"}" : "\",\"status\":\"False\"}");
    }
    jg_buf_putc(b, ']');
}

/* n distinct keys the decoder skips. spoil: the last is active: -1. */
static void status_keys(jg_buf *b, size_t n, bool spoil) {
    for (size_t i = 0; i < n; i++)
        if (spoil && i == n - 1)
            jg_buf_puts(b, ",\"active\":-1");
        else {
            jg_buf_puts(b, ",\"k");
            put_dec(b, (long long)i);
            jg_buf_puts(b, "\":0");
        }
}

/* One key the decoder skips, n times. spoil: the last repeats startTime, a key it reads (400). */
static void repeated_key(jg_buf *b, size_t n, bool spoil) {
    for (size_t i = 0; i < n; i++)
        jg_buf_puts(b, spoil && i == n - 1 ? ",\"startTime\":" T0 : ",\"x\":0");
}

/* completedIndexes and failedIndexes of n/2 alternating intervals each, together spanning every
 * index below 2^31 - 1. spoil: the last failed interval starts one index earlier, on the last
 * completed one (overlap at that index). */
static void index_lists(jg_buf *b, size_t n, bool spoil) {
    size_t k = n / 2 ? n / 2 : 1;
    long long span = (INDEX_MAX - 1) / (long long)k, half = span / 2;
    for (int list = 0; list < 2; list++) {
        jg_buf_puts(b, list ? "\",\"failedIndexes\":\"" : ",\"completedIndexes\":\"");
        for (size_t i = 0; i < k; i++) {
            long long x = (long long)i * span + (list ? half : 0);
            long long y = list ? (long long)i * span + span - 1 : x + half - 1;
            if (list && spoil && i == k - 1) x--;
            if (i) jg_buf_putc(b, ',');
            put_dec(b, x);
            jg_buf_putc(b, '-');
            put_dec(b, y);
        }
    }
    jg_buf_putc(b, '"');
}

/* One tower of n nested arrays under an unknown status key: status is at depth 4, so 2044 levels
 * reach the 2048 limit exactly. spoil: one level more. */
static void nesting(jg_buf *b, size_t n, bool spoil) {
    size_t depth = n + (spoil ? 1 : 0);
    jg_buf_puts(b, ",\"nest\":");
    for (size_t i = 0; i < depth; i++)
        jg_buf_putc(b, '[');
    for (size_t i = 0; i < depth; i++)
        jg_buf_putc(b, ']');
}

#define STATUS_SHAPE(fn, spec)                                                                     \
    static void build_##fn(jg_buf *b, size_t n, bool spoil) {                                      \
        status_update(b, spec, fn, n, spoil);                                                      \
    }
STATUS_SHAPE(uncounted_distinct, plain_spec)
STATUS_SHAPE(uncounted_pairs, plain_spec)
STATUS_SHAPE(uncounted_same, plain_spec)
STATUS_SHAPE(uncounted_empty, plain_spec)
STATUS_SHAPE(uncounted_escaped, plain_spec)
STATUS_SHAPE(conditions, plain_spec)
STATUS_SHAPE(status_keys, plain_spec)
STATUS_SHAPE(repeated_key, plain_spec)
STATUS_SHAPE(index_lists, "{\"completions\":2147483647,\"parallelism\":1,\"completionMode\":"
                          "\"Indexed\",\"backoffLimitPerIndex\":1}")
STATUS_SHAPE(nesting, plain_spec)

/* A Job CREATE whose spec.managedBy is "example.com/" and n path bytes: Too long past 63 bytes.
 * spoil: the last byte is '<', outside the path alphabet (Invalid value with the whole path). */
static void build_managed_by(jg_buf *b, size_t n, bool spoil) {
    review_begin(b, "CREATE", "");
    jg_buf_puts(b, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},"
                   "\"spec\":{\"managedBy\":\"example.com/");
    if (!jg_buf_reserve(b, n)) return;
    memset(b->data + b->len, 'a', n);
    if (spoil && n) b->data[b->len + n - 1] = '<';
    b->len += n;
    b->data[b->len] = '\0';
    jg_buf_puts(b, "\"}}}}");
}

const struct shape shapes[] = {
    {"uncounted-distinct", "UID", 160000, build_uncounted_distinct},
    {"uncounted-pairs", "UID", 160000, build_uncounted_pairs},
    {"uncounted-escaped", "UID", 150000, build_uncounted_escaped},
    {"uncounted-same", "UID", 160000, build_uncounted_same},
    {"uncounted-empty", "UID", 2000000, build_uncounted_empty},
    {"conditions", "condition", 150000, build_conditions},
    {"status-keys", "key", 500000, build_status_keys},
    {"repeated-key", "key", 1000000, build_repeated_key},
    {"index-lists", "interval", 280000, build_index_lists},
    {"nesting", "level", 2044, build_nesting},
    {"managedby-long", "byte", 7000000, build_managed_by},
};
const size_t shape_count = sizeof shapes / sizeof shapes[0];

const struct shape *shape_find(const char *name) {
    for (size_t i = 0; i < shape_count; i++)
        if (strcmp(shapes[i].name, name) == 0) return &shapes[i];
    return NULL;
}

/* ---- policies (bench_engine --policy-scaling, test_scaling) ---- */

/* `prefix`, the number i in six hex digits, then 'x' up to len bytes. */
static void put_padded(jg_buf *b, const char *prefix, size_t i, size_t len) {
    size_t n = strlen(prefix) + 7;
    jg_buf_puts(b, prefix);
    put_hex(b, i, 6);
    jg_buf_putc(b, '-');
    for (; n < len; n++)
        jg_buf_putc(b, 'x');
}

void writers_group_name(jg_buf *out, char which, size_t i, size_t name_len) {
    put_padded(out, which == 'e' ? "exempt-" : "writer-", i, name_len);
}

static void put_names(jg_buf *b, char which, size_t n, size_t name_len) {
    for (size_t i = 0; i < n; i++) {
        jg_buf_puts(b, i ? ",\"" : "\"");
        writers_group_name(b, which, i, name_len);
        jg_buf_putc(b, '"');
    }
}

void policy_writers(jg_buf *out, size_t n_exempt, size_t n_writers, size_t name_len) {
    jg_buf_reset(out);
    jg_buf_puts(out, "{\"statusWriterExemptGroups\":[");
    put_names(out, 'e', n_exempt, name_len);
    jg_buf_puts(out, "],\"controllers\":[{\"name\":\"" WRITERS_CONTROLLER "\",\"statusWriters\":"
                     "{\"users\":[\"system:serviceaccount:ctl:ctl\"],\"groups\":[");
    put_names(out, 'w', n_writers, name_len);
    jg_buf_puts(out, "]}}]}");
}

void review_writers(jg_buf *out, size_t n_groups, const char *last) {
    static const char job[] =
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
        "\"j\",\"namespace\":\"default\"},\"spec\":{\"managedBy\":\"" WRITERS_CONTROLLER
        "\"},\"status\":{}}";
    jg_buf_reset(out);
    jg_buf_puts(out,
                "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                "\"request\":{\"uid\":\"scale\",\"kind\":{\"group\":\"batch\",\"version\":"
                "\"v1\",\"kind\":\"Job\"},\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
                "\"resource\":\"jobs\"},\"subResource\":\"status\",\"name\":\"j\","
                "\"namespace\":\"default\",\"operation\":\"UPDATE\",\"userInfo\":{\"username\":"
                "\"bench\",\"groups\":[");
    for (size_t i = 0; i < n_groups; i++) {
        jg_buf_puts(out, i ? ",\"" : "\"");
        if (last && i == n_groups - 1) {
            jg_buf_puts(out, last);
        } else {
            jg_buf_putc(out, 'r');
            put_hex(out, i, 6);
        }
        jg_buf_putc(out, '"');
    }
    jg_buf_puts(out, "]},\"object\":");
    jg_buf_puts(out, job);
    jg_buf_puts(out, ",\"oldObject\":");
    jg_buf_puts(out, job);
    jg_buf_puts(out, "}}");
}

/* Glob g of controller k: literal, prefix and suffix in turn, the last one general. */
static void put_glob(jg_buf *b, size_t k, size_t g) {
    static const char *const forms[] = {"team-%04zu-%zu", "team-%04zu-%zu-*", "*-%04zu-%zu"};
    if (g == GLOBS_PER_CONTROLLER - 1)
        jg_buf_printf(b, GLOB_GENERAL_FORM, k, g);
    else
        jg_buf_printf(b, forms[g % 3], k, g);
}

size_t policy_globs(jg_buf *out, size_t max_bytes) {
    static const char end[] = "]}";
    jg_buf_reset(out);
    jg_buf_puts(out, "{\"allowUnlistedControllers\":false,\"controllers\":[");
    size_t k = 0;
    for (; k < 1024; k++) {
        size_t start = out->len;
        jg_buf_printf(out, "%s{\"name\":\"c%04zu.example.com/ctl\",\"namespaces\":[", k ? "," : "",
                      k);
        for (size_t g = 0; g < GLOBS_PER_CONTROLLER; g++) {
            jg_buf_puts(out, g ? ",\"" : "\"");
            put_glob(out, k, g);
            jg_buf_putc(out, '"');
        }
        jg_buf_puts(out, "]}");
        if (out->len + sizeof end > max_bytes) { /* this one does not fit */
            out->len = start;
            break;
        }
    }
    jg_buf_puts(out, end);
    return k;
}

void policy_globs_worst(jg_buf *out, size_t n) {
    jg_buf_reset(out);
    jg_buf_puts(out, "{\"allowUnlistedControllers\":false,\"controllers\":[");
    for (size_t k = 0; k < n; k++) {
        jg_buf_printf(out, "%s{\"name\":\"c%04zu.example.com/ctl\",\"namespaces\":[\"*",
                      k ? "," : "", k);
        for (size_t i = 0; i < 31; i++)
            jg_buf_putc(out, 'a');
        jg_buf_puts(out, "b*\"]}");
    }
    jg_buf_puts(out, "]}");
}

void review_namespace(jg_buf *out, const char *ns, const char *managed_by) {
    jg_buf_reset(out);
    jg_buf_printf(
        out,
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"scale\",\"kind\":{\"group\":\"batch\",\"version\":"
        "\"v1\",\"kind\":\"Job\"},\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
        "\"resource\":\"jobs\"},\"name\":\"j\",\"namespace\":\"%s\",\"operation\":"
        "\"CREATE\",\"userInfo\":{\"username\":\"bench\"},\"object\":{\"apiVersion\":"
        "\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"namespace\":\"%s\"},"
        "\"spec\":{\"managedBy\":\"%s\",\"template\":{\"spec\":{\"containers\":[{"
        "\"name\":\"c\",\"image\":\"busybox\"}],\"restartPolicy\":\"Never\"}}}}}}",
        ns, ns, managed_by);
}
