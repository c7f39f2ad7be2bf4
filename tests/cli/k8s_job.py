#!/usr/bin/env python3
"""k8s_job.py - reads a Kubeflow PyTorchJob or TrainJob manifest for
test_export.sh.

  k8s_job.py check SCHEMA JOB   validates JOB against the JSON schema
                                SCHEMA (python3 jsonschema), then makes
                                the checks the CRD's CEL rules and the
                                admission webhooks make beyond it
  k8s_job.py argv JOB           prints what the first node runs, one word
                                a line: the container's command and args
                                with every $(NAME) expanded from its env
                                as the kubelet does, the nodes, GPUs per
                                node and first node as torchrun gets them
                                (from the operator's PET_* variables)
  k8s_job.py env JOB NAME       prints the value of the trainer's NAME

The rules beyond the schema, as kubeflow/trainer has them:
  PyTorchJob (v1.9.4, pkg/webhooks/pytorch/pytorchjob_webhook.go): the
    name a DNS-1035 label; replica types Master and Worker only; Master
    replicas 1, Worker at least 1; each has a container named "pytorch"
    with an image.
  TrainJob (v2.3.0, the CRD's x-kubernetes-validations and
    pkg/runtime/framework/plugins/torch/torch.go): the name an RFC 1035
    label of at most 63 characters; no PET_NNODES, PET_NPROC_PER_NODE,
    PET_NODE_RANK, PET_MASTER_ADDR or PET_MASTER_PORT in trainer.env
    (the torch runtime sets them).

Exit status: 0 valid (or printed), 1 invalid (why on stderr), 77 a module
it needs is not importable (why on stdout).  It does not apply anything.
"""
import json
import re
import sys

from skypilot_task import load, schema_check

LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
PET = {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
       "PET_MASTER_PORT"}


def rules(job):
    """The webhook and CEL checks: a list of what is wrong."""
    bad = []
    name = job["metadata"]["name"]
    if not LABEL.match(name) or len(name) > 63:
        bad.append("metadata.name %r is not an RFC 1035 label of at most 63 characters" % name)
    if job["kind"] == "PyTorchJob":
        for role, spec in job["spec"]["pytorchReplicaSpecs"].items():
            if role not in ("Master", "Worker"):
                bad.append("pytorchReplicaSpecs.%s: not Master or Worker" % role)
            n = spec.get("replicas")
            if role == "Master" and n != 1:
                bad.append("pytorchReplicaSpecs.Master.replicas: must be 1")
            if role == "Worker" and n is not None and n < 1:
                bad.append("pytorchReplicaSpecs.Worker.replicas: must be at least 1")
            cs = spec["template"]["spec"]["containers"]
            if not any(c["name"] == "pytorch" for c in cs):
                bad.append("pytorchReplicaSpecs.%s: no container named pytorch" % role)
            bad += ["pytorchReplicaSpecs.%s: container %s has no image" % (role, c["name"])
                    for c in cs if not c.get("image")]
    else:
        env = {e["name"] for e in job["spec"].get("trainer", {}).get("env", [])}
        if env & PET:
            bad.append("trainer.env: reserved %s" % sorted(env & PET))
    return bad


def trainer(job):
    """(container-like dict, nodes, GPUs per node) of the first node."""
    if job["kind"] == "PyTorchJob":
        spec = job["spec"]["pytorchReplicaSpecs"]
        c = next(c for c in spec["Master"]["template"]["spec"]["containers"]
                 if c["name"] == "pytorch")
        return c, sum(r["replicas"] for r in spec.values()), int(job["spec"]["nprocPerNode"])
    t = job["spec"]["trainer"]
    return t, t["numNodes"], t["numProcPerNode"]


def argv(job):
    c, nodes, gpn = trainer(job)
    env = {e["name"]: e.get("value", "") for e in c.get("env", [])}
    expand = lambda w: re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], w)
    cmd, args = [expand(w) for w in c["command"]], [expand(w) for w in c.get("args", [])]
    if cmd[0] == "bash":
        # bash -c SCRIPT torchrun ARGS: the script writes the config the
        # arguments name, then runs torchrun with them
        assert cmd[1] == "-c" and cmd[3] == "torchrun", cmd
        assert 'exec torchrun "$@"' in cmd[2], cmd[2]
        conf = next(w.split("=", 1)[1] if "=" in w else args[i + 1]
                    for i, w in enumerate(args) if w.split("=")[0] == "--deepspeed_config")
        assert '"$GPUPLAN_DS_CONFIG" > ' + conf in cmd[2], (conf, cmd[2])
        json.loads(env["GPUPLAN_DS_CONFIG"])
        cmd = ["torchrun"]
    assert cmd == ["torchrun"], cmd
    # the first node's address and port, which the operators hand torchrun
    # in PET_MASTER_ADDR and PET_MASTER_PORT (pkg/controller.v1/pytorch/
    # master.go; the torch plugin), read as these flags
    name = job["metadata"]["name"]
    if job["kind"] == "TrainJob":
        # and the torch runtime's PET_NNODES and PET_NPROC_PER_NODE
        cmd += ["--nnodes=%d" % nodes, "--nproc-per-node=%d" % gpn,
                "--master-addr=%s-node-0-0.%s" % (name, name), "--master-port=29500"]
    else:
        cmd += ["--master-addr=%s-master-0" % name, "--master-port=23456"]
        if "--nnodes=%d" % nodes not in args or "--nproc-per-node=%d" % gpn not in args:
            raise AssertionError("replicas %d and nprocPerNode %d differ from torchrun's %s"
                                 % (nodes, gpn, args[:2]))
    limits = c["resources"]["limits"] if job["kind"] == "PyTorchJob" else \
        c["resourcesPerNode"]["limits"]
    gpus = [int(v) for k, v in limits.items() if k.endswith("/gpu")]
    assert gpus == [gpn], "GPUs per node %s, processes %d" % (limits, gpn)
    return cmd + args


def main(argv_):
    mode = argv_[1]
    if mode == "check":
        job = load(argv_[3])
        rc = schema_check(argv_[2], job)
        if rc:
            return rc
        bad = rules(job)
        if bad:
            print("invalid: " + "; ".join(bad), file=sys.stderr)
            return 1
        return 0
    job = load(argv_[2])
    if mode == "argv":
        try:
            print("\n".join(argv(job)))
        except (AssertionError, KeyError, StopIteration) as e:
            print("unreadable job: %r" % (e,), file=sys.stderr)
            return 1
        return 0
    if mode == "env":
        c = trainer(job)[0]
        print(next(e.get("value", "") for e in c["env"] if e["name"] == argv_[3]))
        return 0
    print("unknown mode " + mode, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
