/* watch: the file watcher, one thread polling a list of watched files (the serving certificate
 * pair, the policy file). Every poll interval, on request (SIGHUP, "force") or when an entry asks
 * to be looked at again at a given time, it calls each entry's check in the order added; a check
 * compares its files with what it last read and reloads them when they changed. The watcher only
 * schedules: what a file means, and what a change does, is the entry's. */
#ifndef JOBGUARD_SERVER_WATCH_H
#define JOBGUARD_SERVER_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define JG_WATCH_MAX 4 /* entries: the certificate pair and the policy file */

struct jg_watch_entry {
    const char *path;          /* named in the "still busy" shutdown log */
    bool (*check)(bool force); /* force: whatever the stat says. Returns whether it read a file */
    /* When to look again even without a change (Unix time, 0: no such time), e.g. the second
     * after a certificate's notBefore; NULL: none. */
    int64_t (*due)(void);
};

/* Before jg_watch_start. False: the list is full. */
bool jg_watch_add(const struct jg_watch_entry *e);
/* Seconds between polls; 0 (the default): only on request and when an entry is due. */
void jg_watch_set_poll(unsigned seconds);

/* Starts the thread. */
bool jg_watch_start(char *err, size_t errlen);
void jg_watch_request_reload(void); /* async-signal-unsafe: call from the signal thread */
/* Asks the watcher to return (it abandons a settle wait at once, finishes a check in progress). */
void jg_watch_request_stop(void);
/* Asks it to stop and waits until deadline (CLOCK_MONOTONIC) at most. True: it has returned and
 * is joined. False: it is still busy (*doing, e.g. "reading", and *path say with what) and must
 * be left running: the caller then exits the process without freeing what the watcher uses. */
bool jg_watch_stop(const struct timespec *deadline, const char **doing, const char **path);

/* For the checks, on the watcher thread: say what is being done to which file (for that log), and
 * sleep ms unless the watcher is asked to stop (false when it is). */
void jg_watch_doing(const char *what, const char *path);
bool jg_watch_sleep(long ms);

#endif
