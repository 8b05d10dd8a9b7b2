#!/usr/bin/env python3
"""Turns every AdmissionReview of tests/cases into the audit events kube-apiserver would have
written for it, so that `jobguard replay` decides each case's write and can be compared with
`jobguard check` on the review (tests/replay/run.sh).

    gen_cases.py CASES_DIR OUT_DIR

For a CREATE: the RequestReceived event, then the ResponseComplete event of the create (201, the
object as stored). For an UPDATE: first the create of the old object (a history that starts with
it), then the write, as an update or, for every other case, a patch (200, the object as stored);
the request names the resourceVersion the old object was stored at, as a client's update does.
DELETE, CONNECT, other subresources and other kinds become the events they would be (replay skips
them; check allows them untouched). Every event is at RequestResponse level, audit.k8s.io/v1, with
the member names and order of the API's own types (k8s.io/apiserver/pkg/apis/audit/v1):
Event{kind, apiVersion, level, auditID, stage, requestURI, verb, user, impersonatedUser, sourceIPs,
userAgent, objectRef, responseStatus, requestObject, responseObject, requestReceivedTimestamp,
stageTimestamp, annotations}; ObjectReference{resource, namespace, name, uid, apiGroup, apiVersion,
resourceVersion, subresource}.

Cases are grouped by what they are decided under (policy.json and args): OUT_DIR/groups.json lists
each group's log, policy, args, and for every case its review, the write's auditID (a UUID derived
from the case name) and whether replay decides it (a write of a target kind) or skips it."""
import copy
import datetime
import json
import os
import sys
import uuid

CASES, OUT = sys.argv[1], sys.argv[2]
NS_UUID = uuid.UUID("6f1b8a7e-2d1c-4c55-9e0a-3b1f0c7d2e11")
T0 = datetime.datetime(2026, 11, 20, 9, 0, 0, tzinfo=datetime.timezone.utc)
clock = [0]


def micro_time():
    """metav1.MicroTime as Go marshals it: RFC 3339, six fractional digits, Z."""
    clock[0] += 1
    t = T0 + datetime.timedelta(milliseconds=137 * clock[0])
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def go_json(v):
    """JSON as Go's encoding/json writes it: UTF-8 as is, <, >, & and U+2028/9 escaped."""
    s = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    for c, e in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                 ("\u2029", "\\u2029")):
        s = s.replace(c, e)
    return s


def audit_id(case, what):
    return str(uuid.uuid5(NS_UUID, case + "/" + what))


def plural(kind):
    return kind.lower() + "s"


def request_uri(group, version, resource, ns, name, sub, dry_run):
    base = "/api/" + version if not group else "/apis/%s/%s" % (group, version)
    if ns:
        base += "/namespaces/" + ns
    base += "/" + resource
    if name:
        base += "/" + name
    if sub:
        base += "/" + sub
    return base + ("?dryRun=All" if dry_run else "")


def event(case, what, stage, verb, req, sub, obj_ref_extra, code, request_object,
          response_object, ts, user=None):
    """One audit/v1 Event, members in the order of the Go struct."""
    g = req.get("resource") or {}
    kind = req.get("kind") or {}
    group = g.get("group", kind.get("group", ""))
    version = g.get("version", kind.get("version", "v1"))
    resource = g.get("resource") or plural(kind.get("kind", "job"))
    ns = req.get("namespace", "")
    name = req.get("name", "") if verb != "create" else ""
    if verb != "patch" and meta_of(request_object) is not None:
        # kube-apiserver fills the reference from the decoded request object (LogRequestObject;
        # a patch is logged as the patch, LogRequestPatch, and fills nothing)
        obj_ref_extra = dict(obj_ref_extra)
        for k in ("uid", "resourceVersion"):
            obj_ref_extra.setdefault(k, meta_of(request_object).get(k))
    ui = user if user is not None else req.get("userInfo") or {}
    ev = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse",
          "auditID": audit_id(case, what), "stage": stage,
          "requestURI": request_uri(group, version, resource, ns, name, sub,
                                    req.get("dryRun") is True),
          "verb": verb}
    u = {}
    if ui.get("username"):
        u["username"] = ui["username"]
    if ui.get("uid"):
        u["uid"] = ui["uid"]
    if ui.get("groups"):
        u["groups"] = ui["groups"]
    ev["user"] = u
    ev["sourceIPs"] = ["10.0.0.12"]
    ev["userAgent"] = "jobguard-cases/1.0"
    ref = {"resource": resource}
    if ns:
        ref["namespace"] = ns
    objname = name or (meta_of(request_object) or {}).get("name", "")
    if objname:
        ref["name"] = objname
    for k, v in obj_ref_extra.items():
        if v:
            ref[k] = v
    if group:
        ref["apiGroup"] = group
    ref["apiVersion"] = version
    if sub:
        ref["subresource"] = sub
    order = ["resource", "namespace", "name", "uid", "apiGroup", "apiVersion", "resourceVersion",
             "subresource"]
    ev["objectRef"] = {k: ref[k] for k in order if k in ref}
    if stage == "ResponseComplete":
        ev["responseStatus"] = {"metadata": {}, "code": code}
        if request_object is not None:
            ev["requestObject"] = request_object
        if response_object is not None:
            ev["responseObject"] = response_object
    ev["requestReceivedTimestamp"] = ts
    ev["stageTimestamp"] = ts if stage == "RequestReceived" else micro_time()
    if stage == "ResponseComplete":
        ev["annotations"] = {"authorization.k8s.io/decision": "allow",
                             "authorization.k8s.io/reason": ""}
    return ev


def meta_of(obj):
    return obj.get("metadata") if isinstance(obj, dict) and isinstance(obj.get("metadata"),
                                                                       dict) else None


def stored(obj, rv):
    """The object as the API server stores and answers it: with its resourceVersion."""
    o = copy.deepcopy(obj)
    m = meta_of(o)
    if m is not None:
        m["resourceVersion"] = str(rv)
    return o


def events_for(case, review, index):
    """The case's events and whether replay decides the write (a write of a target kind)."""
    req = review["request"]
    op = req.get("operation")
    sub = req.get("subResource", "")
    out = []
    rv = 1000 + 10 * index
    ts = micro_time()
    if op == "CREATE":
        obj = req.get("object")
        out.append(event(case, "write", "RequestReceived", "create", req, sub, {}, 0, None, None,
                         ts))
        out.append(event(case, "write", "ResponseComplete", "create", req, sub,
                         {"uid": (meta_of(obj) or {}).get("uid")}, 201, obj, stored(obj, rv), ts))
        return out
    if op == "UPDATE":
        old, new = req.get("oldObject"), req.get("object")
        creator = {"username": "system:serviceaccount:kube-system:replay-history",
                   "groups": ["system:serviceaccounts", "system:authenticated"]}
        create_req = dict(req, subResource="", dryRun=False)
        ts0 = micro_time()
        out.append(event(case, "create-old", "ResponseComplete", "create", create_req, "",
                         {"uid": (meta_of(old) or {}).get("uid")}, 201, old, stored(old, rv),
                         ts0, creator))
        patch = index % 2 == 1 and sub in ("", "status")
        verb = "patch" if patch else "update"
        sent = stored(new, rv)  # an update names the version it read
        out.append(event(case, "write", "RequestReceived", verb, req, sub, {}, 0, None, None, ts))
        extra = {} if patch else {"uid": (meta_of(new) or {}).get("uid"),
                                  "resourceVersion": str(rv) if meta_of(new) is not None else ""}
        response = stored(new, rv + 1)
        if sub not in ("", "status"):  # e.g. scale: the answer is that subresource's object
            response = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                        "metadata": {"name": req.get("name", ""), "namespace": req.get(
                            "namespace", "")}, "spec": {}, "status": {"replicas": 0}}
        out.append(event(case, "write", "ResponseComplete", verb, req, sub, extra, 200,
                         new if patch else sent, response, ts))
        return out
    if op == "DELETE":
        out.append(event(case, "write", "ResponseComplete", "delete", req, sub, {}, 200, None,
                         {"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success"}, ts))
        return out
    # CONNECT: a read of a subresource as far as the audit log says
    out.append(event(case, "write", "ResponseComplete", "get", req, sub or "proxy", {}, 200, None,
                     None, ts))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    groups = {}
    for index, name in enumerate(sorted(os.listdir(CASES))):
        d = os.path.join(CASES, name)
        if not os.path.isfile(os.path.join(d, "review.json")):
            continue
        with open(os.path.join(d, "review.json")) as fh:
            review = json.load(fh)
        policy = os.path.join(d, "policy.json")
        policy_text = open(policy).read() if os.path.isfile(policy) else ""
        args = open(os.path.join(d, "args")).read().split() if os.path.isfile(
            os.path.join(d, "args")) else []
        key = (policy_text, " ".join(args))
        g = groups.setdefault(key, {"policy": policy if policy_text else None, "args": args,
                                    "events": [], "cases": []})
        g["events"] += events_for(name, review, index)
        g["cases"].append({"case": name, "review": os.path.join(d, "review.json"),
                           "auditID": audit_id(name, "write")})
    manifest = []
    for i, g in enumerate(groups.values()):
        log = os.path.join(OUT, "group-%03d.log" % i)
        with open(log, "w") as fh:
            for ev in g["events"]:
                fh.write(go_json(ev) + "\n")
        manifest.append({"log": log, "policy": g["policy"], "args": g["args"],
                         "cases": g["cases"]})
    with open(os.path.join(OUT, "groups.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)


main()
