/* Subcommands of the jobguard binary. Each returns the process exit code. */
#ifndef JOBGUARD_CLI_H
#define JOBGUARD_CLI_H

#include "jobguard/buf.h"
#include "jobguard/policy.h"

int jg_cmd_check(int argc, char **argv);
int jg_cmd_convert(int argc, char **argv);
int jg_cmd_policy(int argc, char **argv);
int jg_cmd_rules(int argc, char **argv);
int jg_cmd_scan(int argc, char **argv);
int jg_cmd_serve(int argc, char **argv);
int jg_cmd_vap(int argc, char **argv);

/* Reads a whole file ("-" = stdin) into `out`, refusing more than `max` bytes. On failure returns
 * false and writes a reason into err. */
bool jg_read_file(const char *path, size_t max, jg_buf *out, char *err, size_t errlen);

struct jg_config;
struct jg_doc;

/* The rule options check and scan share: --parity, --disable-rule and --mode ID=MODE. Returns
 * false after saying on stderr, as "jobguard <cmd>: <flag>: <reason>", what is wrong. */
bool jg_cli_config_flag(const char *cmd, const char *flag, const char *value,
                        struct jg_config *cfg);

/* Where a document of the reader is, for messages: "<source>:<line>", "stdin:<line>" for "-",
 * and " items[N]" after it for an element of a List. */
void jg_cli_where(const struct jg_doc *d, char *out, size_t cap);

/* Appends the JSON text json[0..len) without whitespace outside strings (the text must be valid
 * JSON: the decoder checked it), so that it fits on one line. */
void jg_cli_json_compact(jg_buf *out, const char *json, size_t len);

/* The policy of `--policy-file FILE` or of `--values FILE` (a Helm values file's `.policy`, as the
 * chart writes it), or none (*out NULL: the defaults, also for values without .policy). false:
 * the reason is printed as "jobguard CMD: ...". */
bool jg_cli_load_policy(const char *cmd, const char *policy_file, const char *values_file,
                        struct jg_policy **out);

#endif
