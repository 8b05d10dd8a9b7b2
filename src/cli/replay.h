/* jobguard replay: the audit event reader (replay_event.c) and the command (replay.c). */
#ifndef JOBGUARD_CLI_REPLAY_H
#define JOBGUARD_CLI_REPLAY_H

#include "jobguard/view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

struct jg_str_vec {
    jg_str *v;
    size_t n, cap;
};

/* authentication/v1 UserInfo: the members the webhook's userInfo carries that the rules read. */
struct jg_audit_user {
    bool set, groups_set;
    jg_str username;
    struct jg_str_vec groups;
};

/* audit/v1 ObjectReference. */
struct jg_audit_ref {
    bool set;
    jg_str resource, namespace_, name, uid, group, version, resource_version, subresource;
};

/* requestObject / responseObject (runtime.Unknown, written as the object's JSON). */
struct jg_audit_object {
    bool present;   /* there and not null */
    bool is_object; /* a JSON object (a JSON patch is an array) */
    jg_str json;    /* the value's bytes */
    jg_str kind, api_version, name, namespace_, uid, resource_version;
    bool deleting; /* metadata.deletionTimestamp is set */
};

/* One audit.k8s.io/v1 Event. Strings are slices of the event's JSON, or of `arena` when they
 * held escapes; valid until the next parse. */
struct jg_audit_event {
    jg_str kind, api_version, level, audit_id, stage, request_uri, verb, received, stage_time;
    struct jg_audit_user user, impersonated;
    struct jg_audit_ref ref;
    bool has_code;
    long code;
    jg_str status_message, status_reason;
    struct jg_audit_object request, response;
    /* decoded strings that held escapes (arena_used must stay the member after arena) */
    char arena[16384];
    size_t arena_used;
};

/* Reads one event. The event struct is reused from call to call (its group vectors keep their
 * memory; zero it before the first call). On failure writes the reason into err. */
bool jg_audit_event_parse(const char *json, size_t len, struct jg_audit_event *ev, char *err,
                          size_t errlen);
void jg_audit_event_free(struct jg_audit_event *ev);

#endif
