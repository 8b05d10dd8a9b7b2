#!/usr/bin/env python3
"""Inputs for bench/scan/run.sh: what `kubectl get ... -A -o json|yaml` prints for a large batch
cluster, and a folder of small manifests as kept in Git.

  gen.py list-json MB OUT      a List of Jobs and JobSets, kubectl's 4-space JSON, about MB MB
  gen.py list-yaml MB OUT      the same List as kubectl -o yaml prints it (items before kind)
  gen.py folder N OUT          N small manifests (Job, JobSet, PyTorchJob), one YAML file each

Objects look like what the API server stores: managedFields, a pod template with containers,
env, volumes and resources, status. One object in 200 carries a managedBy that breaks the format
rule, one in 50 a controller outside the example policy's allow-list, so that the scan reports.
Deterministic: the same arguments give the same bytes."""
import json
import random
import sys


def job(i, rng):
    ns = "team-%02d" % (i % 37)
    name = "train-%06d" % i
    mb = None
    r = i % 200
    if r == 0:
        mb = "Kueue.x-k8s.io/MultiKueue"  # uppercase: breaks the format rule
    elif i % 50 == 1:
        mb = "example.com/rogue"  # not allowed by the bench policy
    elif i % 3 == 0:
        mb = "kueue.x-k8s.io/multikueue"
    env = [{"name": "VAR_%d" % k, "value": "value-%d-%d" % (i, k)} for k in range(8)]
    container = {
        "name": "trainer",
        "image": "registry.example.com/ml/trainer:v%d.%d" % (i % 7, i % 13),
        "command": ["python", "-m", "train", "--epochs=%d" % (i % 90 + 10)],
        "env": env,
        "resources": {"limits": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                      "requests": {"cpu": "2", "memory": "8Gi"}},
        "volumeMounts": [{"mountPath": "/data", "name": "data"}, {"mountPath": "/cache", "name": "cache"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }
    spec = {
        "backoffLimit": 6,
        "completionMode": "Indexed" if i % 2 else "NonIndexed",
        "completions": 4,
        "parallelism": 4,
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "uid-%08x" % i}},
        "template": {
            "metadata": {"labels": {"app": "trainer", "batch.kubernetes.io/job-name": name,
                                    "kueue.x-k8s.io/queue-name": "user-queue"}},
            "spec": {
                "containers": [container],
                "restartPolicy": "Never",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "dataset-%d" % (i % 11)}},
                            {"name": "cache", "emptyDir": {"sizeLimit": "20Gi"}}],
            },
        },
    }
    if mb:
        spec["managedBy"] = mb
    meta = {
        "creationTimestamp": "2026-11-%02dT%02d:%02d:00Z" % (i % 28 + 1, i % 24, i % 60),
        "generation": 1,
        "labels": {"kueue.x-k8s.io/queue-name": "user-queue", "team": ns},
        "managedFields": [{
            "apiVersion": "batch/v1", "fieldsType": "FieldsV1", "manager": "kubectl-client-side-apply",
            "operation": "Update", "time": "2026-11-20T10:00:00Z",
            "fieldsV1": {"f:spec": {"f:backoffLimit": {}, "f:completionMode": {}, "f:completions": {},
                                    "f:parallelism": {}, "f:template": {"f:spec": {"f:containers": {
                                        "k:{\"name\":\"trainer\"}": {".": {}, "f:command": {}, "f:image": {},
                                                                      "f:name": {}, "f:resources": {}}}}}}},
        }],
        "name": name,
        "namespace": ns,
        "resourceVersion": str(100000 + i),
        "uid": "%08x-1111-2222-3333-%012x" % (i, i),
    }
    status = {"active": 4, "ready": 4, "startTime": "2026-11-20T10:00:05Z", "terminating": 0,
              "uncountedTerminatedPods": {}}
    if i % 2:
        status["completedIndexes"] = "0-1"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec, "status": status}


def jobset(i, rng):
    j = job(i, rng)
    mb = j["spec"].get("managedBy")
    spec = {"replicatedJobs": [{"name": "workers", "replicas": 2,
                                "template": {"spec": {k: j["spec"][k] for k in ("completions", "parallelism",
                                                                                 "backoffLimit", "template")}}}],
            "network": {"enableDNSHostnames": True}, "suspend": False}
    if mb:
        spec["managedBy"] = mb
    meta = dict(j["metadata"])
    meta["managedFields"] = [dict(meta["managedFields"][0], apiVersion="jobset.x-k8s.io/v1alpha2")]
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta, "spec": spec,
            "status": {"replicatedJobsStatus": [{"name": "workers", "active": 2, "ready": 2}]}}


def pytorchjob(i, rng):
    j = job(i, rng)
    spec = {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": j["spec"]["template"]}}}
    if "managedBy" in j["spec"]:
        spec["runPolicy"] = {"managedBy": j["spec"]["managedBy"]}
    meta = {k: v for k, v in j["metadata"].items() if k not in ("managedFields", "resourceVersion", "uid",
                                                                 "creationTimestamp", "generation")}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta, "spec": spec}


def item(i, rng):
    return jobset(i, rng) if i % 4 == 3 else job(i, rng)


def yaml_scalar(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    s = str(v)
    plain = s and s[0].isalpha() and all(c.isalnum() or c in "-_./" for c in s) and \
        s.lower() not in ("true", "false", "yes", "no", "on", "off", "null", "y", "n")
    return s if plain else json.dumps(s)


def yaml_lines(v, indent, out):
    """kubectl -o yaml's block style: 2-space maps, sequences of maps as '- key: ...'."""
    pad = " " * indent
    if isinstance(v, dict):
        if not v:
            return False
        for k, x in v.items():
            key = yaml_scalar(k)
            if isinstance(x, (dict, list)) and x:
                out.append("%s%s:" % (pad, key))
                yaml_lines(x, indent + 2 if isinstance(x, dict) else indent, out)
            else:
                out.append("%s%s: %s" % (pad, key, "{}" if x == {} else "[]" if x == [] else yaml_scalar(x)))
        return True
    for x in v:
        if isinstance(x, dict) and x:
            sub = []
            yaml_lines(x, indent + 2, sub)
            out.append("%s- %s" % (pad, sub[0][indent + 2:]))
            out.extend(sub[1:])
        elif isinstance(x, list) and x:
            sub = []
            yaml_lines(x, indent + 2, sub)
            out.append("%s- %s" % (pad, sub[0][indent + 2:]))
            out.extend(sub[1:])
        else:
            out.append("%s- %s" % (pad, "{}" if x == {} else "[]" if x == [] else yaml_scalar(x)))
    return True


def to_yaml(obj, indent=0):
    out = []
    yaml_lines(obj, indent, out)
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("list-json", "list-yaml", "folder"):
        sys.exit(__doc__)
    what, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rng = random.Random(1)
    if what == "folder":
        import os
        os.makedirs(out, exist_ok=True)
        for i in range(n):
            o = (job, jobset, pytorchjob)[i % 3](i, rng)
            o["metadata"].pop("managedFields", None)
            o.pop("status", None)
            for k in ("creationTimestamp", "generation", "resourceVersion", "uid", "namespace"):
                o["metadata"].pop(k, None)
            with open("%s/%06d-%s.yaml" % (out, i, o["kind"].lower()), "w") as f:
                f.write(to_yaml(o))
        return
    limit = n << 20
    size = 0
    with open(out, "w") as f:
        if what == "list-json":
            f.write('{\n    "apiVersion": "v1",\n    "items": [\n')
            i = 0
            while size < limit:
                text = json.dumps(item(i, rng), indent=4)
                text = "\n".join("        " + line for line in text.split("\n"))
                f.write((",\n" if i else "") + text)
                size += len(text) + 2
                i += 1
            f.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
        else:
            f.write("apiVersion: v1\nitems:\n")
            i = 0
            while size < limit:
                text = to_yaml(item(i, rng), 2)
                text = "- " + text[2:]
                f.write(text)
                size += len(text)
                i += 1
            f.write('kind: List\nmetadata:\n  resourceVersion: ""\n')
    print("%s: %d objects, %.1f MB" % (out, i, size / 1e6), file=sys.stderr)


if __name__ == "__main__":
    main()
