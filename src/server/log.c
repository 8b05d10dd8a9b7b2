/* log: JSON or text lines on one fd, one write(2) per line. */
#include "jobguard/server/log.h"

#include "jobguard/admit.h"
#include "jobguard/rules.h"
#include "jobguard/utf8.h"
#include "jobguard/verdict.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum jg_log_level g_level = JG_LOG_INFO;
static enum jg_log_format g_format = JG_LOG_FORMAT_JSON;
static int g_fd = 2;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void jg_log_setup(enum jg_log_level level, enum jg_log_format format, int fd) {
    g_level = level;
    g_format = format;
    g_fd = fd;
}

bool jg_log_parse_level(const char *s, enum jg_log_level *out) {
    for (int i = 0; i < 4; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum jg_log_level)i;
            return true;
        }
    return false;
}

bool jg_log_parse_format(const char *s, enum jg_log_format *out) {
    if (strcmp(s, "json") == 0)
        *out = JG_LOG_FORMAT_JSON;
    else if (strcmp(s, "text") == 0)
        *out = JG_LOG_FORMAT_TEXT;
    else
        return false;
    return true;
}

bool jg_log_enabled(enum jg_log_level l) {
    return l >= g_level;
}

static void put_ts(jg_buf *b) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    jg_buf_printf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

bool jg_log_begin(struct jg_log *l, enum jg_log_level level, const char *msg) {
    if (!jg_log_enabled(level)) return false;
    l->b = (jg_buf)JG_BUF_INIT;
    l->json = g_format == JG_LOG_FORMAT_JSON;
    if (l->json) {
        jg_buf_puts(&l->b, "{\"ts\":\"");
        put_ts(&l->b);
        jg_buf_printf(&l->b, "\",\"level\":\"%s\",\"msg\":", level_names[level]);
        jg_buf_json_string(&l->b, msg, strlen(msg));
    } else {
        put_ts(&l->b);
        jg_buf_printf(&l->b, " %-5s %s", level_names[level], msg);
    }
    return true;
}

static void put_key(struct jg_log *l, const char *key) {
    if (l->json) {
        jg_buf_putc(&l->b, ',');
        jg_buf_json_string(&l->b, key, strlen(key));
        jg_buf_putc(&l->b, ':');
    } else {
        jg_buf_printf(&l->b, " %s=", key);
    }
}

/* Text values are quoted when empty or when they hold a space, quote, '=' or a control byte. */
static bool text_needs_quotes(const char *v, size_t n) {
    if (n == 0) return true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c <= ' ' || c == '"' || c == '=' || c == 0x7f) return true;
    }
    return false;
}

/* v, cut to its first `max` bytes at a UTF-8 boundary and client-go's marker when longer, as a
 * JSON string (or bare in text format when it needs no quotes). */
static void put_value(jg_buf *b, bool json, const char *v, size_t n, size_t max) {
    char cut[JG_LOG_MAX_VALUE + 48];
    if (n > max) {
        size_t k = jg_utf8_cut(v, n, max);
        memcpy(cut, v, k);
        int m = snprintf(cut + k, sizeof cut - k, " [truncated %zu bytes]", n - k);
        v = cut;
        n = k + (size_t)m;
    }
    if (json || text_needs_quotes(v, n))
        jg_buf_json_string(b, v, n);
    else
        jg_buf_put(b, v, n);
}

void jg_log_strn(struct jg_log *l, const char *key, const char *v, size_t n) {
    put_key(l, key);
    put_value(&l->b, l->json, v, n, JG_LOG_MAX_VALUE);
}

void jg_log_str(struct jg_log *l, const char *key, const char *v) {
    jg_log_strn(l, key, v ? v : "", v ? strlen(v) : 0);
}

void jg_log_int(struct jg_log *l, const char *key, int64_t v) {
    put_key(l, key);
    jg_buf_put_i64(&l->b, v);
}

void jg_log_uint(struct jg_log *l, const char *key, uint64_t v) {
    put_key(l, key);
    jg_buf_printf(&l->b, "%" PRIu64, v);
}

void jg_log_double(struct jg_log *l, const char *key, double v) {
    put_key(l, key);
    jg_buf_printf(&l->b, "%.6g", v);
}

static void log_bool(struct jg_log *l, const char *key, bool v) {
    put_key(l, key);
    jg_buf_puts(&l->b, v ? "true" : "false");
}

void jg_log_raw(struct jg_log *l, const char *key, const char *json, size_t n) {
    put_key(l, key);
    jg_buf_put(&l->b, json, n);
}

void jg_log_end(struct jg_log *l) {
    jg_buf_puts(&l->b, l->json ? "}\n" : "\n");
    if (!l->b.oom) {
        const char *p = l->b.data;
        size_t left = l->b.len;
        while (left > 0) {
            ssize_t w = write(g_fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            p += w;
            left -= (size_t)w;
        }
    }
    jg_buf_free(&l->b);
}

void jg_log_request(struct jg_log *l, const struct jg_outcome *o) {
    jg_log_str(l, "uid", o->uid);
    jg_log_str(l, "namespace", o->namespace_);
    jg_log_str(l, "name", o->name);
    jg_log_str(l, "user", o->user);
    jg_log_str(l, "operation", o->operation);
    jg_log_str(l, "resource", o->resource);
    jg_log_str(l, "subresource", o->sub_resource);
    log_bool(l, "dry_run", o->dry_run);
}

/* `,"name":<value cut at JG_LOG_MAX_ERROR_VALUE>` of one error object */
static void put_member(jg_buf *b, const char *name, jg_str v) {
    jg_buf_printf(b, ",\"%s\":", name);
    put_value(b, true, v.p, v.n, JG_LOG_MAX_ERROR_VALUE);
}

void jg_log_errors(struct jg_log *l, const char *key, const struct jg_errors *e) {
    jg_buf list = JG_BUF_INIT;
    size_t shown = 0, listed[JG_LOG_MAX_ERRORS], left_out = e->omitted;
    jg_buf_putc(&list, '[');
    for (size_t i = 0; i < e->n; i++) {
        /* a repeat of a listed error is dropped (on UPDATE the format check runs twice,
         * docs/rules.md §2.6); compared with the listed ones only, so the cost stays linear */
        bool dup = false;
        for (size_t j = 0; j < shown && !dup; j++)
            dup = jg_str_eq(jg_err_field(e, i), jg_err_field(e, listed[j])) &&
                  jg_str_eq(jg_err_body(e, i), jg_err_body(e, listed[j]));
        if (dup) continue;
        if (shown == JG_LOG_MAX_ERRORS) {
            left_out++;
            continue;
        }
        listed[shown] = i;
        const char *rule = jg_rules[e->v[i].rule].name;
        jg_buf_puts(&list, shown++ ? ",{\"rule\":" : "{\"rule\":");
        jg_buf_json_string(&list, rule, strlen(rule));
        if (e->v[i].field_len) put_member(&list, "field", jg_err_field(e, i));
        if (e->v[i].value_len) put_member(&list, "value", jg_err_value(e, i));
        put_member(&list, "message", jg_err_body(e, i));
        jg_buf_putc(&list, '}');
    }
    jg_buf_putc(&list, ']');
    if (!list.oom) jg_log_raw(l, key, list.data, list.len);
    jg_buf_free(&list);
    if (left_out) {
        char k[64];
        snprintf(k, sizeof k, "%s_omitted", key);
        jg_log_uint(l, k, left_out);
    }
}

void jg_log_msg(enum jg_log_level level, const char *msg) {
    struct jg_log l;
    if (jg_log_begin(&l, level, msg)) jg_log_end(&l);
}
