#!/usr/bin/env python3
"""Audit logs for bench/replay/run.sh, as kube-apiserver writes them with --audit-log-path (one
audit.k8s.io/v1 Event per line, RequestResponse level for jobs and jobs/status, Metadata for the
rest, as the audit policy of docs/replay.md records them).

    gen.py kueue MB OUT     Kueue-like traffic until OUT holds MB megabytes (10^6 bytes)
    gen.py one N OUT        one Job: its create, then N status writes

kueue: Jobs are created by users (suspended, as Kueue's webhook leaves them), unsuspended by
Kueue's controller, their status written four times by the Job controller, or, for one Job in
ten (MultiKueue), by Kueue's service account — and for one in a hundred of those by the worker
cluster's own controller, which the bench policy does not allow — then deleted by the TTL
controller; at most LIVE (2,000) Jobs exist at once. Around them: the RequestReceived stage of
each write, gets and watches, lease renewals and pod writes (other kinds, Metadata level). Every
Job carries managedFields and a pod template, about 3.5 KB, so a write event with both objects is
about 8 KB."""
import json
import random
import time
import sys

LIVE = 2000
rnd = random.Random(20261127)

KUEUE = ("system:serviceaccount:kueue-system:kueue-controller-manager",
         ["system:serviceaccounts", "system:serviceaccounts:kueue-system",
          "system:authenticated"])
JOBCTL = ("system:serviceaccount:kube-system:job-controller",
          ["system:serviceaccounts", "system:serviceaccounts:kube-system",
           "system:authenticated"])
TTL = ("system:serviceaccount:kube-system:ttl-after-finished-controller",
       ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"])
WORKER = ("system:serviceaccount:kueue-system:multikueue-worker-sync",
          ["system:serviceaccounts", "system:serviceaccounts:kueue-system",
           "system:authenticated"])
USERS = [("user%d@example.com" % i, ["oidc:team-%d" % (i % 7), "system:authenticated"])
         for i in range(40)]

clock = [1763629200.0]


def ts():
    clock[0] += rnd.random() * 0.004
    s = clock[0]
    whole = int(s)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + ".%06dZ" % int(
        (s - whole) * 1e6)


ids = [0]


def audit_id():
    ids[0] += 1
    return "%08x-%04x-4%03x-8%03x-%012x" % (ids[0], ids[0] & 0xffff, ids[0] & 0xfff, 7,
                                            ids[0] * 2654435761 & 0xffffffffffff)


def user_json(u):
    return '{"username":%s,"groups":%s}' % (json.dumps(u[0]), json.dumps(u[1]))


def job(ns, name, uid, rv, managed_by, suspend, status, gen):
    mf = ('[{"manager":"kubectl-create","operation":"Update","apiVersion":"batch/v1","time":'
          '"2026-11-20T09:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":'
          '{".":{},"f:kueue.x-k8s.io/queue-name":{}}},"f:spec":{"f:backoffLimit":{},'
          '"f:completionMode":{},"f:completions":{},"f:managedBy":{},"f:parallelism":{},'
          '"f:podReplacementPolicy":{},"f:suspend":{},"f:template":{"f:spec":{"f:containers":'
          '{"k:{\\"name\\":\\"main\\"}":{".":{},"f:command":{},"f:image":{},"f:name":{},'
          '"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}},'
          '"f:restartPolicy":{}}}}}},{"manager":"kube-controller-manager","operation":"Update",'
          '"apiVersion":"batch/v1","time":"2026-11-20T09:00:05Z","fieldsType":"FieldsV1",'
          '"fieldsV1":{"f:status":{"f:active":{},"f:ready":{},"f:startTime":{},'
          '"f:terminating":{},"f:uncountedTerminatedPods":{}}},"subresource":"status"}]')
    spec = ('{"parallelism":4,"completions":4,"backoffLimit":6,"selector":{"matchLabels":'
            '{"batch.kubernetes.io/controller-uid":"%s"}},"manualSelector":false,"template":'
            '{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"%s",'
            '"batch.kubernetes.io/job-name":"%s","controller-uid":"%s","job-name":"%s"}},'
            '"spec":{"containers":[{"name":"main","image":"registry.example.com/train:2.4.1",'
            '"command":["python","-m","train","--epochs","3"],"env":[{"name":"WORLD_SIZE",'
            '"value":"4"},{"name":"NCCL_DEBUG","value":"WARN"}],"resources":{"requests":'
            '{"cpu":"2","memory":"8Gi"},"limits":{"memory":"8Gi"}},'
            '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",'
            '"imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Never",'
            '"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},'
            '"schedulerName":"default-scheduler"}},"completionMode":"NonIndexed","suspend":%s,'
            '"podReplacementPolicy":"TerminatingOrFailed","managedBy":"%s"}'
            % (uid, uid, name, uid, name, "true" if suspend else "false", managed_by))
    return ('{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"%s","namespace":"%s",'
            '"uid":"%s","resourceVersion":"%d","generation":%d,'
            '"creationTimestamp":"2026-11-20T09:00:00Z","labels":{"kueue.x-k8s.io/queue-name":'
            '"lq-%s"},"managedFields":%s},"spec":%s,"status":%s}'
            % (name, ns, uid, rv, gen, ns, mf, spec, status))


RUNNING = ('{"startTime":"2026-11-20T09:00:05Z","active":4,"ready":%d,"terminating":0,'
           '"uncountedTerminatedPods":{}}')
DONE = ('{"conditions":[{"type":"SuccessCriteriaMet","status":"True",'
        '"lastProbeTime":"2026-11-20T09:20:00Z","lastTransitionTime":"2026-11-20T09:20:00Z"},'
        '{"type":"Complete","status":"True","lastProbeTime":"2026-11-20T09:20:00Z",'
        '"lastTransitionTime":"2026-11-20T09:20:00Z"}],"startTime":"2026-11-20T09:00:05Z",'
        '"completionTime":"2026-11-20T09:20:00Z","active":0,"succeeded":4,"ready":0,'
        '"terminating":0,"uncountedTerminatedPods":{}}')


def event(verb, u, ns, name, sub, code, level, req=None, resp=None, rv="", uid="", stage=None,
          resource="jobs", group="batch"):
    t = ts()
    uri = "/apis/%s/v1/namespaces/%s/%s" % (group, ns, resource) if group else \
        "/api/v1/namespaces/%s/%s" % (ns, resource)
    if verb != "create":
        uri += "/" + name
    if sub:
        uri += "/" + sub
    ref = '{"resource":"%s","namespace":"%s","name":"%s"' % (resource, ns, name)
    if uid:
        ref += ',"uid":"%s"' % uid
    if group:
        ref += ',"apiGroup":"%s"' % group
    ref += ',"apiVersion":"v1"'
    if rv:
        ref += ',"resourceVersion":"%s"' % rv
    if sub:
        ref += ',"subresource":"%s"' % sub
    ref += "}"
    out = ('{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"%s","auditID":"%s",'
           '"stage":"%s","requestURI":"%s","verb":"%s","user":%s,"sourceIPs":["10.0.3.%d"],'
           '"userAgent":"kube-controller-manager/v1.34.2 (linux/amd64) kubernetes/7c4c2f3",'
           '"objectRef":%s' % (level, audit_id(), stage or "ResponseComplete", uri, verb,
                               user_json(u), rnd.randrange(1, 250), ref))
    if not stage:
        out += ',"responseStatus":{"metadata":{},"code":%d}' % code
        if req:
            out += ',"requestObject":' + req
        if resp:
            out += ',"responseObject":' + resp
    out += ',"requestReceivedTimestamp":"%s","stageTimestamp":"%s"' % (t, t)
    if not stage:
        out += (',"annotations":{"authorization.k8s.io/decision":"allow",'
                '"authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding"}')
    return out + "}\n"


def kueue(mb, out):
    limit = mb * 10 ** 6
    written = 0
    rv = [100000]
    live = []  # [ns, name, uid, rv, managedBy, step, writer]
    n = [0]

    def next_rv():
        rv[0] += rnd.randrange(1, 40)
        return rv[0]

    with open(out, "w") as fh:
        while written < limit:
            if len(live) < LIVE and (not live or rnd.random() < 0.3):
                n[0] += 1
                ns = "team-%d" % (n[0] % 23)
                name = "train-%07d" % n[0]
                uid = "%08x-0000-4000-8000-%012x" % (n[0], n[0])
                mk = n[0] % 10 == 0
                managed_by = "kueue.x-k8s.io/multikueue" if mk else "kubernetes.io/job-controller"
                writer = (WORKER if n[0] % 1000 == 0 else KUEUE) if mk else JOBCTL
                u = USERS[n[0] % len(USERS)]
                r = next_rv()
                obj = job(ns, name, uid, r, managed_by, True, "{}", 1)
                lines = event("create", u, ns, name, "", 0, "RequestResponse", stage="RequestReceived")
                lines += event("create", u, ns, name, "", 201, "RequestResponse", req=obj,
                               resp=obj, uid=uid)
                live.append([ns, name, uid, r, managed_by, 0, writer])
            else:
                i = rnd.randrange(len(live))
                ns, name, uid, r, managed_by, step, writer = live[i]
                if step == 0:  # Kueue admits: unsuspend
                    nr = next_rv()
                    sent = job(ns, name, uid, r, managed_by, False, "{}", 1)
                    got = job(ns, name, uid, nr, managed_by, False, "{}", 2)
                    lines = event("update", KUEUE, ns, name, "", 0, "RequestResponse",
                                  stage="RequestReceived")
                    lines += event("update", KUEUE, ns, name, "", 200, "RequestResponse",
                                   req=sent, resp=got, rv=str(r), uid=uid)
                elif step <= 4:  # status writes
                    nr = next_rv()
                    st = RUNNING % min(step, 4) if step < 4 else DONE
                    sent = job(ns, name, uid, r, managed_by, False, st, 2)
                    got = job(ns, name, uid, nr, managed_by, False, st, 2)
                    lines = event("update", writer, ns, name, "status", 0, "RequestResponse",
                                  stage="RequestReceived")
                    lines += event("update", writer, ns, name, "status", 200, "RequestResponse",
                                   req=sent, resp=got, rv=str(r), uid=uid)
                else:  # finished: the TTL controller deletes it
                    nr = r
                    lines = event("delete", TTL, ns, name, "", 200, "RequestResponse",
                                  resp='{"kind":"Status","apiVersion":"v1","metadata":{},'
                                       '"status":"Success","details":{"name":"%s","group":'
                                       '"batch","kind":"jobs","uid":"%s"}}' % (name, uid))
                    live[i] = live[-1]
                    live.pop()
                if step <= 4:
                    live[i][3] = nr
                    live[i][5] = step + 1
            # around them: reads, leases and pods (Metadata level)
            for _ in range(rnd.randrange(0, 4)):
                k = rnd.random()
                if k < 0.4:
                    lines += event("get", JOBCTL, "team-%d" % rnd.randrange(23), "train-x", "", 200,
                                   "Metadata")
                elif k < 0.7:
                    lines += event("update", KUEUE, "kube-system", "kueue-leader", "", 200,
                                   "Metadata", resource="leases", group="coordination.k8s.io")
                else:
                    lines += event("create", JOBCTL, "team-%d" % rnd.randrange(23),
                                   "train-pod-%d" % rnd.randrange(10 ** 6), "", 201, "Metadata",
                                   resource="pods", group="")
            fh.write(lines)
            written += len(lines)


def one(n, out):
    ns, name, uid = "team-a", "long-lived", "0c0ffee0-0000-4000-8000-000000000001"
    r = 1000
    with open(out, "w") as fh:
        obj = job(ns, name, uid, r, "kueue.x-k8s.io/multikueue", False, "{}", 1)
        fh.write(event("create", USERS[0], ns, name, "", 201, "RequestResponse", req=obj,
                       resp=obj, uid=uid))
        for i in range(n):
            st = RUNNING % (i % 5)
            sent = job(ns, name, uid, r, "kueue.x-k8s.io/multikueue", False, st, 1)
            r += 1
            got = job(ns, name, uid, r, "kueue.x-k8s.io/multikueue", False, st, 1)
            fh.write(event("update", KUEUE, ns, name, "status", 200, "RequestResponse", req=sent,
                           resp=got, rv=str(r - 1), uid=uid))


if sys.argv[1] == "kueue":
    kueue(int(sys.argv[2]), sys.argv[3])
else:
    one(int(sys.argv[2]), sys.argv[3])
