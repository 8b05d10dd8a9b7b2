/* log: one line per event on stderr, JSON (default) or human text, written with a single write(2)
 * so lines from different threads never interleave. Fields are added in order:
 *
 *     struct jg_log l;
 *     if (jg_log_begin(&l, JG_LOG_INFO, "admission denied")) {
 *         jg_log_str(&l, "uid", uid);
 *         jg_log_end(&l);
 *     }
 */
#ifndef JOBGUARD_SERVER_LOG_H
#define JOBGUARD_SERVER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobguard/buf.h"

enum jg_log_level { JG_LOG_DEBUG, JG_LOG_INFO, JG_LOG_WARN, JG_LOG_ERROR };
enum jg_log_format { JG_LOG_FORMAT_JSON, JG_LOG_FORMAT_TEXT };

/* Not thread-safe: call once before starting threads. Defaults: info, json, fd 2. */
void jg_log_setup(enum jg_log_level level, enum jg_log_format format, int fd);

bool jg_log_parse_level(const char *s, enum jg_log_level *out);
bool jg_log_parse_format(const char *s, enum jg_log_format *out);
bool jg_log_enabled(enum jg_log_level l);

struct jg_log {
    jg_buf b;
    bool json;
};

/* A string value longer than this is cut to its first bytes and " [truncated N bytes]", so that
 * one line stays a few tens of KiB whatever a request held (docs/limits.md). */
#define JG_LOG_MAX_VALUE 4096

/* Returns false (and does nothing) when the level is filtered out. */
bool jg_log_begin(struct jg_log *l, enum jg_log_level level, const char *msg);
void jg_log_str(struct jg_log *l, const char *key, const char *v);
void jg_log_strn(struct jg_log *l, const char *key, const char *v, size_t n);
void jg_log_int(struct jg_log *l, const char *key, int64_t v);
void jg_log_uint(struct jg_log *l, const char *key, uint64_t v);
void jg_log_double(struct jg_log *l, const char *key, double v);
/* `json` is already valid JSON (an array of strings, ...); text format prints it as is. */
void jg_log_raw(struct jg_log *l, const char *key, const char *json, size_t n);
/* Writes the line and frees the buffer. */
void jg_log_end(struct jg_log *l);

struct jg_outcome;
/* The request fields every admission line carries, in this order: uid, namespace, name, user,
 * operation, resource, subresource, dry_run. A field the outcome had to cut ends in
 * ` [truncated N bytes]` (admit.h). */
void jg_log_request(struct jg_log *l, const struct jg_outcome *o);

/* The errors an `admission audit` line lists: at most JG_LOG_MAX_ERRORS, each string of them cut
 * at JG_LOG_MAX_ERROR_VALUE bytes as any value is (docs/modes.md "Logs and metrics"). */
#define JG_LOG_MAX_ERRORS 8
#define JG_LOG_MAX_ERROR_VALUE 1024

struct jg_errors;
/* `key` (an array) with one object per error of `e`, in order, repeats of a listed one dropped:
 * {"rule": ID, "field": ..., "value": <the bad value as the message renders it>, "message": <the
 * body, as in details.causes>} ("field" and "value" left out when the error has none); then, when
 * errors are not listed (past JG_LOG_MAX_ERRORS, or left out by the error list itself, verdict.h),
 * `<key>_omitted`: how many. */
void jg_log_errors(struct jg_log *l, const char *key, const struct jg_errors *e);

/* Shorthand for a message with no fields. */
void jg_log_msg(enum jg_log_level level, const char *msg);

#endif
