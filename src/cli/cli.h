/* Subcommands of the jobguard binary. Each returns the process exit code. */
#ifndef JOBGUARD_CLI_H
#define JOBGUARD_CLI_H

#include "jobguard/buf.h"
#include "jobguard/policy.h"

int jg_cmd_check(int argc, char **argv);
int jg_cmd_convert(int argc, char **argv);
int jg_cmd_policy(int argc, char **argv);
int jg_cmd_replay(int argc, char **argv);
int jg_cmd_rules(int argc, char **argv);
int jg_cmd_scan(int argc, char **argv);
int jg_cmd_serve(int argc, char **argv);
int jg_cmd_vap(int argc, char **argv);

struct jg_config;
struct jg_doc;

/* --policy-file and --values: the files jg_cli_load_policy reads. */
struct jg_cli_policy_files {
    const char *policy, *values;
};

/* The options check, scan, replay and vap share: flag "parity", "disable-rule" or "mode" (its
 * name in the flag table) into cfg, "policy-file" or "values" into files. Returns false after
 * saying on stderr, as "jobguard <cmd>: --<flag>: <reason>", what is wrong. */
bool jg_cli_config_flag(const char *cmd, const char *flag, const char *value, struct jg_config *cfg,
                        struct jg_cli_policy_files *files);

/* --fail-on of scan and replay: "warn" or "audit" into *fail_on (bit 1 << mode of the modes
 * that fail the run besides deny); false after saying on stderr what is wrong. */
bool jg_cli_fail_on(const char *cmd, const char *value, unsigned *fail_on);

/* The exit status of scan and replay: 2 when something was unreadable, 1 when an object or write
 * broke a deny-mode rule (broken_by_mode[JG_MODE_DENY]) or a rule of a mode in fail_on, else 0. */
int jg_cli_exit_status(size_t unreadable, const size_t broken_by_mode[], unsigned fail_on);

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

/* The policy a Helm values file gives the chart (charts/jobguard): its `.policy` block, read as
 * the chart's install hook reads the policy file it renders from it. NULL with *absent set when
 * the block is absent or empty (the chart installs no policy file: built-in defaults); NULL with
 * err set when the file or the block is invalid. */
struct jg_policy *jg_cli_load_values(const char *file, bool *absent, char *err, size_t errlen);

#endif
