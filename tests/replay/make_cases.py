#!/usr/bin/env python3
"""Writes the audit logs of tests/replay/cases/ (run once; the logs are committed, and
tests/offline/run_cases.sh checks replay's exact output on them).

    make_cases.py CASES_DIR

Each event is an audit.k8s.io/v1 Event as kube-apiserver writes it (members in the order of the
API's Go types, MicroTime timestamps, objectRef filled from the request object except for a patch,
responseStatus with only the code on success). The logs tell small histories: Kueue and a
MultiKueue worker writing Jobs, an external Job controller on an older cluster, the log starting
mid-history, Metadata and Request levels, a resourceVersion gap, the API server's own refusals,
deletes with and without finalizers, dry runs, impersonation, EventLists, bad input."""
import copy
import datetime
import json
import os
import sys
import zlib

OUT = sys.argv[1]
T0 = datetime.datetime(2026, 11, 20, 9, 0, 0, tzinfo=datetime.timezone.utc)
clock = [0]
ids = [0]

KUEUE = "system:serviceaccount:kueue-system:kueue-controller-manager"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:kueue-system",
             "system:authenticated"]
ALICE = "alice@example.com"
ALICE_GROUPS = ["oidc:ml-researchers", "system:authenticated"]
EXT = "system:serviceaccount:ext-system:acme-job-controller"
EXT_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:ext-system",
              "system:authenticated"]
MK = "kueue.x-k8s.io/multikueue"
WORKER = "system:serviceaccount:kueue-system:multikueue-worker-sync"


def go_json(v):
    s = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    for c, e in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        s = s.replace(c, e)
    return s


def now():
    clock[0] += 1
    t = T0 + datetime.timedelta(seconds=3 * clock[0], microseconds=1234 * clock[0])
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_id():
    ids[0] += 1
    return "7d3c2a10-0000-4000-8000-%012d" % ids[0]


def job(name, ns="team-a", uid=None, rv="100", managed_by=MK, suspend=False, status=None,
        finalizers=None, deleting=False, completions=3):
    m = {"name": name, "namespace": ns, "uid": uid or "0b5e0c1a-0000-4000-8000-%012d" %
         zlib.crc32(name.encode()), "resourceVersion": rv, "generation": 1,
         "creationTimestamp": "2026-11-20T08:59:00Z",
         "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}}
    if finalizers:
        m["finalizers"] = finalizers
    if deleting:
        m["deletionTimestamp"] = "2026-11-20T09:30:00Z"
        m["deletionGracePeriodSeconds"] = 0
    spec = {"parallelism": completions, "completions": completions, "backoffLimit": 6,
            "completionMode": "NonIndexed", "suspend": suspend,
            "podReplacementPolicy": "TerminatingOrFailed",
            "template": {"spec": {"containers": [{"name": "main", "image": "busybox:1.36.1",
                                                  "command": ["sleep", "60"]}],
                                  "restartPolicy": "Never"}}}
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"kind": "Job", "apiVersion": "batch/v1", "metadata": m, "spec": spec,
            "status": status if status is not None else {}}


def with_rv(obj, rv):
    o = copy.deepcopy(obj)
    o["metadata"]["resourceVersion"] = rv
    return o


def event(verb, obj_ref, user=ALICE, groups=ALICE_GROUPS, code=200, req=None, resp=None,
          level="RequestResponse", stage="ResponseComplete", query="", imp=None, message=None,
          reason=None, audit_id=None):
    group, version, resource = obj_ref.get("apiGroup", ""), obj_ref.get("apiVersion", "v1"), \
        obj_ref["resource"]
    ns, name, sub = obj_ref.get("namespace", ""), obj_ref.get("name", ""), \
        obj_ref.get("subresource", "")
    uri = ("/apis/%s/%s" % (group, version) if group else "/api/" + version)
    if ns:
        uri += "/namespaces/" + ns
    uri += "/" + resource
    if name and verb != "create":
        uri += "/" + name
    if sub:
        uri += "/" + sub
    uri += query
    ref = dict(obj_ref)
    if req is not None and verb != "patch" and isinstance(req, dict) and "metadata" in req:
        for k, f in (("uid", "uid"), ("resourceVersion", "resourceVersion"), ("name", "name")):
            if req["metadata"].get(f) and not ref.get(k):
                ref[k] = req["metadata"][f]
    order = ["resource", "namespace", "name", "uid", "apiGroup", "apiVersion", "resourceVersion",
             "subresource"]
    ts = now()
    ev = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": level,
          "auditID": audit_id or new_id(), "stage": stage, "requestURI": uri, "verb": verb,
          "user": {"username": user, "groups": groups}}
    if imp:
        ev["impersonatedUser"] = imp
    ev["sourceIPs"] = ["10.0.4.17"]
    ev["userAgent"] = "kube-controller/v1.33.4"
    ev["objectRef"] = {k: ref[k] for k in order if ref.get(k)}
    if stage != "RequestReceived":
        status = {"metadata": {}, "code": code}
        if code >= 300:
            status = {"metadata": {}, "status": "Failure", "message": message or "",
                      "reason": reason or "", "code": code}
        ev["responseStatus"] = status
        if level in ("Request", "RequestResponse") and req is not None:
            ev["requestObject"] = req
        if level == "RequestResponse" and resp is not None:
            ev["responseObject"] = resp
    ev["requestReceivedTimestamp"] = ts
    ev["stageTimestamp"] = ts
    if stage != "RequestReceived":
        ev["annotations"] = {"authorization.k8s.io/decision": "allow",
                             "authorization.k8s.io/reason": "RBAC: allowed"}
    return ev


def ref(name, ns="team-a", sub="", resource="jobs", group="batch", version="v1"):
    r = {"resource": resource, "namespace": ns, "name": name, "apiGroup": group,
         "apiVersion": version}
    if sub:
        r["subresource"] = sub
    return r


def create(obj, user=ALICE, groups=ALICE_GROUPS, rv="100", **kw):
    sent = copy.deepcopy(obj)
    sent["metadata"].pop("resourceVersion", None)
    sent["metadata"].pop("uid", None)
    r = {"resource": "jobs", "namespace": obj["metadata"]["namespace"], "apiGroup": "batch",
         "apiVersion": "v1"}
    if obj["kind"] != "Job":
        g, v = obj["apiVersion"].split("/")
        r = {"resource": obj["kind"].lower() + "s", "namespace": obj["metadata"]["namespace"],
             "apiGroup": g, "apiVersion": v}
    return event("create", r, user, groups, 201, sent, with_rv(obj, rv), **kw)


def update(old_rv, obj, new_rv, sub="", user=ALICE, groups=ALICE_GROUPS, code=200, **kw):
    sent = with_rv(obj, old_rv)
    resp = with_rv(obj, new_rv) if code < 300 else None
    return event("update", ref(obj["metadata"]["name"], obj["metadata"]["namespace"], sub), user,
                 groups, code, sent, resp, **kw)


def write(path, events):
    with open(path, "w") as fh:
        for e in events:
            fh.write(go_json(e) + "\n")


def case(name, cmd, files=None, stdin=None):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cmd"), "w") as fh:
        fh.write(cmd + "\n")
    for fname, events in (files or {}).items():
        write(os.path.join(d, fname), events)
    if stdin is not None:
        write(os.path.join(d, "stdin"), stdin)


POLICY = """# MultiKueue: only Kueue's service account writes the status of the Jobs it manages
controllers:
  - name: kueue.x-k8s.io/multikueue
    statusWriters:
      users:
        - system:serviceaccount:kueue-system:kueue-controller-manager
"""

RUNNING = {"startTime": "2026-11-20T09:00:05Z", "active": 3, "ready": 3, "terminating": 0,
           "uncountedTerminatedPods": {}}


def main():
    os.makedirs(os.path.join(OUT, "_in"), exist_ok=True)
    with open(os.path.join(OUT, "_in", "policy.yaml"), "w") as fh:
        fh.write(POLICY)
    with open(os.path.join(OUT, "_in", "policy-audit.yaml"), "w") as fh:
        fh.write(POLICY + "modes:\n  Policy-StatusWriters: audit\n")
    with open(os.path.join(OUT, "_in", "values.yaml"), "w") as fh:
        fh.write("replicaCount: 2\npolicy:\n" + "".join("  " + l + "\n" for l in
                                                         POLICY.splitlines()[1:]))
    with open(os.path.join(OUT, "_in", "values-no-policy.yaml"), "w") as fh:
        fh.write("replicaCount: 2\npolicy: {}\n")

    # -- a MultiKueue history: Kueue's writes pass, a user's status write is refused -----------
    a = job("train-a", suspend=True)
    mk = [create(a, rv="100"),
          event("create", {"resource": "jobs", "namespace": "team-a", "apiGroup": "batch",
                           "apiVersion": "v1"}, stage="RequestReceived"),
          update("100", job("train-a", suspend=False), "101", user=KUEUE, groups=SA_GROUPS),
          update("101", job("train-a", status=RUNNING), "102", sub="status", user=KUEUE,
                 groups=SA_GROUPS),
          event("get", ref("train-a"), user=ALICE, code=200),
          update("102", job("train-a", status=dict(RUNNING, ready=2)), "103", sub="status"),
          event("create", {"resource": "pods", "namespace": "team-a", "apiVersion": "v1"},
                code=201),
          create(job("train-b", suspend=True), rv="110", user="bob@example.com",
                 groups=["oidc:ml-researchers", "system:authenticated"]),
          update("110", job("train-b", suspend=False), "111", user=KUEUE, groups=SA_GROUPS),
          update("111", job("train-b", status=RUNNING), "112", sub="status", user=WORKER,
                 groups=SA_GROUPS),
          update("112", job("train-b", status=dict(RUNNING, ready=1)), "113", sub="status",
                 user=KUEUE, groups=SA_GROUPS),
          update("113", job("train-b", status=dict(RUNNING, ready=2)), "114", sub="status",
                 user=WORKER, groups=SA_GROUPS),
          ]
    write(os.path.join(OUT, "_in", "multikueue.log"), mk)
    case("multikueue-text", "replay --policy-file ../_in/policy.yaml ../_in/multikueue.log")
    case("walkthrough-multikueue", "replay --policy-file ../_in/policy-audit.yaml --mode "
                                   "Policy-StatusWriters=deny ../_in/multikueue.log")
    case("multikueue-json", "replay -o json --policy-file ../_in/policy.yaml "
                            "../_in/multikueue.log")
    case("multikueue-values", "replay --values ../_in/values.yaml ../_in/multikueue.log")
    case("multikueue-values-no-policy",
         "replay --values ../_in/values-no-policy.yaml ../_in/multikueue.log")
    case("multikueue-warn-fail-on",
         "replay --policy-file ../_in/policy.yaml --mode Policy-StatusWriters=warn --fail-on "
         "warn ../_in/multikueue.log")
    case("multikueue-warn", "replay --policy-file ../_in/policy.yaml --mode "
                            "Policy-StatusWriters=warn ../_in/multikueue.log")

    # -- what the log cannot say: partial and undecided writes ---------------------------------
    b = job("mid-b", status=RUNNING)
    d = job("gap-d", suspend=True)
    e = job("meta-e", suspend=True)
    f = job("patch-f", suspend=True)
    js_old = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "js", "namespace": "team-a", "uid": "js-uid-1",
                           "resourceVersion": "300"},
              "spec": {"managedBy": MK, "replicatedJobs": [
                  {"name": "w", "replicas": 1, "template": {"spec": {"template": {"spec": {
                      "containers": [{"name": "c", "image": "busybox"}],
                      "restartPolicy": "Never"}}}}}]}}
    js_new = copy.deepcopy(js_old)
    js_new["spec"]["managedBy"] = "jobset.sigs.k8s.io/jobset-controller"
    undecided = [
        # the log starts after mid-b was created: its status write is decided for the status
        # writers only, its update for managedBy's format only
        update("200", job("mid-b", status=dict(RUNNING, active=2)), "201", sub="status"),
        update("201", job("mid-b", managed_by="kueue.x-k8s.io/", status=RUNNING), "0",
               code=422, reason="Invalid",
               message='Job.batch "mid-b" is invalid: spec.managedBy: Invalid value: '
                       '"kueue.x-k8s.io/": field is immutable'),
        # a JobSet update with no history: every JobSet rule compares with the stored object
        event("update", ref("js", resource="jobsets", group="jobset.x-k8s.io",
                            version="v1alpha2"), code=200, req=with_rv(js_new, "300"),
              resp=with_rv(js_new, "301")),
        # gap-d: the update names resourceVersion 205, the log last saw 200
        create(d, rv="200"),
        update("205", job("gap-d", suspend=False), "206", user=KUEUE, groups=SA_GROUPS),
        # meta-e: a write at Metadata level leaves its state unknown
        create(e, rv="400"),
        event("update", ref("meta-e"), user=KUEUE, groups=SA_GROUPS, level="Metadata",
              req=with_rv(job("meta-e", suspend=False), "400")),
        update("401", job("meta-e", status=RUNNING), "402", sub="status"),
        # patch-f: a patch at Request level: the patch is logged, not its result
        create(f, rv="500"),
        event("patch", ref("patch-f"), user=KUEUE, groups=SA_GROUPS, level="Request",
              req={"spec": {"suspend": False}}),
        update("501", job("patch-f", status=RUNNING), "502", sub="status", user=KUEUE,
               groups=SA_GROUPS),
        # a write to another subresource leaves the state unknown too
        create(job("scale-g"), rv="600"),
        event("update", ref("scale-g", sub="scale"), code=200,
              req={"kind": "Scale", "apiVersion": "autoscaling/v1",
                   "metadata": {"name": "scale-g", "namespace": "team-a",
                                "resourceVersion": "600"}, "spec": {"replicas": 1}},
              resp={"kind": "Scale", "apiVersion": "autoscaling/v1",
                    "metadata": {"name": "scale-g", "namespace": "team-a",
                                 "resourceVersion": "601"}, "spec": {"replicas": 1},
                    "status": {"replicas": 1}}),
        update("601", job("scale-g", status=RUNNING), "602", sub="status", user=KUEUE,
               groups=SA_GROUPS),
    ]
    write(os.path.join(OUT, "_in", "undecided.log"), undecided)
    case("undecided-text", "replay --policy-file ../_in/policy.yaml ../_in/undecided.log")
    case("undecided-json", "replay -o json --policy-file ../_in/policy.yaml ../_in/undecided.log")

    # -- the API server's own refusals keep the stored state -----------------------------------
    x = job("ext-x", managed_by="acme.example.com/job-controller", status=RUNNING)
    done_bad = {"startTime": "2026-11-20T09:00:05Z", "completionTime": "2026-11-20T09:05:00Z",
                "active": 0, "ready": 0, "terminating": 0, "succeeded": 3,
                "uncountedTerminatedPods": {},
                "conditions": [{"type": "Complete", "status": "True",
                                "lastProbeTime": "2026-11-20T09:05:00Z",
                                "lastTransitionTime": "2026-11-20T09:05:00Z"}]}
    done_ok = copy.deepcopy(done_bad)
    done_ok["conditions"].insert(0, {"type": "SuccessCriteriaMet", "status": "True",
                                     "lastProbeTime": "2026-11-20T09:05:00Z",
                                     "lastTransitionTime": "2026-11-20T09:05:00Z"})
    refused = [
        create(x, rv="700", user=EXT, groups=EXT_GROUPS),
        update("700", job("ext-x", managed_by="acme.example.com/job-controller",
                          status=done_bad), "0", sub="status", user=EXT, groups=EXT_GROUPS,
               code=422, reason="Invalid",
               message='Job.batch "ext-x" is invalid: status.conditions: Invalid value: '
                       '"": cannot set Complete=True condition without the '
                       'SuccessCriteriaMet=true condition'),
        update("700", job("ext-x", managed_by="acme.example.com/job-controller",
                          status=done_ok), "701", sub="status", user=EXT, groups=EXT_GROUPS),
    ]
    case("api-refused", "replay -o json refused.log", {"refused.log": refused})

    # -- the upgrade question: an older cluster's log, replayed with 1.35's rules ---------------
    old = [create(job("ext-y", managed_by="acme.example.com/job-controller"), rv="800",
                  user=EXT, groups=EXT_GROUPS),
           update("800", job("ext-y", managed_by="acme.example.com/job-controller",
                             status=RUNNING), "801", sub="status", user=EXT, groups=EXT_GROUPS),
           update("801", job("ext-y", managed_by="acme.example.com/job-controller",
                             status=done_bad), "802", sub="status", user=EXT,
                  groups=EXT_GROUPS),
           create(job("ext-z", managed_by="acme.example.com/job-controller"), rv="900",
                  user=EXT, groups=EXT_GROUPS),
           update("900", job("ext-z", managed_by="acme.example.com/job-controller",
                             status=RUNNING), "901", sub="status", user=EXT, groups=EXT_GROUPS),
           update("901", job("ext-z", managed_by="acme.example.com/job-controller",
                             status=done_ok), "902", sub="status", user=EXT, groups=EXT_GROUPS)]
    case("parity-upgrade", "replay --parity 1.35 cluster-1.33.log", {"cluster-1.33.log": old})

    # -- deletes end a history; finalizers keep it; dry runs store nothing ---------------------
    h = job("del-h", suspend=True)
    k = job("fin-k", suspend=True, finalizers=["example.com/keep"])
    c = job("coll-c", suspend=True)
    life = [
        create(h, rv="1000"),
        event("delete", ref("del-h"), code=200, resp={"kind": "Status", "apiVersion": "v1",
                                                      "metadata": {}, "status": "Success",
                                                      "details": {"name": "del-h",
                                                                  "group": "batch",
                                                                  "kind": "jobs",
                                                                  "uid": h["metadata"]["uid"]}}),
        update("1000", job("del-h", suspend=False), "1002", user=KUEUE, groups=SA_GROUPS),
        create(k, rv="1100"),
        event("delete", ref("fin-k"), code=200,
              resp=with_rv(job("fin-k", suspend=True, finalizers=["example.com/keep"],
                               deleting=True), "1101")),
        update("1101", job("fin-k", suspend=True, finalizers=None, deleting=True), "1102",
               user=KUEUE, groups=SA_GROUPS),
        create(c, rv="1200"),
        event("deletecollection", {"resource": "jobs", "namespace": "team-a",
                                   "apiGroup": "batch", "apiVersion": "v1"}, code=200,
              resp={"kind": "JobList", "apiVersion": "batch/v1", "metadata": {}, "items": []}),
        update("1200", job("coll-c", suspend=False), "1202", user=KUEUE, groups=SA_GROUPS),
        create(job("dry-m", suspend=True), rv="1300"),
        event("update", ref("dry-m"), code=200, query="?dryRun=All",
              req=with_rv(job("dry-m", managed_by="example.com/other", suspend=True), "1300"),
              resp=with_rv(job("dry-m", managed_by="example.com/other", suspend=True), "1300")),
        update("1300", job("dry-m", suspend=False), "1301", user=KUEUE, groups=SA_GROUPS),
    ]
    case("lifecycle", "replay -o json lifecycle.log", {"lifecycle.log": life})

    # -- impersonation: the webhook sees the impersonated user -----------------------------------
    imp = [create(job("imp-n"), rv="1400"),
           update("1400", job("imp-n", status=RUNNING), "1401", sub="status",
                  user="admin@example.com", groups=["system:masters-not", "system:authenticated"],
                  imp={"username": KUEUE, "groups": SA_GROUPS}),
           update("1401", job("imp-n", status=dict(RUNNING, ready=1)), "1402", sub="status",
                  user=KUEUE, groups=SA_GROUPS,
                  imp={"username": "bob@example.com", "groups": ["system:authenticated"]})]
    case("impersonation", "replay --policy-file ../_in/policy.yaml impersonation.log",
         {"impersonation.log": imp})

    # -- a user name with a newline cannot forge a text row
    case("control-bytes", "replay --policy-file ../_in/policy.yaml control.log",
         {"control.log": [create(job("ctl-r"), rv="1450"),
                          update("1450", job("ctl-r", status=RUNNING), "1451", sub="status",
                                 user="eve\n2026-11-20T09:00:00Z forged row\u0007",
                                 groups=["system:authenticated"])]})

    # -- EventList batches (webhook backend), several files in order, stdin --------------------
    p = job("list-p", suspend=True)
    batch = [create(p, rv="1500"), update("1500", job("list-p", suspend=False), "1501",
                                          user=KUEUE, groups=SA_GROUPS)]
    d2 = os.path.join(OUT, "eventlist-files-stdin")
    os.makedirs(d2, exist_ok=True)
    with open(os.path.join(d2, "batch.json"), "w") as fh:
        fh.write(json.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1",
                             "metadata": {}, "items": batch}, indent=2) + "\n")
    case("eventlist-files-stdin", "replay -o json --policy-file ../_in/policy.yaml batch.json "
                                  "lines.log -",
         {"lines.log": [update("1501", job("list-p", status=RUNNING), "1502", sub="status",
                               user=KUEUE, groups=SA_GROUPS)]},
         stdin=[update("1502", job("list-p", status=dict(RUNNING, ready=2)), "1503",
                       sub="status")])

    # -- bad input: reported with where it is, the rest still replayed -------------------------
    good = [create(job("ok-q"), rv="1600")]
    dq = os.path.join(OUT, "bad-input")
    os.makedirs(dq, exist_ok=True)
    with open(os.path.join(dq, "bad.log"), "w") as fh:
        fh.write(go_json(job("not-an-event")) + "\n")
        fh.write('{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",'
                 '"stage":"ResponseComplete","verb":"get"}\n')
        fh.write('{"kind":"Event","apiVersion":"audit.k8s.io/v1beta1","level":"Metadata",'
                 '"auditID":"y","stage":"ResponseComplete","verb":"get"}\n')
        fh.write('{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",'
                 '"auditID":"z","stage":"ResponseComplete","verb":"get","responseStatus":'
                 '{"code":"200"}}\n')
        fh.write('{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse",'
                 '"auditID":"w","stage":"ResponseComplete","verb":"create","objectRef":'
                 '{"resource":"jobs","namespace":"team-a","apiGroup":"batch","apiVersion":"v1"},'
                 '"responseStatus":{"metadata":{},"code":201},"responseObject":{"kind":"Job",'
                 '"apiVersion":"batch/v1","metadata":{"name":"broken"},"spec":{"managedBy":7}}}\n')
        fh.write('{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x"'
                 ',"stage":"ResponseComplete","verb":"get","user":{"username":"u","groups":[1]}}'
                 '\n')
        for e in good:
            fh.write(go_json(e) + "\n")
    # JSON the reader cannot split: the rest of that file is not read (a log cut mid-line)
    with open(os.path.join(dq, "cut.log"), "w") as fh:
        fh.write(go_json(update("1600", job("ok-q", status=RUNNING), "1601", sub="status")) +
                 "\n")
        fh.write('{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"cut","stage":"Resp')
    case("bad-input", "replay bad.log missing.log cut.log")
    case("bad-output", "replay -o yaml x.log")
    case("bad-fail-on", "replay --fail-on deny x.log")
    case("policy-and-values", "replay --policy-file ../_in/policy.yaml --values "
                              "../_in/values.yaml x.log")
    case("no-input", "replay --policy-file ../_in/policy.yaml")
    case("bad-parity", "replay --parity 1.34 x.log")


main()
