#!/usr/bin/env python3
"""skypilot_task.py - reads a SkyPilot task YAML for test_export.sh.

  skypilot_task.py schema SCHEMA TASK  validates TASK against the JSON
                                       schema SCHEMA (python3 jsonschema)
  skypilot_task.py sky TASK            validates TASK with SkyPilot's own
                                       validator and schemas, the checks
                                       sky.Task.from_yaml makes before it
                                       consults the clouds' catalogs
  skypilot_task.py get TASK KEY...     prints the value at KEY... as JSON
  skypilot_task.py run TASK            prints the run: script

Exit status: 0 valid (or printed), 1 invalid (why on stderr), 77 a module
it needs is not importable (why on stdout).  It does not launch anything.
"""
import json
import sys


def load(path):
    try:
        import yaml
    except ImportError:
        print("python3 has no yaml module")
        sys.exit(77)
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def schema_check(schema_path, doc):
    """0 when the YAML document doc (loaded) is valid against the JSON
    schema at schema_path, 1 when not (why on stderr), 77 without
    jsonschema (why on stdout).  k8s_job.py uses it too."""
    try:
        import jsonschema
    except ImportError:
        print("python3 has no jsonschema module")
        return 77
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        print("invalid: %s at %s" % (e.message, "/".join(map(str, e.path))), file=sys.stderr)
        return 1
    return 0


def main(argv):
    mode = argv[1]
    if mode == "schema":
        return schema_check(argv[2], load(argv[3]))
    if mode == "sky":
        try:
            from sky.utils import common_utils, schemas
        except ImportError as e:
            print("SkyPilot is not importable (%s)" % e)
            return 77
        task = load(argv[2])
        try:
            # as Task.from_yaml_config, then Resources.from_yaml_config
            common_utils.validate_schema(task, schemas.get_task_schema(),
                                         "Invalid task YAML: ")
            common_utils.validate_schema(task.get("resources", {}),
                                         schemas.get_resources_schema(),
                                         "Invalid resources YAML: ")
        except ValueError as e:
            print(str(e), file=sys.stderr)
            return 1
        return 0
    task = load(argv[2])
    if mode == "get":
        v = task
        for k in argv[3:]:
            v = v[k]
        print(json.dumps(v))
        return 0
    if mode == "run":
        sys.stdout.write(task["run"])
        return 0
    print("unknown mode " + mode, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
